/**
 * The `onnxruntime` backend: one onnxruntime-node `InferenceSession` per model instance.
 *
 * Session options follow Triton's onnxruntime backend where they apply on a CPU:
 * `parameters { key: "intra_op_thread_count" … }` and `inter_op_thread_count` (default here 1 each,
 * not ORT's "all cores", because instances run side by side on small machines),
 * `execution_mode` (0 sequential, 1 parallel), `enable_mem_arena`, `enable_mem_pattern`, and
 * `optimization { graph { level } }` (−1 basic, 1 extended, 2 disabled, otherwise all).
 * `gpu_execution_accelerator` entries (e.g. TensorRT) are ignored because instances run on the CPU;
 * any `cpu_execution_accelerator` is refused like Triton does for accelerators it does not have.
 * @packageDocumentation
 */
import type { Datatype, PackedTensor } from '@tritonserver-ts/protocol';
import { datatypeFromModelConfig } from '@tritonserver-ts/protocol';
import ort from 'onnxruntime-node';
import { basename } from 'node:path';

import { redactPath } from '../../repository/contained-path.js';
import type { BatchInput, ModelConfig, ModelInput, ModelOutput } from '../../repository/model-config.js';
import { sequenceControls } from '../../repository/sequence-controls.js';
import { batchInputTensor, raggedShape } from '../batch-io.js';
import { BackendError } from '../errors.js';
import { fromOrtTensor, toOrtTensor } from './ort-tensors.js';
import { formatShape, reshapeBatched, shapeMatches } from '../shapes.js';
import type { ExecutionResult, RuntimeModelInstance } from '../types.js';

/** What an instance needs to know. */
export interface OnnxInstanceSpec {
  readonly name: string;
  readonly kind: string;
  readonly groupName: string;
  readonly index: number;
  readonly version: number;
  readonly modelPath: string;
  /** The model file as error messages name it (never an absolute host path); default its base name. */
  readonly displayPath?: string;
  readonly config: ModelConfig;
  readonly defaultIntraOpThreads?: number;
  readonly defaultInterOpThreads?: number;
}

function parameter(config: ModelConfig, key: string): string | undefined {
  return config.parameters[key]?.string_value;
}

function intParameter(config: ModelConfig, key: string, fallback: number): number {
  const raw = parameter(config, key);
  if (raw === undefined) return fallback;
  if (!/^-?[0-9]+$/.test(raw.trim())) {
    throw new BackendError(
      'INSTANCE_CREATION_FAILED',
      `failed to convert '${raw}' to integer for parameter '${key}' of model '${config.name}'`,
    );
  }
  return Number(raw.trim());
}

function boolParameter(config: ModelConfig, key: string): boolean | undefined {
  const raw = parameter(config, key);
  if (raw === undefined) return undefined;
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'on', 'yes'].includes(v)) return true;
  if (['false', '0', 'off', 'no'].includes(v)) return false;
  throw new BackendError(
    'INSTANCE_CREATION_FAILED',
    `failed to convert '${raw}' to boolean for parameter '${key}' of model '${config.name}'`,
  );
}

/** ORT session options from a model config (see the module documentation). */
export function sessionOptionsFor(
  config: ModelConfig,
  defaults: { intraOpThreads?: number; interOpThreads?: number } = {},
): ort.InferenceSession.SessionOptions {
  const intra = intParameter(config, 'intra_op_thread_count', 0);
  const inter = intParameter(config, 'inter_op_thread_count', 0);
  const mode = intParameter(config, 'execution_mode', 0);
  if (mode !== 0 && mode !== 1) {
    throw new BackendError(
      'INSTANCE_CREATION_FAILED',
      `Invalid configuration value provided. Expected values for execution_mode are 0 or 1 but got ${mode} .`,
    );
  }
  const level = config.optimization?.graph?.level ?? 0;
  const graphOptimizationLevel =
    level === -1 ? 'basic' : level === 1 ? 'extended' : level === 2 ? 'disabled' : 'all';
  for (const acc of config.optimization?.execution_accelerators?.cpu_execution_accelerator ?? []) {
    throw new BackendError(
      'INSTANCE_CREATION_FAILED',
      `unknown Execution Accelerator '${acc.name}' is requested`,
    );
  }
  const options: ort.InferenceSession.SessionOptions = {
    intraOpNumThreads: intra > 0 ? intra : (defaults.intraOpThreads ?? 1),
    interOpNumThreads: inter > 0 ? inter : (defaults.interOpThreads ?? 1),
    executionMode: mode === 1 ? 'parallel' : 'sequential',
    graphOptimizationLevel,
  };
  const arena = boolParameter(config, 'enable_mem_arena');
  if (arena !== undefined) options.enableCpuMemArena = arena;
  const pattern = boolParameter(config, 'enable_mem_pattern');
  if (pattern !== undefined) options.enableMemPattern = pattern;
  return options;
}

