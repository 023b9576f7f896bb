/**
 * Generated Python-backend test models (config.pbtxt + 1/model.py) for the embedded server's Python
 * backend tests, and for other front ends that need one (e.g. a decoupled model for gRPC streaming:
 * {@link decoupledPythonModel}). Each generator returns the model's files; {@link writePythonModels}
 * writes them under a repository directory.
 * @packageDocumentation
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** A generated model: its name and its files (paths relative to the model directory). */
export interface GeneratedPythonModel {
  readonly name: string;
  readonly files: Readonly<Record<string, string>>;
}

/** Writes `models` into `repository` (one directory each). */
export async function writePythonModels(
  repository: string,
  models: readonly GeneratedPythonModel[],
): Promise<void> {
  for (const model of models) {
    for (const [path, content] of Object.entries(model.files)) {
      const file = join(repository, model.name, path);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, content);
    }
  }
}

function model(name: string, config: string | undefined, py: string): GeneratedPythonModel {
  return {
    name,
    files: {
      ...(config === undefined ? {} : { 'config.pbtxt': config }),
      '1/model.py': py,
    },
  };
}

/** One tensor of a generated config.pbtxt: name, data type (without `TYPE_`) and dims. */
type Tensor = readonly [name: string, type: string, dims: string];

/** What {@link pythonModel} needs: the config's variable parts and the model.py's own code. */
interface PythonModelSpec {
  readonly maxBatchSize?: number;
  readonly decoupled?: boolean;
  readonly inputs: readonly Tensor[];
  readonly outputs: readonly Tensor[];
  /** config.pbtxt lines after the instance group (each ending in a newline). */
  readonly extraConfig?: string;
  /** Standard-library modules imported before numpy and pb_utils. */
  readonly imports?: readonly string[];
  /** Whether model.py imports numpy as np (default true). */
  readonly numpy?: boolean;
  /** Module-level code between the imports and the class. */
  readonly prelude?: string;
  /** The body of `class TritonPythonModel:` (its methods, indented four spaces). */
  readonly methods: string;
}

function tensors(kind: 'input' | 'output', list: readonly Tensor[]): string {
  const lines = list.map(
    ([name, type, dims]) => `{ name: "${name}" data_type: TYPE_${type} dims: [ ${dims} ] }`,
  );
  return lines.length === 1 ? `${kind} [ ${lines[0]} ]\n` : `${kind} [\n  ${lines.join(',\n  ')}\n]\n`;
}

/** A python-backend config.pbtxt with one CPU instance. */
function pythonConfig(name: string, spec: Omit<PythonModelSpec, 'methods'>): string {
  return (
    `name: "${name}"\nbackend: "python"\nmax_batch_size: ${spec.maxBatchSize ?? 0}\n` +
    (spec.decoupled === true ? 'model_transaction_policy { decoupled: true }\n' : '') +
    tensors('input', spec.inputs) +
    tensors('output', spec.outputs) +
    'instance_group [ { kind: KIND_CPU count: 1 } ]\n' +
    (spec.extraConfig ?? '')
  );
}

/** A generated Python model: config.pbtxt plus a model.py with the usual imports and class. */
function pythonModel(name: string, spec: PythonModelSpec): GeneratedPythonModel {
  const stdlib = spec.imports ?? [];
  const source =
    (stdlib.length > 0 ? `${stdlib.map((m) => `import ${m}`).join('\n')}\n\n` : '') +
    (spec.numpy === false ? '' : 'import numpy as np\n') +
    'import triton_python_backend_utils as pb_utils\n\n\n' +
    (spec.prelude === undefined ? '' : `${spec.prelude}\n\n`) +
    `class TritonPythonModel:\n${spec.methods}`;
  return model(name, pythonConfig(name, spec), source);
}

/**
 * `name`: FP32 INPUT0, INPUT1 [4] → OUTPUT0 = sum, OUTPUT1 = difference (max_batch_size 0). Its
 * `initialize` logs `<name> initialized (<instance kind> <instance name>)` through `pb_utils.Logger`
 * and prints the args keys to stdout; OUTPUT1 is only computed when requested; the request's
 * id, correlation id, flags and parameters JSON are echoed in the BYTES output `INFO`
 * ("<id>|<correlation id>|<flags>|<parameters>").
 */
