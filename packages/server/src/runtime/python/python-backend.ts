/**
 * The Python backend: each model instance is a stub process (`stub-process.ts`) running the model's
 * `model.py` (`TritonPythonModel`), as Triton's python_backend does. Requests reach it through the
 * scheduler's per-request path (`ModelInstance.executeRequests`: the dynamic batcher's requests as a
 * list, never concatenated); responses, BLS calls and log lines come back as frames.
 *
 * Faults: a stub that exits while requests are in flight fails them ("Stub process … is not
 * healthy") and is started again; an `execute` running longer than `execute-timeout-seconds` (this
 * project's addition; Triton waits forever) kills the stub, fails its requests and restarts it.
 * @packageDocumentation
 */
import { dirname } from 'node:path';

import { datatypeFromModelConfig, type PackedTensor } from '@tritonserver-ts/protocol';

import { ServerError, type ServerErrorKind } from '../../common/errors.js';
import type { InferenceHost } from '../../common/inference-host.js';
import type { CoreInferRequest, ParameterValue } from '../../common/types.js';
import { modelConfigToJson } from '../../repository/model-config-io.js';
import type { ModelOutput } from '../../repository/model-config.js';
import { BackendError } from '../errors.js';
import type { BackendInstanceSpec } from '../registry.js';
import type { ExecutionTimings, InstanceRequest, RuntimeModelInstance } from '../types.js';
import { PayloadBuilder, decodeTensors, type Frame, type TensorRef } from './frames.js';
import { initErrorMessage } from './missing-module.js';
import {
  DEFAULT_EXECUTE_TIMEOUT_SECONDS,
  DEFAULT_STUB_TIMEOUT_SECONDS,
  findPythonInterpreter,
  type PythonBackendSettings,
} from './settings.js';
import { answerMetricCall } from './metric-calls.js';
import { StubProcess, describeExit } from './stub-process.js';

/** Request parameters Triton consumes itself and does not hand to the model. */
const RESERVED_PARAMETERS = new Set(['priority', 'timeout', 'sequence_id', 'sequence_start', 'sequence_end']);

const TRITON_ERROR_KINDS: ReadonlySet<string> = new Set([
  'UNKNOWN',
  'INTERNAL',
  'NOT_FOUND',
  'INVALID_ARG',
  'UNAVAILABLE',
  'UNSUPPORTED',
  'ALREADY_EXISTS',
  'CANCELLED',
]);

interface WireError {
  readonly message: string;
  readonly code: string;
}

function kindOf(code: string): ServerErrorKind {
  return TRITON_ERROR_KINDS.has(code) ? (code as ServerErrorKind) : 'INTERNAL';
}

/** A response parameter as the stub sends it: `[key, kind, value]`, integers as decimal text. */
type WireParameter = readonly [key: string, kind: 'bool' | 'int' | 'string', value: boolean | string];

/**
 * A response's parameters from the stub's `[key, kind, value]` entries (the stub checked them as
 * Triton does: str keys; bool, int64 or str values). Integers beyond 2^53 stay exact (`bigint`).
 */
export function parametersFromWire(entries: unknown): Record<string, ParameterValue> | undefined {
  if (!Array.isArray(entries) || entries.length === 0) return undefined;
  const parameters: Record<string, ParameterValue> = {};
  for (const [key, kind, value] of entries as WireParameter[]) {
    if (kind === 'int') {
      const n = BigInt(value);
      parameters[key] =
        n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
    } else {
      parameters[key] = value;
    }
  }
  return parameters;
}

/** A core response's parameters as the stub's entries (BLS responses). */
function parametersToWire(parameters: Readonly<Record<string, ParameterValue>> | undefined): WireParameter[] {
  return Object.entries(parameters ?? {}).map(([key, value]): WireParameter => {
    if (typeof value === 'boolean') return [key, 'bool', value];
    if (typeof value === 'string') return [key, 'string', value];
    return [key, 'int', typeof value === 'bigint' ? value.toString() : String(Math.trunc(value))];
  });
}