function configDatatype(io: ModelInput | ModelOutput): Datatype {
  const dt = datatypeFromModelConfig(io.data_type);
  if (dt === undefined)
    throw new BackendError('INSTANCE_CREATION_FAILED', `invalid data_type ${io.data_type} for '${io.name}'`);
  return dt;
}

/** Creates and validates one ORT-backed instance. */
export async function createOnnxInstance(spec: OnnxInstanceSpec): Promise<RuntimeModelInstance> {
  const options = sessionOptionsFor(spec.config, {
    ...(spec.defaultIntraOpThreads === undefined ? {} : { intraOpThreads: spec.defaultIntraOpThreads }),
    ...(spec.defaultInterOpThreads === undefined ? {} : { interOpThreads: spec.defaultInterOpThreads }),
  });
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(spec.modelPath, options);
  } catch (err) {
    const shown = spec.displayPath ?? basename(spec.modelPath);
    const detail = redactPath(err instanceof Error ? err.message : String(err), spec.modelPath, shown);
    throw new BackendError(
      'INSTANCE_CREATION_FAILED',
      `failed to create onnxruntime session for instance '${spec.name}' from '${shown}': ${detail}`,
      { cause: err },
    );
  }
  try {
    validateSignature(session, spec.config);
  } catch (err) {
    await session.release();
    throw err;
  }
  return new OnnxRuntimeInstance(spec, session);
}