export function addSubPythonModel(name = 'py_add'): GeneratedPythonModel {
  return pythonModel(name, {
    inputs: [
      ['INPUT0', 'FP32', '4'],
      ['INPUT1', 'FP32', '4'],
    ],
    outputs: [
      ['OUTPUT0', 'FP32', '4'],
      ['OUTPUT1', 'FP32', '4'],
      ['INFO', 'STRING', '1'],
    ],
    imports: ['json'],
    methods: `    def initialize(self, args):
        self.config = json.loads(args["model_config"])
        print("args keys: " + ",".join(sorted(args.keys())), flush=True)
        pb_utils.Logger.log_info(
            f"{args['model_name']} initialized ({args['model_instance_kind']} {args['model_instance_name']})"
        )
        pb_utils.Logger.log_warn("a warning from " + args["model_name"])
        out = pb_utils.get_output_config_by_name(self.config, "OUTPUT0")
        self.out_dtype = pb_utils.triton_string_to_numpy(out["data_type"])

    def execute(self, requests):
        responses = []
        for request in requests:
            a = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            b = pb_utils.get_input_tensor_by_name(request, "INPUT1").as_numpy()
            wanted = request.requested_output_names()
            outputs = [pb_utils.Tensor("OUTPUT0", (a + b).astype(self.out_dtype))]
            if "OUTPUT1" in wanted:
                outputs.append(pb_utils.Tensor("OUTPUT1", (a - b).astype(self.out_dtype)))
            info = f"{request.request_id()}|{request.correlation_id()}|{request.flags()}|{request.parameters()}"
            outputs.append(pb_utils.Tensor("INFO", np.array([info.encode()], dtype=np.object_)))
            responses.append(pb_utils.InferenceResponse(output_tensors=outputs))
        return responses
`,
  });
}

/**
 * `name`: FP32 INPUT0 [1] (max_batch_size 8, dynamic batching with a 300 ms queue delay) →
 * OUTPUT0 = 2 × INPUT0 and REQUESTS (INT32 [1]) = how many requests the execute() call got. A row
 * of -1 answers that request with a TritonError (INVALID_ARG, "negative input in request <id>");
 * 999 raises from execute (failing the whole batch); 7 answers OUTPUT0 as INT32 (a datatype the
 * config does not declare); 8 answers an undeclared output; 9 returns one response too few.
 */
export function batchingPythonModel(name = 'py_batch'): GeneratedPythonModel {
  return pythonModel(name, {
    maxBatchSize: 8,
    inputs: [['INPUT0', 'FP32', '1']],
    outputs: [
      ['OUTPUT0', 'FP32', '1'],
      ['REQUESTS', 'INT32', '1'],
    ],
    extraConfig: 'dynamic_batching { max_queue_delay_microseconds: 300000 }\n',
    methods: `    def execute(self, requests):
        values = [pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy() for r in requests]
        if any((v == 999).any() for v in values):
            raise ValueError("execute refused input 999")
        responses = []
        for request, x in zip(requests, values):
            count = np.full((x.shape[0], 1), len(requests), dtype=np.int32)
            if (x == -1).any():
                responses.append(
                    pb_utils.InferenceResponse(
                        error=pb_utils.TritonError(
                            f"negative input in request {request.request_id()}", pb_utils.TritonError.INVALID_ARG
                        )
                    )
                )
            elif (x == 7).any():
                responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", x.astype(np.int32))]))
            elif (x == 8).any():
                responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("SURPRISE", x)]))
            else:
                responses.append(
                    pb_utils.InferenceResponse(
                        output_tensors=[pb_utils.Tensor("OUTPUT0", x * 2), pb_utils.Tensor("REQUESTS", count)]
                    )
                )
        if any((v == 9).any() for v in values):
            responses = responses[:-1]
        return responses
`,
  });
}

/**
 * `name`: INT32 INPUT0 [1] (max_batch_size 0) → PID (INT32 [1]) = the stub's process id. 1 makes
 * the stub exit (`os._exit(3)`) inside execute; 2 makes execute sleep for 60 s (a hang).
 */
export function faultPythonModel(name = 'py_fault'): GeneratedPythonModel {
  return pythonModel(name, {
    inputs: [['INPUT0', 'INT32', '1']],
    outputs: [['PID', 'INT32', '1']],
    imports: ['os', 'time'],
    methods: `    def execute(self, requests):
        responses = []
        for request in requests:
            x = int(pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()[0])
            if x == 1:
                os._exit(3)
            if x == 2:
                time.sleep(60)
            responses.append(
                pb_utils.InferenceResponse([pb_utils.Tensor("PID", np.array([os.getpid()], dtype=np.int32))])
            )
        return responses
`,
  });
}

/** Variants of {@link decoupledPythonModel}. */
export interface DecoupledPythonModelOptions {
  /** Seconds the model waits before sending each response (default: none). */
  readonly responseDelaySeconds?: number;
  /**
   * An n that makes the model send one response (OUT = 0), wait 0.2 s and then kill its own stub
   * process (`os._exit(3)`): a crash in the middle of a request (default: none).
   */
  readonly crashOn?: number;
}