/**
 * The request's parameters (those the model sees) as the JSON text `InferenceRequest.parameters()`
 * returns. An int64 parameter (a bigint) is written as its decimal digits, so values beyond 2^53
 * reach Python exactly (Python's `json` parses big integers exactly).
 */
function parametersJson(parameters: Readonly<Record<string, ParameterValue>>): string {
  const members: string[] = [];
  for (const [key, value] of Object.entries(parameters)) {
    if (RESERVED_PARAMETERS.has(key)) continue;
    members.push(
      `${JSON.stringify(key)}:${typeof value === 'bigint' ? value.toString() : JSON.stringify(value)}`,
    );
  }
  return `{${members.join(',')}}`;
}

/** One execution in flight. */
interface Batch {
  readonly requests: readonly InstanceRequest[];
  readonly finished: boolean[];
  /** Non-decoupled requests whose one response went out through the sender (not final yet). */
  readonly answered: boolean[];
  executeDone: boolean;
  readonly sentAt: bigint;
  readonly computeInputNs: bigint;
  readonly settle: (timings: ExecutionTimings) => void;
  timer: NodeJS.Timeout | undefined;
  /** Bounds the requests still open once the model is being unloaded (see `closing`). */
  closeTimer: NodeJS.Timeout | undefined;
  /** Removes the requests' cancellation listeners. */
  readonly detach: (() => void)[];
}

/** Options of {@link createPythonInstance}. */
export interface PythonInstanceOptions {
  readonly settings?: PythonBackendSettings;
  /** Where BLS requests run (the hosting server). */
  readonly inferenceHost?: InferenceHost;
}

/** See the module documentation. */
export class PythonModelInstance implements RuntimeModelInstance {
  readonly name: string;
  readonly kind: string;
  readonly groupName: string;
  readonly index: number;
  readonly version: number;
  readonly #spec: BackendInstanceSpec;
  readonly #modelName: string;
  readonly #interpreter: string;
  readonly #settings: PythonBackendSettings;
  readonly #host: InferenceHost | undefined;
  readonly #decoupled: boolean;
  readonly #outputs: ReadonlyMap<string, ModelOutput>;
  #stub: StubProcess | undefined;
  #starting: Promise<void> | undefined;
  readonly #batches = new Map<number, Batch>();
  #nextBatch = 0;
  #disposed: Promise<void> | undefined;
  #closing = false;
  #lastRestart = 0;

  private constructor(spec: BackendInstanceSpec, interpreter: string, options: PythonInstanceOptions) {
    const config = spec.config;
    this.#modelName = config.name;
    this.name = spec.name;
    this.kind = spec.kind;
    this.groupName = spec.groupName;
    this.index = spec.index;
    this.version = spec.version;
    this.#spec = spec;
    this.#interpreter = interpreter;
    this.#settings = options.settings ?? {};
    this.#host = options.inferenceHost;
    this.#decoupled = config.model_transaction_policy?.decoupled === true;
    this.#outputs = new Map(config.output.map((o) => [o.name, o]));
  }

  /**
   * Finds the interpreter, starts the stub and runs `initialize`.
   * @throws BackendError `INSTANCE_CREATION_FAILED` naming what is missing or the Python error.
   */
  static async create(
    spec: BackendInstanceSpec,
    options: PythonInstanceOptions,
  ): Promise<PythonModelInstance> {
    const found = await findPythonInterpreter(options.settings);
    if (!found.ok) throw new BackendError('INSTANCE_CREATION_FAILED', found.reason);
    const instance = new PythonModelInstance(spec, found.path, options);
    try {
      await instance.#start();
    } catch (error) {
      throw new BackendError(
        'INSTANCE_CREATION_FAILED',
        error instanceof Error ? error.message : String(error),
        {
          cause: error,
        },
      );
    }
    return instance;
  }

  get #stubTimeoutMs(): number {
    return (this.#settings.stubTimeoutSeconds ?? DEFAULT_STUB_TIMEOUT_SECONDS) * 1000;
  }

  /** The stub's process id (tests). */
  get pid(): number | undefined {
    return this.#stub?.pid;
  }