function validateSignature(session: ort.InferenceSession, config: ModelConfig): void {
  const batched = config.max_batch_size > 0;
  const scattered = new Set(config.batch_output.flatMap((b) => b.target_name));
  const check = (
    kind: 'input' | 'output',
    ios: readonly (ModelInput | ModelOutput)[],
    metas: readonly ort.InferenceSession.ValueMetadata[],
  ): void => {
    const byName = new Map(metas.map((m) => [m.name, m]));
    for (const io of ios) {
      const meta = byName.get(io.name);
      if (meta === undefined) {
        throw new BackendError(
          'INSTANCE_CREATION_FAILED',
          `unexpected inference ${kind} '${io.name}', allowed ${kind}s are: ${metas.map((m) => m.name).join(', ')}`,
        );
      }
      if (!meta.isTensor)
        throw new BackendError('INSTANCE_CREATION_FAILED', `model ${kind} '${io.name}' is not a tensor`);
      const expectedType = configDatatype(io);
      const modelType = ortTypeName(meta.type);
      if (modelType !== expectedType) {
        throw new BackendError(
          'INSTANCE_CREATION_FAILED',
          `unexpected datatype TYPE_${modelType === 'BYTES' ? 'STRING' : modelType} for inference ${kind} '${io.name}', expecting ${io.data_type}`,
        );
      }
      const modelShape = meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : -1));
      const inner = io.reshape?.shape ?? io.dims;
      // A ragged input reaches the model as one 1-D tensor of every request's elements, so the model
      // must take exactly [-1] (Triton's ONNX Runtime backend checks and words it so); an output
      // scattered back by a batch output is whatever the model makes of it.
      if (kind === 'input' && (io as ModelInput).allow_ragged_batch) {
        if ((io as ModelInput).optional) {
          throw new BackendError(
            'INSTANCE_CREATION_FAILED',
            `unable to load model '${config.name}', configuration expects model provides input with shape [-1] for ragged input '${io.name}', which is not supported for optional input`,
          );
        }
        if (modelShape.length !== 1 || modelShape[0] !== -1) {
          throw new BackendError(
            'INSTANCE_CREATION_FAILED',
            `unable to load model '${config.name}', configuration expects model provides input with shape [-1]  for ragged input '${io.name}', model provides ${formatShape(modelShape)}`,
          );
        }
        continue;
      }
      if (kind === 'output' && scattered.has(io.name)) continue;
      const expected = batched ? [-1, ...inner] : inner;
      const scalarOk = !batched && modelShape.length === 0 && expected.length === 1 && expected[0] === 1;
      const fits =
        scalarOk ||
        (modelShape.length === expected.length && modelShape.every((d, i) => d === -1 || d === expected[i]));
      if (!fits) {
        throw new BackendError(
          'INSTANCE_CREATION_FAILED',
          `model '${config.name}', tensor '${io.name}': the model expects ${modelShape.length} dimensions (shape ${formatShape(modelShape)}) but the model configuration specifies ${expected.length} dimensions (${batched ? 'an initial batch dimension because max_batch_size > 0 followed by the explicit tensor shape, making complete shape ' : 'shape '}${formatShape(expected)})`,
        );
      }
    }
  };
  check('input', config.input, session.inputMetadata);
  check('output', config.output, session.outputMetadata);
  // Batch inputs are model inputs the server fills. Triton's backend only finds a target the model
  // lacks, or one of another type, when it runs; here the load fails, worded like Triton's checks
  // of configured inputs.
  for (const b of config.batch_input) {
    for (const target of b.target_name) {
      const meta = session.inputMetadata.find((m) => m.name === target);
      if (meta === undefined) {
        throw new BackendError(
          'INSTANCE_CREATION_FAILED',
          `unexpected inference input '${target}', allowed inputs are: ${session.inputMetadata.map((m) => m.name).join(', ')}`,
        );
      }
      const ortType = meta.isTensor ? ortTypeName(meta.type) : 'INVALID';
      const modelType = ortType === 'BYTES' ? 'STRING' : ortType;
      if (`TYPE_${modelType}` !== b.data_type) {
        throw new BackendError(
          'INSTANCE_CREATION_FAILED',
          `unable to load model '${config.name}', configuration expects datatype ${b.data_type} for input '${target}', model provides TYPE_${modelType}`,
        );
      }
    }
  }
  // The sequence batcher's control inputs are model inputs it fills (Triton's backend checks each
  // control the config names against the model's inputs, with this wording).
  const controls = controlInputTypes(config);
  for (const [name, dataType] of controls) {
    const meta = session.inputMetadata.find((m) => m.name === name);
    if (meta === undefined) {
      throw new BackendError(
        'INSTANCE_CREATION_FAILED',
        `configuration specified sequence control '${name}', but model does not provide that input`,
      );
    }
    const ortType = meta.isTensor ? ortTypeName(meta.type) : 'INVALID';
    const modelType = `TYPE_${ortType === 'BYTES' ? 'STRING' : ortType}`;
    if (modelType !== dataType) {
      throw new BackendError(
        'INSTANCE_CREATION_FAILED',
        `unable to load model '${config.name}', sequence control '${name}' expects datatype ${dataType}, model provides ${modelType}`,
      );
    }
  }
  // Implicit state: each state's input is a model input the batcher fills (counted as Triton's
  // backend counts it); its output must be a model output of the state's data type.
  const states = config.sequence_batching?.state ?? [];
  for (const state of states) {
    // Triton's backend finds a state input the model lacks only when it runs; here the load fails.
    if (!session.inputMetadata.some((m) => m.name === state.input_name)) {
      throw new BackendError(
        'INSTANCE_CREATION_FAILED',
        `unexpected inference input '${state.input_name}', allowed inputs are: ${session.inputMetadata.map((m) => m.name).join(', ')}`,
      );
    }
    const meta = session.outputMetadata.find((m) => m.name === state.output_name);
    if (meta === undefined) {
      throw new BackendError(
        'INSTANCE_CREATION_FAILED',
        `unexpected inference output '${state.output_name}', allowed outputs are: ${session.outputMetadata.map((m) => m.name).join(', ')}`,
      );
    }
    const ortType = meta.isTensor ? ortTypeName(meta.type) : 'INVALID';
    const modelType = ortType === 'BYTES' ? 'STRING' : ortType;
    if (`TYPE_${modelType}` !== state.data_type) {
      throw new BackendError(
        'INSTANCE_CREATION_FAILED',
        `unable to load model '${config.name}', configuration expects datatype ${state.data_type} for output state '${state.output_name}', model provides TYPE_${modelType}`,
      );
    }
  }
  const configured = new Set([
    ...config.input.map((i) => i.name),
    ...config.batch_input.flatMap((b) => b.target_name),
    ...controls.keys(),
    ...states.map((s) => s.input_name),
  ]);
  const missing = session.inputMetadata.filter((m) => !configured.has(m.name));
  // Triton's count: the non-optional inputs plus one per batch input, control input and state;
  // with batch inputs or states it must be exact (a state input the model lacks is one short).
  const expected =
    config.input.filter((i) => !i.optional).length +
    config.batch_input.length +
    controls.size +
    states.length;
  if (
    missing.length > 0 ||
    ((config.batch_input.length > 0 || states.length > 0) && expected !== session.inputMetadata.length)
  ) {
    throw new BackendError(
      'INSTANCE_CREATION_FAILED',
      `unable to load model '${config.name}', configuration expects ${expected} inputs, model provides ${session.inputMetadata.length}`,
    );
  }
}