/**
 * A decoupled model (`model_transaction_policy { decoupled: true }`): INT32 IN [1] = n → n responses,
 * response i carrying OUT (INT32 [1]) = i, sent from a thread after execute returned, then a final
 * flag without a response. n = -1 sends one error response (INVALID_ARG "n must be >= 0") and the
 * final flag with it; n = 0 sends only the final flag. `options` paces the responses or makes one
 * n crash the stub.
 */
export function decoupledPythonModel(
  name = 'py_decoupled',
  options: DecoupledPythonModelOptions = {},
): GeneratedPythonModel {
  const { responseDelaySeconds, crashOn } = options;
  const imports = [
    ...(crashOn === undefined ? [] : ['os']),
    'threading',
    ...(crashOn === undefined && responseDelaySeconds === undefined ? [] : ['time']),
  ];
  const crash =
    crashOn === undefined
      ? ''
      : `    if n == ${crashOn}:
        sender.send(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUT", np.array([0], dtype=np.int32))]))
        time.sleep(0.2)
        os._exit(3)
`;
  const delay = responseDelaySeconds === undefined ? '' : `        time.sleep(${responseDelaySeconds})\n`;
  return pythonModel(name, {
    decoupled: true,
    inputs: [['IN', 'INT32', '1']],
    outputs: [['OUT', 'INT32', '1']],
    imports,
    prelude: `def respond(sender, n):
    if n < 0:
        error = pb_utils.TritonError("n must be >= 0", pb_utils.TritonError.INVALID_ARG)
        sender.send(pb_utils.InferenceResponse(error=error), flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return
${crash}    for i in range(n):
${delay}        out = pb_utils.Tensor("OUT", np.array([i], dtype=np.int32))
        sender.send(pb_utils.InferenceResponse(output_tensors=[out]))
    sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
`,
    methods: `    def execute(self, requests):
        for request in requests:
            n = int(pb_utils.get_input_tensor_by_name(request, "IN").as_numpy()[0])
            threading.Thread(target=respond, args=(request.get_response_sender(), n)).start()
        return None
`,
  });
}

/**
 * `name`: a decoupled model that streams the words of BYTES `text_input` [1], one response per
 * word: `text_output` (BYTES [1]) = the word and `index` (INT32 [1]) = its position, then the final
 * flag — the generate extension's usual shape (`generate_stream` sends one event per word). Request
 * parameters steer it: `repeat` (the words that many times), `pad` (that many `x` after each word),
 * `delay` (seconds before each word), `fail_after` (after that many words, an error response
 * "failed after <k> words" flagged final), `wait_cancel` (after the words, wait up to 10 s for
 * `request.is_cancelled()`, then log `<name>: cancelled=<bool>`). A request found cancelled before a
 * word logs `<name>: cancelled at word <i>` and ends.
 */
export function wordStreamPythonModel(name = 'py_word_stream'): GeneratedPythonModel {
  return pythonModel(name, {
    decoupled: true,
    inputs: [['text_input', 'STRING', '1']],
    outputs: [
      ['text_output', 'STRING', '1'],
      ['index', 'INT32', '1'],
    ],
    imports: ['json', 'threading', 'time'],
    prelude: `FINAL = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL


def stream(request, sender, text, params):
    words = text.split() * int(params.get("repeat", 1))
    pad = "x" * int(params.get("pad", 0))
    fail_after = params.get("fail_after")
    delay = float(params.get("delay", 0))
    for i, word in enumerate(words):
        if fail_after is not None and i == int(fail_after):
            error = pb_utils.TritonError(f"failed after {i} words")
            sender.send(pb_utils.InferenceResponse(error=error), flags=FINAL)
            return
        if delay > 0:
            time.sleep(delay)
        if request.is_cancelled():
            pb_utils.Logger.log_info(f"${name}: cancelled at word {i}")
            sender.send(flags=FINAL)
            return
        out = [
            pb_utils.Tensor("text_output", np.array([(word + pad).encode()], dtype=np.object_)),
            pb_utils.Tensor("index", np.array([i], dtype=np.int32)),
        ]
        sender.send(pb_utils.InferenceResponse(output_tensors=out))
    if params.get("wait_cancel"):
        deadline = time.monotonic() + 10
        while not request.is_cancelled() and time.monotonic() < deadline:
            time.sleep(0.02)
        pb_utils.Logger.log_info(f"${name}: cancelled={request.is_cancelled()}")
    sender.send(flags=FINAL)
`,
    methods: `    def execute(self, requests):
        for request in requests:
            text = pb_utils.get_input_tensor_by_name(request, "text_input").as_numpy().reshape(-1)[0]
            text = text.decode() if isinstance(text, bytes) else str(text)
            params = json.loads(request.parameters() or "{}")
            threading.Thread(target=stream, args=(request, request.get_response_sender(), text, params)).start()
        return None
`,
  });
}