  /** Starts a stub and runs the model's `initialize` in it. */
  async #start(): Promise<void> {
    const config = this.#spec.config;
    const modelPath = this.#spec.modelVersion.modelPath;
    const stub = StubProcess.start({
      interpreter: this.#interpreter,
      modelPath,
      label: this.name,
      cwd: this.#spec.modelVersion.directory,
      ...(this.#settings.log !== undefined ? { log: this.#settings.log } : {}),
    });
    stub.onFrame = (frame) => this.#onFrame(stub, frame);
    stub.onExit = (exit) => {
      // The stub's Python objects are gone: so are its references to custom metrics.
      this.#settings.customMetrics?.release(stub);
      this.#onExit(stub, `it exited (${describeExit(exit)})`);
    };
    const args = {
      model_config: JSON.stringify(modelConfigToJson(config)),
      model_instance_kind: this.kind === 'KIND_MODEL' ? 'MODEL' : 'CPU',
      model_instance_name: this.name,
      model_instance_device_id: '0',
      model_repository: dirname(this.#spec.modelVersion.directory),
      model_version: String(this.version),
      model_name: this.#modelName,
    };
    const ready = stub.waitFor(['ready', 'init_error'], this.#stubTimeoutMs, `initialize of '${this.name}'`);
    stub.send({ type: 'initialize', args, decoupled: this.#decoupled });
    let frame: Frame;
    try {
      frame = await ready;
    } catch (error) {
      stub.kill();
      throw error;
    }
    if (frame.header.type === 'init_error') {
      await stub.stop(1000);
      throw new Error(await initErrorMessage(frame.header, this.#interpreter, this.#settings));
    }
    this.#stub = stub;
  }

  /**
   * Restarts the stub after a crash or timeout (the next execution waits for it). A stub that dies
   * again within a second of its last restart is restarted after a one-second pause, so a model that
   * keeps crashing does not spin.
   */
  #restart(): void {
    if (this.#disposed !== undefined || this.#starting !== undefined) return;
    this.#stub = undefined;
    const now = Date.now();
    const pause = now - this.#lastRestart < 1000 ? 1000 : 0;
    this.#lastRestart = now + pause;
    this.#settings.log?.warn(`python stub of model instance '${this.name}' is being restarted`);
    this.#starting = (async () => {
      if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
      if (this.#disposed !== undefined) return;
      await this.#start();
    })()
      .catch((error: unknown) => {
        this.#settings.log?.error(
          `restarting the python stub of model instance '${this.name}' failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      })
      .finally(() => {
        this.#starting = undefined;
      });
  }

  execute(): Promise<never> {
    return Promise.reject(
      new ServerError(
        'INTERNAL',
        `python model instance '${this.name}' runs requests through executeRequests`,
      ),
    );
  }

  async executeRequests(requests: readonly InstanceRequest[]): Promise<ExecutionTimings> {
    if (this.#starting !== undefined) await this.#starting;
    if (this.#stub === undefined && this.#disposed === undefined) {
      // The last restart failed: try once more for this batch.
      this.#restart();
      await this.#starting;
    }
    const stub = this.#stub;
    if (stub === undefined || !stub.alive) {
      throw new ServerError(
        'INTERNAL',
        `Failed to process the request(s) for model instance '${this.name}', message: Stub process '${this.name}' is not healthy.`,
      );
    }
    const t0 = process.hrtime.bigint();
    const payload = new PayloadBuilder();
    const entries = requests.map((r) => {
      const inputs: TensorRef[] = [];
      for (const tensor of r.inputs.values()) inputs.push(payload.add(tensor));
      return {
        id: r.id,
        correlation_id: r.correlationId,
        flags: r.flags,
        parameters: parametersJson(r.parameters),
        requested_outputs: r.requestedOutputs.length > 0 ? r.requestedOutputs : [...this.#outputs.keys()],
        inputs,
        // A traced request's trace id: `request.trace()` hands it to the BLS requests built with it.
        ...(r.trace !== undefined ? { trace: r.trace.id } : {}),
      };
    });
    const id = this.#nextBatch++;
    const sentAt = process.hrtime.bigint();
    return new Promise<ExecutionTimings>((resolve) => {
      const batch: Batch = {
        requests,
        finished: requests.map(() => false),
        answered: requests.map(() => false),
        executeDone: false,
        sentAt,
        computeInputNs: sentAt - t0,
        settle: resolve,
        timer: undefined,
        closeTimer: undefined,
        detach: [],
      };
      requests.forEach((r, index) => {
        const signal = r.signal;
        if (signal === undefined) return;
        const onAbort = (): void => {
          if (batch.finished[index] === true || !stub.alive) return;
          // The stub marks the request cancelled (`is_cancelled()`); the model decides what to do.
          stub.send({ type: 'cancel', batch: id, request: index });
        };
        if (signal.aborted) {
          batch.detach.push(() => undefined);
          queueMicrotask(onAbort);
          return;
        }
        signal.addEventListener('abort', onAbort, { once: true });
        batch.detach.push(() => signal.removeEventListener('abort', onAbort));
      });
      const timeoutSeconds = this.#settings.executeTimeoutSeconds ?? DEFAULT_EXECUTE_TIMEOUT_SECONDS;
      if (timeoutSeconds > 0) {
        batch.timer = setTimeout(() => {
          if (batch.executeDone) return;
          this.#settings.log?.error(
            `model instance '${this.name}': execute did not finish within ${timeoutSeconds} s; killing its python stub`,
          );
          stub.kill();
          this.#failStub(
            stub,
            `execute did not finish within ${timeoutSeconds} s (--backend-config=python,execute-timeout-seconds); the stub was killed and is restarted`,
          );
        }, timeoutSeconds * 1000);
      }
      this.#batches.set(id, batch);
      try {
        stub.send({ type: 'execute', batch: id, requests: entries }, payload.chunks);
      } catch (error) {
        this.#release(id, batch);
        this.#failBatch(batch, error instanceof Error ? error.message : String(error));
      }
    });
  }

  /** A stub that died or hung: fails every unanswered request it had and restarts it. */
  #failStub(stub: StubProcess, why: string): void {
    if (this.#stub !== stub && this.#stub !== undefined) return;
    const message = `Failed to process the request(s) for model instance '${this.name}', message: Stub process '${this.name}' is not healthy: ${why}.`;
    for (const [id, batch] of this.#batches) {
      this.#release(id, batch);
      this.#failBatch(batch, message);
    }
    this.#stub = undefined;
    if (this.#disposed === undefined) this.#restart();
  }

  #onExit(stub: StubProcess, why: string): void {
    if (this.#stub !== stub) return;
    this.#settings.log?.error(`python stub of model instance '${this.name}' ${why}`);
    this.#failStub(stub, why);
  }

  /**
   * Fails every request of `batch` without its final response. A non-decoupled request whose one
   * response already went out through its sender keeps that response (the error is logged): as
   * Triton, where the front end has the request's response and discards what comes after it.
   */
  #failBatch(batch: Batch, message: string): void {
    const error = new ServerError('INTERNAL', message);
    batch.requests.forEach((r, i) => {
      if (batch.finished[i] === true) return;
      batch.finished[i] = true;
      if (batch.answered[i] === true) {
        this.#settings.log?.warn(
          `model instance '${this.name}': request '${r.id}' already has its response; the error that followed is dropped: ${message}`,
        );
        r.respond({ final: true });
        return;
      }
      r.respond({ error, final: true });
    });
    this.#finishExecute(batch, process.hrtime.bigint(), 0n);
  }

  /** Forgets a batch whose requests all have their final response. */
  #release(id: number, batch: Batch): void {
    this.#batches.delete(id);
    if (batch.closeTimer !== undefined) clearTimeout(batch.closeTimer);
    for (const detach of batch.detach) detach();
  }

  /**
   * Once the model is being unloaded, a request still open after its execution returned (a
   * decoupled model that has not sent its final flag) gets `stub-timeout-seconds` to finish, then
   * an error final response, so unloading and shutdown never wait forever. Beyond Triton, whose
   * unload does not wait for such requests and leaves their clients without a final response.
   */
  #boundOpenRequests(id: number, batch: Batch): void {
    if (!this.#closing || !batch.executeDone || batch.closeTimer !== undefined) return;
    if (batch.finished.every(Boolean)) return;
    const seconds = this.#stubTimeoutMs / 1000;
    batch.closeTimer = setTimeout(() => {
      if (this.#batches.get(id) !== batch) return;
      this.#release(id, batch);
      this.#failBatch(
        batch,
        `model instance '${this.name}' is being unloaded and the request did not receive its final response within ${seconds} s (stub-timeout-seconds)`,
      );
    }, this.#stubTimeoutMs);
  }

  /** See {@link RuntimeModelInstance.closing}. */
  closing(): void {
    this.#closing = true;
    for (const [id, batch] of this.#batches) this.#boundOpenRequests(id, batch);
  }

  #finishExecute(batch: Batch, doneAt: bigint, outputNs: bigint): void {
    if (batch.executeDone) return;
    batch.executeDone = true;
    if (batch.timer !== undefined) clearTimeout(batch.timer);
    batch.settle({
      computeInputNs: batch.computeInputNs,
      computeInferNs: doneAt - batch.sentAt,
      computeOutputNs: outputNs,
    });
  }

  #onFrame(stub: StubProcess, frame: Frame): void {
    const h = frame.header;
    switch (h.type) {
      case 'execute_done':
        this.#onExecuteDone(h, frame.payload);
        return;
      case 'response':
        this.#onStreamResponse(h, frame.payload);
        return;
      case 'execute_error':
        this.#onBackgroundError(h);
        return;
      case 'bls':
        void this.#onBls(stub, h, frame.payload);
        return;
      case 'log':
        this.#onLog(h);
        return;
      case 'metric': {
        const answer = answerMetricCall(this.#settings.customMetrics, stub, h);
        if (answer !== undefined) stub.send(answer);
        return;
      }
      default:
        this.#settings.log?.warn(`python stub of '${this.name}' sent an unexpected '${h.type}' message`);
    }
  }

  /** The response of one request: its outputs checked against the config, or its own error. */
  #response(
    entry: Record<string, unknown>,
    payload: Uint8Array,
  ):
    | { outputs: ReadonlyMap<string, PackedTensor>; parameters?: Readonly<Record<string, ParameterValue>> }
    | { error: ServerError } {
    const wireError = entry.error as WireError | undefined;
    if (wireError !== undefined) return { error: new ServerError(kindOf(wireError.code), wireError.message) };
    let tensors: PackedTensor[];
    try {
      tensors = decodeTensors(entry.outputs, payload, 'output');
    } catch (error) {
      return { error: new ServerError('INTERNAL', error instanceof Error ? error.message : String(error)) };
    }
    const outputs = new Map<string, PackedTensor>();
    for (const t of tensors) {
      const problem = this.#checkOutput(t);
      if (problem !== undefined) return { error: new ServerError('INTERNAL', problem) };
      outputs.set(t.name, t);
    }
    const parameters = parametersFromWire(entry.parameters);
    return parameters === undefined ? { outputs } : { outputs, parameters };
  }

  #checkOutput(t: PackedTensor): string | undefined {
    const model = this.#modelName;
    const cfg = this.#outputs.get(t.name);
    if (cfg === undefined) {
      // An implicit state output (this server's extension, see the README): kept by the sequence
      // batcher as the sequence's next input state, not sent to the client.
      const state = this.#spec.config.sequence_batching?.state.find((st) => st.output_name === t.name);
      if (state !== undefined) {
        const expected = datatypeFromModelConfig(state.data_type);
        return expected === undefined || expected === t.datatype
          ? undefined
          : `output state '${t.name}' of model '${model}' has datatype ${t.datatype} but the model configuration declares ${expected}`;
      }
      return `model '${model}' produced output '${t.name}', which its configuration does not declare (outputs: ${[...this.#outputs.keys()].join(', ')})`;
    }
    const expected = datatypeFromModelConfig(cfg.data_type);
    if (expected !== undefined && expected !== t.datatype) {
      return `output '${t.name}' of model '${model}' has datatype ${t.datatype} but the model configuration declares ${expected}`;
    }
    if (cfg.reshape === undefined) {
      const batched = this.#spec.config.max_batch_size > 0;
      const dims = batched ? t.shape.slice(1) : t.shape;
      const ok =
        (!batched || t.shape.length >= 1) &&
        dims.length === cfg.dims.length &&
        dims.every((d, i) => cfg.dims[i] === -1 || cfg.dims[i] === d);
      if (!ok) {
        const declared = batched ? [-1, ...cfg.dims] : cfg.dims;
        return `output '${t.name}' of model '${model}' has shape [${t.shape.join(',')}] but the model configuration declares [${declared.join(',')}]`;
      }
    }
    return undefined;
  }

  #onExecuteDone(h: Frame['header'], payload: Uint8Array): void {
    const batch = this.#batches.get(h.batch as number);
    if (batch === undefined) return;
    const doneAt = process.hrtime.bigint();
    if (typeof h.error === 'string') {
      // Logged as Triton's stub logs it, then answered as its backend answers each request.
      this.#settings.log?.error(
        `Failed to process the request(s) for model '${this.name}', message: ${h.error}`,
      );
      this.#release(h.batch as number, batch);
      this.#failBatch(
        batch,
        `Failed to process the request(s) for model instance '${this.name}', message: ${h.error}`,
      );
      return;
    }
    // A null entry: the request is answered through its response sender (Triton allows it for
    // non-decoupled models too); it finishes with that sender's final flag.
    const responses = h.responses as (Record<string, unknown> | null)[] | undefined;
    if (responses !== undefined) {
      responses.forEach((entry, i) => {
        const request = batch.requests[i];
        if (entry === null || request === undefined || batch.finished[i] === true) return;
        batch.finished[i] = true;
        request.respond({ ...this.#response(entry, payload), final: true });
      });
    }
    this.#finishExecute(batch, doneAt, process.hrtime.bigint() - doneAt);
    if (batch.finished.every(Boolean)) this.#release(h.batch as number, batch);
    else this.#boundOpenRequests(h.batch as number, batch);
  }

  #onStreamResponse(h: Frame['header'], payload: Uint8Array): void {
    const batch = this.#batches.get(h.batch as number);
    const index = h.request as number;
    const request = batch?.requests[index];
    if (batch === undefined || request === undefined || batch.finished[index] === true) return;
    const final = h.final === true;
    if (final) batch.finished[index] = true;
    const hasResponse = h.error !== undefined || h.outputs !== undefined;
    const response = hasResponse ? this.#response(h, payload) : {};
    if (!this.#decoupled && 'outputs' in response) batch.answered[index] = true;
    request.respond({ ...response, final });
    if (batch.executeDone && batch.finished.every(Boolean)) this.#release(h.batch as number, batch);
  }

  /**
   * A decoupled model's `async def execute` raised (or returned a value) after the instance had
   * moved on: the stub logged it; the call's requests still open fail with it.
   */
  #onBackgroundError(h: Frame['header']): void {
    const batch = this.#batches.get(h.batch as number);
    if (batch === undefined) return;
    this.#release(h.batch as number, batch);
    this.#failBatch(
      batch,
      `Failed to process the request(s) for model instance '${this.name}', message: ${String(h.error)}`,
    );
  }

  #onLog(h: Frame['header']): void {
    const log = this.#settings.log;
    if (log === undefined) return;
    const message = String(h.message);
    switch (h.level) {
      case 1:
        log.warn(message);
        return;
      case 2:
        log.error(message);
        return;
      case 3:
        log.verbose(1, message);
        return;
      default:
        log.info(message);
    }
  }

  /** A BLS request from the model: run it on the server, answer with outputs or the error. */
  async #onBls(stub: StubProcess, h: Frame['header'], payload: Uint8Array): Promise<void> {
    const call = h.call as number;
    const fail = (kind: string, message: string): void =>
      stub.send({ type: 'bls_response', call, error: { code: kind, message } });
    if (this.#host === undefined) {
      fail('UNAVAILABLE', 'BLS is not available: the model instance has no server to run requests on');
      return;
    }
    try {
      const inputs = decodeTensors(h.inputs, payload, 'input');
      const parameters = parametersFromWire(h.parameters) ?? {};
      const timeout = Number(h.timeout ?? 0);
      const request: CoreInferRequest = {
        modelName: typeof h.model_name === 'string' ? h.model_name : '',
        modelVersion: typeof h.model_version === 'string' ? h.model_version : '',
        ...(typeof h.request_id === 'string' && h.request_id !== '' ? { id: h.request_id } : {}),
        parameters: timeout > 0 ? { ...parameters, timeout } : parameters,
        inputs: inputs.map((t) => ({ name: t.name, datatype: t.datatype, shape: t.shape, data: t.data })),
        outputs: ((h.requested_outputs ?? []) as string[]).map((name) => ({ name })),
      };
      // Built with `trace=request.trace()` of a traced request: traced as its child (Triton's BLS).
      const parent = typeof h.trace === 'number' ? this.#liveTrace(h.trace) : undefined;
      const response = await this.#host.infer(
        parent !== undefined ? { ...request, parentTrace: parent } : request,
      );
      const out = new PayloadBuilder();
      const refs = response.outputs.map((o) => out.add(o.tensor));
      const answered = parametersToWire(response.parameters);
      stub.send(
        {
          type: 'bls_response',
          call,
          outputs: refs,
          ...(answered.length > 0 ? { parameters: answered } : {}),
        },
        out.chunks,
      );
    } catch (error) {
      if (error instanceof ServerError) fail(error.kind, error.message);
      else fail('INTERNAL', error instanceof Error ? error.message : String(error));
    }
  }

  /** The trace of a request this instance still holds, by trace id. */
  #liveTrace(id: number): InstanceRequest['trace'] {
    for (const batch of this.#batches.values()) {
      const found = batch.requests.find((r, i) => r.trace?.id === id && batch.finished[i] !== true);
      if (found !== undefined) return found.trace;
    }
    return undefined;
  }

  /** Fails every request the instance still holds (it is going away). */
  #failRemaining(why: string): void {
    for (const [id, batch] of this.#batches) {
      this.#release(id, batch);
      this.#failBatch(
        batch,
        `Failed to process the request(s) for model instance '${this.name}', message: ${why}`,
      );
    }
  }