/** The sequence batcher's control inputs of `config` and their configured data types. */
function controlInputTypes(config: ModelConfig): Map<string, string> {
  const types = new Map<string, string>();
  if (config.sequence_batching === undefined) return types;
  const { start, end, ready, corrid } = sequenceControls(config);
  for (const c of [start, end, ready, corrid]) if (c !== undefined) types.set(c.name, c.dataType);
  return types;
}

function ortTypeName(type: string): string {
  const map: Record<string, string> = {
    bool: 'BOOL',
    uint8: 'UINT8',
    uint16: 'UINT16',
    uint32: 'UINT32',
    uint64: 'UINT64',
    int8: 'INT8',
    int16: 'INT16',
    int32: 'INT32',
    int64: 'INT64',
    float16: 'FP16',
    float32: 'FP32',
    float64: 'FP64',
    string: 'BYTES',
  };
  return map[type] ?? type.toUpperCase();
}

/** `shapeMatches([batch, ...dims], shape)` without building the expected shape. */
function batchedShapeMatches(batch: number, dims: readonly number[], shape: readonly number[]): boolean {
  if (shape.length !== dims.length + 1) return false;
  if (batch !== -1 && shape[0] !== batch) return false;
  for (let i = 0; i < dims.length; i++) {
    const d = dims[i] as number;
    if (d !== -1 && d !== shape[i + 1]) return false;
  }
  return true;
}

class OnnxRuntimeInstance implements RuntimeModelInstance {
  readonly name: string;
  readonly kind: string;
  readonly groupName: string;
  readonly index: number;
  readonly version: number;
  #session: ort.InferenceSession | undefined;
  readonly #config: ModelConfig;
  /** `scalar`: the model takes the input as a rank-0 tensor (fed without dims when not batched). */
  readonly #inputs: { io: ModelInput; datatype: Datatype; scalar: boolean }[];
  readonly #inputNames: ReadonlySet<string>;
  readonly #outputs: { io: ModelOutput; datatype: Datatype }[];
  readonly #outputNames: readonly string[];
  /** Batch inputs by target name (filled by the scheduler), and outputs scattered back by batch outputs. */
  readonly #batchInputs: ReadonlyMap<string, BatchInput>;
  readonly #scattered: ReadonlySet<string>;
  /** The sequence batcher's control inputs (fed as the scheduler made them). */
  readonly #controls: ReadonlySet<string>;
  /** Implicit state inputs (fed as the sequence batcher made them). */
  readonly #stateInputs: ReadonlySet<string>;
  /** Implicit state outputs the config does not list as outputs (returned as the model made them). */
  readonly #stateOutputs: readonly string[];
  /** What the session computes: the configured outputs, then the state outputs. */
  readonly #fetches: readonly string[];