/**
 * `name` (BLS, `async def execute`): FP32 INPUT0 [-1] and BYTES TARGET [1] (a model name) → the
 * target model's OUTPUT0 for INPUT0 via \`async_exec\`, plus the same via \`exec\` in SYNC_OUTPUT;
 * when the called model answers with an error, this model answers with an error of the same code
 * whose message is "BLS failed: <the error's message>".
 */
export function blsPythonModel(name = 'py_bls'): GeneratedPythonModel {
  return pythonModel(name, {
    inputs: [
      ['INPUT0', 'FP32', '-1'],
      ['TARGET', 'STRING', '1'],
    ],
    outputs: [
      ['OUTPUT0', 'FP32', '-1'],
      ['SYNC_OUTPUT', 'FP32', '-1'],
    ],
    methods: `    async def execute(self, requests):
        responses = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            target = pb_utils.get_input_tensor_by_name(request, "TARGET").as_numpy()[0].decode()
            # The ONNX identity models batch: send [1, n].
            call = pb_utils.InferenceRequest(
                model_name=target,
                inputs=[pb_utils.Tensor("INPUT0", x.reshape(1, -1))],
                requested_output_names=["OUTPUT0"],
            )
            answer = await call.async_exec()
            if answer.has_error():
                error = answer.error()
                responses.append(
                    pb_utils.InferenceResponse(error=pb_utils.TritonError("BLS failed: " + error.message(), error.code()))
                )
                continue
            sync = call.exec()
            out = pb_utils.get_output_tensor_by_name(answer, "OUTPUT0").as_numpy().reshape(-1)
            again = pb_utils.get_output_tensor_by_name(sync, "OUTPUT0").as_numpy().reshape(-1)
            responses.append(
                pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", out), pb_utils.Tensor("SYNC_OUTPUT", again)])
            )
        return responses
`,
  });
}

/** A model whose `initialize` raises `ValueError("initialize refused: <name>")`. */
export function initFailPythonModel(name = 'py_init_fail'): GeneratedPythonModel {
  return model(
    name,
    simpleConfig(name),
    `class TritonPythonModel:
    def initialize(self, args):
        raise ValueError("initialize refused: " + args["model_name"])

    def execute(self, requests):
        return []
`,
  );
}

/** A model.py with a syntax error. */
export function syntaxErrorPythonModel(name = 'py_syntax'): GeneratedPythonModel {
  return model(
    name,
    simpleConfig(name),
    `class TritonPythonModel:\n    def execute(self, requests)\n        return []\n`,
  );
}

/** A model.py without a `TritonPythonModel` class. */
export function noClassPythonModel(name = 'py_no_class'): GeneratedPythonModel {
  return model(name, simpleConfig(name), `class SomethingElse:\n    pass\n`);
}

/**
 * No inputs or outputs in config.pbtxt (only the backend): `auto_complete_config` adds FP32 X [2] →
 * FP32 Y [2] (Y = X + 1), max_batch_size 4 and dynamic batching.
 */
export function autoCompletePythonModel(name = 'py_auto'): GeneratedPythonModel {
  return model(
    name,
    `backend: "python"\n`,
    `import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    @staticmethod
    def auto_complete_config(auto_complete_model_config):
        auto_complete_model_config.add_input({"name": "X", "data_type": "TYPE_FP32", "dims": [2]})
        auto_complete_model_config.add_output({"name": "Y", "data_type": "TYPE_FP32", "dims": [2]})
        auto_complete_model_config.set_max_batch_size(4)
        auto_complete_model_config.set_dynamic_batching()
        return auto_complete_model_config

    def execute(self, requests):
        return [
            pb_utils.InferenceResponse([pb_utils.Tensor("Y", pb_utils.get_input_tensor_by_name(r, "X").as_numpy() + 1)])
            for r in requests
        ]
`,
  );
}

/** Like {@link addSubPythonModel} without OUTPUT1/INFO, and `finalize` writes "finalized <name>" to `marker`. */
export function finalizePythonModel(marker: string, name = 'py_finalize'): GeneratedPythonModel {
  return pythonModel(name, {
    ...SIMPLE_TENSORS,
    numpy: false,
    prelude: `MARKER = ${JSON.stringify(marker)}\n`,
    methods: `    def initialize(self, args):
        self.name = args["model_name"]

    def execute(self, requests):
        return [
            pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())])
            for r in requests
        ]

    def finalize(self):
        with open(MARKER, "a") as f:
            f.write("finalized " + self.name + "\\n")
`,
  });
}

/** FP32 INPUT0 [-1] → FP32 OUTPUT0 [-1], max_batch_size 0. */
const SIMPLE_TENSORS = {
  inputs: [['INPUT0', 'FP32', '-1']],
  outputs: [['OUTPUT0', 'FP32', '-1']],
} as const;

function simpleConfig(name: string): string {
  return pythonConfig(name, SIMPLE_TENSORS);
}

export * from './python-usage-models.js';