  /**
   * Runs `finalize` and stops the stub (killed if it does not finish in `stub-timeout-seconds`);
   * a request still without its final response then gets an error one.
   */
  dispose(): Promise<void> {
    this.#disposed ??= (async () => {
      this.#closing = true;
      if (this.#starting !== undefined) await this.#starting;
      const stub = this.#stub;
      this.#stub = undefined;
      const why = `the model instance was unloaded before the request received its final response`;
      if (stub === undefined || !stub.alive) {
        this.#failRemaining(why);
        return;
      }
      try {
        const done = stub.waitFor(['finalized'], this.#stubTimeoutMs, `finalize of '${this.name}'`);
        stub.send({ type: 'finalize' });
        const frame = await done;
        if (typeof frame.header.error === 'string') {
          this.#settings.log?.error(
            `finalize of model instance '${this.name}' failed: ${frame.header.error}`,
          );
        }
      } catch (error) {
        this.#settings.log?.error(error instanceof Error ? error.message : String(error));
      }
      await stub.stop(2000);
      this.#settings.customMetrics?.release(stub);
      this.#failRemaining(why);
    })();
    return this.#disposed;
  }
}

/** The backend factory's work: one Python model instance. */
export function createPythonInstance(
  spec: BackendInstanceSpec,
  options: PythonInstanceOptions,
): Promise<PythonModelInstance> {
  return PythonModelInstance.create(spec, options);
}