  constructor(spec: OnnxInstanceSpec, session: ort.InferenceSession) {
    this.name = spec.name;
    this.kind = spec.kind;
    this.groupName = spec.groupName;
    this.index = spec.index;
    this.version = spec.version;
    this.#session = session;
    this.#config = spec.config;
    this.#inputs = spec.config.input.map((io) => {
      const meta = session.inputMetadata.find((m) => m.name === io.name);
      return {
        io,
        datatype: configDatatype(io),
        scalar: meta !== undefined && meta.isTensor && meta.shape.length === 0,
      };
    });
    this.#inputNames = new Set(spec.config.input.map((io) => io.name));
    this.#outputs = spec.config.output.map((io) => ({ io, datatype: configDatatype(io) }));
    this.#outputNames = this.#outputs.map((o) => o.io.name);
    this.#batchInputs = new Map(spec.config.batch_input.flatMap((b) => b.target_name.map((t) => [t, b])));
    this.#scattered = new Set(spec.config.batch_output.flatMap((b) => b.target_name));
    this.#controls = new Set(controlInputTypes(spec.config).keys());
    const states = spec.config.sequence_batching?.state ?? [];
    this.#stateInputs = new Set(states.map((st) => st.input_name));
    const listed = new Set(this.#outputNames);
    this.#stateOutputs = [...new Set(states.map((st) => st.output_name))].filter((n) => !listed.has(n));
    this.#fetches = [...this.#outputNames, ...this.#stateOutputs];
  }

  async execute(inputs: ReadonlyMap<string, PackedTensor>): Promise<ExecutionResult> {
    const session = this.#session;
    if (session === undefined)
      throw new BackendError('INSTANCE_DISPOSED', `instance '${this.name}' has been disposed`);
    const modelName = this.#config.name;
    const batched = this.#config.max_batch_size > 0;
    const t0 = process.hrtime.bigint();

    for (const name of inputs.keys()) {
      if (
        !this.#inputNames.has(name) &&
        !this.#batchInputs.has(name) &&
        !this.#controls.has(name) &&
        !this.#stateInputs.has(name)
      ) {
        throw new BackendError(
          'INVALID_EXECUTION_INPUT',
          `unexpected inference input '${name}' for model '${modelName}'`,
        );
      }
    }
    const feeds: Record<string, ort.Tensor> = {};
    let batch: number | undefined;
    for (const { io, datatype, scalar } of this.#inputs) {
      const tensor = inputs.get(io.name);
      if (tensor === undefined) {
        if (io.optional) continue;
        throw new BackendError(
          'INVALID_EXECUTION_INPUT',
          `expected input '${io.name}' for model '${modelName}' is missing`,
        );
      }
      if (tensor.datatype !== datatype) {
        throw new BackendError(
          'INVALID_EXECUTION_INPUT',
          `unexpected datatype ${tensor.datatype} for input '${io.name}' of model '${modelName}', expecting ${datatype}`,
        );
      }
      if (io.allow_ragged_batch) {
        // One dimension of all the elements (already so when the scheduler laid the batch out).
        feeds[io.name] = toOrtTensor(tensor, raggedShape([tensor.shape]));
        continue;
      }
      if (batched) {
        const b = tensor.shape[0];
        if (b === undefined || (batch !== undefined && b !== batch)) {
          throw new BackendError(
            'INVALID_EXECUTION_INPUT',
            `inputs of model '${modelName}' must share one batch dimension`,
          );
        }
        batch = b;
      }
      let shape: readonly number[] = tensor.shape;
      if (io.reshape !== undefined) {
        const r = reshapeBatched(tensor.shape, batched, io.reshape.shape);
        if (r === undefined) {
          throw new BackendError(
            'INVALID_EXECUTION_INPUT',
            `input '${io.name}' of shape ${formatShape(tensor.shape)} cannot be reshaped to ${formatShape(io.reshape.shape)}`,
          );
        }
        shape = r;
      }
      if (scalar && !batched) shape = [];
      try {
        feeds[io.name] = toOrtTensor(tensor, shape);
      } catch (err) {
        if (err instanceof BackendError) throw err;
        throw new BackendError('INVALID_EXECUTION_INPUT', `input '${io.name}': ${(err as Error).message}`, {
          cause: err,
        });
      }
    }
    for (const name of this.#controls) {
      const tensor = inputs.get(name);
      if (tensor === undefined) {
        throw new BackendError(
          'INVALID_EXECUTION_INPUT',
          `sequence control input '${name}' of model '${modelName}' is missing (it is filled by the sequence batcher)`,
        );
      }
      feeds[name] = toOrtTensor(tensor, tensor.shape);
    }
    for (const name of this.#stateInputs) {
      const tensor = inputs.get(name);
      if (tensor === undefined) {
        throw new BackendError(
          'INVALID_EXECUTION_INPUT',
          `state input '${name}' of model '${modelName}' is missing (it is filled by the sequence batcher)`,
        );
      }
      feeds[name] = toOrtTensor(tensor, tensor.shape);
    }
    for (const [name, b] of this.#batchInputs) {
      let tensor = inputs.get(name);
      if (tensor === undefined) {
        // Called directly rather than through the scheduler (warmup): the inputs are one request.
        const source = inputs.get(b.source_input[0] as string);
        if (source === undefined) {
          throw new BackendError(
            'INVALID_EXECUTION_INPUT',
            `batch input '${name}' of model '${modelName}' is missing`,
          );
        }
        tensor = batchInputTensor(b, name, [source.shape]);
      }
      feeds[name] = toOrtTensor(tensor, tensor.shape);
    }
    const t1 = process.hrtime.bigint();

    let results: ort.InferenceSession.ReturnType;
    try {
      results = await session.run(feeds, this.#fetches);
    } catch (err) {
      throw new BackendError(
        'EXECUTION_FAILED',
        `onnxruntime execution failure in model '${modelName}': ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
    const t2 = process.hrtime.bigint();

    const outputs = new Map<string, PackedTensor>();
    for (const { io, datatype } of this.#outputs) {
      const value = results[io.name];
      if (value === undefined)
        throw new BackendError('EXECUTION_FAILED', `model '${modelName}' produced no output '${io.name}'`);
      let tensor = fromOrtTensor(io.name, value);
      if (tensor.datatype !== datatype) {
        throw new BackendError(
          'EXECUTION_FAILED',
          `unexpected datatype ${tensor.datatype} for inference output '${io.name}', expecting ${datatype}`,
        );
      }
      if (this.#scattered.has(io.name)) {
        // Cut back per request by the scheduler (scheduler/ragged.ts), by its source input's shapes.
        outputs.set(io.name, tensor);
        continue;
      }
      let shape: readonly number[] = tensor.shape;
      if (!batched && shape.length === 0) shape = [1];
      if (io.reshape !== undefined) {
        const r = reshapeBatched(shape, batched, io.dims);
        if (r === undefined) {
          throw new BackendError(
            'EXECUTION_FAILED',
            `output '${io.name}' of shape ${formatShape(shape)} does not fit dims ${formatShape(io.dims)}`,
          );
        }
        shape = r;
      }
      if (!(batched ? batchedShapeMatches(batch ?? -1, io.dims, shape) : shapeMatches(io.dims, shape))) {
        const expected = batched ? [batch ?? -1, ...io.dims] : io.dims;
        throw new BackendError(
          'EXECUTION_FAILED',
          `output '${io.name}' of model '${modelName}' has shape ${formatShape(shape)}, expected ${formatShape(expected)}`,
        );
      }
      if (shape !== tensor.shape) tensor = { ...tensor, shape };
      outputs.set(io.name, tensor);
    }
    for (const name of this.#stateOutputs) {
      const value = results[name];
      if (value === undefined)
        throw new BackendError('EXECUTION_FAILED', `model '${modelName}' produced no output state '${name}'`);
      outputs.set(name, fromOrtTensor(name, value));
    }
    const t3 = process.hrtime.bigint();
    return {
      outputs,
      timings: { computeInputNs: t1 - t0, computeInferNs: t2 - t1, computeOutputNs: t3 - t2 },
    };
  }

  async dispose(): Promise<void> {
    const session = this.#session;
    this.#session = undefined;
    if (session !== undefined) await session.release();
  }
}
