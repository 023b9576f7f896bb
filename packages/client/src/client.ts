/**
 * `TritonClient`: every server API of the official Python client, over a pluggable transport,
 * with timeouts, aborts, retries and one error hierarchy.
 * @packageDocumentation
 */
import type {
  CudaSharedMemoryRegion,
  GenerateCall,
  InferCall,
  InferenceStatistics,
  LoadModelOptions,
  LogSettings,
  ModelConfig,
  ModelMetadata,
  RepositoryIndexEntry,
  ServerMetadata,
  SystemSharedMemoryRegion,
  TraceSettings,
  TraceSettingsUpdate,
} from './api-types.js';
import {
  TritonAbortError,
  TritonConnectionError,
  TritonError,
  TritonInvalidArgumentError,
  TritonServerError,
} from './errors.js';
import {
  generateCallOf,
  generateResponses,
  type GenerateInputs,
  type GenerateOptions,
  type GenerateResponse,
} from './generate.js';
import { HttpTransport } from './http/http-transport.js';
import { InferResult } from './infer-result.js';
import { InferStatRecorder, type InferStat, type InferTimer } from './infer-stat.js';
import {
  silentLogger,
  type CallOptions,
  type ClientOptions,
  type ClientPlugin,
  type Logger,
  type QueryParams,
} from './options.js';
import type { CompressionAlgorithm } from '@tritonserver-ts/protocol';
import type { InferInput } from '@tritonserver-ts/protocol';
import type { InferRequestOptions } from '@tritonserver-ts/protocol/http';
import { splitRequestOptions } from '@tritonserver-ts/protocol/http';
import { type InferResponse } from '@tritonserver-ts/protocol';
import { backoffDelay, isRetryable, sleep, type BackoffPolicy } from './retry.js';
import { CallScope } from './call-scope.js';
import type { Transport, TransportContext } from './transport.js';

/** Options of {@link TritonClient.infer}: request options, per-call options, and a few infer-only ones. */
export interface InferOptions extends InferRequestOptions, CallOptions {
  /** Model version (default: the server's choice by version policy). */
  readonly modelVersion?: string | number;
  /** Compress the request body (`Content-Encoding`). */
  readonly requestCompression?: CompressionAlgorithm;
  /** Ask for a compressed response (`Accept-Encoding`). */
  readonly responseCompression?: CompressionAlgorithm;
  /**
   * Send the one input as a raw binary request (`Inference-Header-Content-Length: 0`): the body is
   * only the tensor bytes, no JSON; Triton accepts it for single-input models and answers with
   * every output binary. Request options that need JSON (outputs, id, sequence, priority, timeout,
   * parameters) cannot be combined with it.
   */
  readonly rawBinaryRequest?: boolean;
  /** Retry this inference on connection errors / 503 (default `false`: infer may not be idempotent). */
  readonly retry?: boolean;
}

/** Refuses a raw binary request that could not carry what the caller asked for. */
function checkRawBinaryRequest(inputs: readonly InferInput[], options: InferOptions): void {
  if (inputs.length !== 1 || inputs[0]?.data === undefined || inputs[0].sharedMemory !== undefined) {
    throw new TritonInvalidArgumentError('a raw binary request carries exactly one input with data');
  }
  const needJson = (
    ['outputs', 'requestId', 'sequenceId', 'priority', 'timeout', 'parameters', 'binaryDataOutput'] as const
  ).filter((key) => options[key] !== undefined);
  if (needJson.length > 0) {
    throw new TritonInvalidArgumentError(`a raw binary request cannot carry ${needJson.join(', ')}`);
  }
}

/** The options of an infer call given none. */
const NO_INFER_OPTIONS: InferOptions = Object.freeze({});

/** The neutral request options and HTTP hints of an infer call given none (shared: transports only read them). */
const NO_SPLIT = (() => {
  const { request, http } = splitRequestOptions({});
  return { request: Object.freeze(request), http: Object.freeze(http) };
})();

/**
 * The transport's view of an infer call, made once per call (retries send the same).
 * @throws TritonInvalidArgumentError for a raw binary request that cannot carry the options.
 */
function inferCallOf(
  modelName: string,
  inputs: readonly InferInput[],
  options: InferOptions | undefined,
): InferCall {
  if (options === undefined) {
    return {
      modelName,
      modelVersion: '',
      inputs,
      request: NO_SPLIT.request,
      requestCompression: undefined,
      responseCompression: undefined,
      http: NO_SPLIT.http,
    };
  }
  if (options.rawBinaryRequest === true) checkRawBinaryRequest(inputs, options);
  const { request, http } = splitRequestOptions(options);
  return {
    modelName,
    modelVersion: versionString(options.modelVersion),
    inputs,
    request,
    requestCompression: options.requestCompression,
    responseCompression: options.responseCompression,
    http: options.rawBinaryRequest === true ? { ...http, rawBinaryRequest: true } : http,
  };
}

/** A generate call on a transport without the generate extension (gRPC has none). */
function generateUnavailable(kind: string): TritonInvalidArgumentError {
  return new TritonInvalidArgumentError(
    `the generate extension is HTTP only (this client's transport is ${kind}); use the gRPC stream for decoupled models`,
  );
}

/** A stream whose connection failed after its first event. */
function streamBroken(cause: unknown): TritonConnectionError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new TritonConnectionError(`generate_stream broke off: ${detail}`, { cause });
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_RETRIES = 2;

function versionString(version: string | number | undefined): string {
  return version === undefined ? '' : String(version);
}

/**
 * A Triton Inference Server / KServe v2 client.
 *
 * ```ts
 * const client = new TritonClient({ url: 'localhost:8000' });
 * const result = await client.infer('simple', [
 *   { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16) },
 *   { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16) },
 * ]);
 * result.asTypedArray('OUTPUT0', 'INT32');
 * await client.close();
 * ```
 *
 * Read-only calls are retried (`maxRetries`, exponential backoff with jitter, `Retry-After`
 * honoured) on connection errors and HTTP 503; state-changing calls and `infer` are not, unless
 * `infer` is given `retry: true`. `timeoutMs` bounds the whole call including retries.
 */
export class TritonClient {
  /** The transport in use. */
  readonly transport: Transport;
  /** Frozen: handed to transports as they are when a call adds none. */
  readonly #headers: Readonly<Record<string, string>>;
  readonly #queryParams: Readonly<QueryParams>;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #backoff: BackoffPolicy;
  readonly #logger: Logger;
  #closed = false;
  #plugin: ClientPlugin | undefined;
  readonly #inferStat = new InferStatRecorder();

  constructor(options: ClientOptions) {
    if (options.transport !== undefined) {
      this.transport = options.transport;
    } else if (options.url !== undefined) {
      this.transport = new HttpTransport({
        url: options.url,
        ...(options.ssl === undefined ? {} : { ssl: options.ssl }),
        ...(options.connections === undefined ? {} : { connections: options.connections }),
      });
    } else {
      throw new TritonInvalidArgumentError('TritonClient needs a url or a transport');
    }
    this.#headers = Object.freeze({ ...options.headers });
    this.#queryParams = Object.freeze({ ...options.queryParams });
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.#backoff = { baseDelayMs: options.retryDelayMs ?? 200, maxDelayMs: options.maxRetryDelayMs ?? 8000 };
    this.#logger = options.logger ?? silentLogger;
    this.#plugin = options.plugin;
    this.#checkHeaders(this.#headers);
  }

  /** Installs a request plugin (replacing any previous one), like the Python client's `register_plugin`. */
  registerPlugin(plugin: ClientPlugin): void {
    this.#plugin = plugin;
  }

  /** The installed plugin, if any. */
  plugin(): ClientPlugin | undefined {
    return this.#plugin;
  }

  /** Removes the installed plugin. */
  unregisterPlugin(): void {
    this.#plugin = undefined;
  }

  #checkHeaders(headers: Readonly<Record<string, string>>): void {
    if (Object.keys(headers).some((h) => h.toLowerCase() === 'transfer-encoding')) {
      throw new TritonInvalidArgumentError('the Transfer-Encoding header cannot be set by the caller');
    }
  }

  /**
   * Opens a call: checks that the client is open, merges headers (running the plugin) and query
   * parameters, refuses an already aborted signal, and starts the call's timeout.
   */
  #open(operation: string, options: CallOptions, inferTimer: InferTimer | undefined): CallScope {
    if (this.#closed) throw new TritonInvalidArgumentError('the client is closed');
    let headers = this.#headers;
    if (options.headers !== undefined || this.#plugin !== undefined) {
      const merged = { ...this.#headers, ...options.headers };
      this.#plugin?.({ operation, headers: merged });
      this.#checkHeaders(merged);
      headers = merged;
    }
    const userSignal = options.signal;
    if (userSignal?.aborted === true) throw new TritonAbortError({ cause: userSignal.reason });
    return new CallScope(
      headers,
      options.queryParams === undefined
        ? this.#queryParams
        : { ...this.#queryParams, ...options.queryParams },
      options.timeoutMs ?? this.#timeoutMs,
      userSignal,
      inferTimer,
    );
  }

  async #call<T>(
    operation: string,
    retryable: boolean,
    options: CallOptions,
    run: (ctx: TransportContext) => Promise<T>,
    inferTimer?: InferTimer,
  ): Promise<T> {
    const scope = this.#open(operation, options, inferTimer);
    const maxRetries = retryable ? (options.maxRetries ?? this.#maxRetries) : 0;
    try {
      return await this.#attempts(scope, operation, maxRetries, run, inferTimer);
    } finally {
      scope.dispose();
    }
  }

  /** Runs `run` in `scope` until it succeeds or fails for good (up to `maxRetries` retries with backoff). */
  async #attempts<T>(
    scope: CallScope,
    operation: string,
    maxRetries: number,
    run: (ctx: TransportContext) => Promise<T>,
    inferTimer?: InferTimer,
  ): Promise<T> {
    const debug = this.#logger !== silentLogger;
    for (let attempt = 0; ; attempt++) {
      const started = debug ? performance.now() : 0;
      if (attempt > 0 && inferTimer !== undefined) {
        // A retry: its send time starts now (not with the failed attempt and the backoff).
        inferTimer.sendStart = process.hrtime.bigint();
        inferTimer.sendEnd = 0n;
        inferTimer.receiveStart = 0n;
      }
      try {
        const result = await run(scope.context);
        if (debug) {
          this.#logger.debug('triton call', { operation, attempt, ms: performance.now() - started });
        }
        return result;
      } catch (raw) {
        const error = scope.classify(raw);
        if (!(error instanceof TritonError) || attempt >= maxRetries || !isRetryable(error)) throw error;
        const delay = backoffDelay(
          attempt,
          this.#backoff,
          error instanceof TritonServerError ? error.retryAfterMs : undefined,
        );
        this.#logger.warn('triton call failed, retrying', {
          operation,
          attempt,
          delayMs: Math.round(delay),
          error: error.message,
        });
        try {
          await sleep(delay, scope.signal);
        } catch (sleepError) {
          throw scope.classify(sleepError);
        }
      }
    }
  }

  /** `GET v2/health/live`: true iff the server answers 200. */
  isServerLive(options: CallOptions = {}): Promise<boolean> {
    return this.#call('isServerLive', true, options, (ctx) => this.transport.isServerLive(ctx));
  }

  /** `GET v2/health/ready`: true iff the server answers 200. */
  isServerReady(options: CallOptions = {}): Promise<boolean> {
    return this.#call('isServerReady', true, options, (ctx) => this.transport.isServerReady(ctx));
  }

  /** `GET v2/models/{m}[/versions/{v}]/ready`: true iff the server answers 200. */
  isModelReady(
    modelName: string,
    modelVersion?: string | number,
    options: CallOptions = {},
  ): Promise<boolean> {
    return this.#call('isModelReady', true, options, (ctx) =>
      this.transport.isModelReady(modelName, versionString(modelVersion), ctx),
    );
  }

  /** `GET v2`: server name, version and extensions. */
  getServerMetadata(options: CallOptions = {}): Promise<ServerMetadata> {
    return this.#call('getServerMetadata', true, options, (ctx) => this.transport.getServerMetadata(ctx));
  }

  /** `GET v2/models/{m}[/versions/{v}]`: inputs, outputs, platform, versions. */
  getModelMetadata(
    modelName: string,
    modelVersion?: string | number,
    options: CallOptions = {},
  ): Promise<ModelMetadata> {
    return this.#call('getModelMetadata', true, options, (ctx) =>
      this.transport.getModelMetadata(modelName, versionString(modelVersion), ctx),
    );
  }

  /** `GET v2/models/{m}[/versions/{v}]/config`: the model configuration (proto field names). */
  getModelConfig(
    modelName: string,
    modelVersion?: string | number,
    options: CallOptions = {},
  ): Promise<ModelConfig> {
    return this.#call('getModelConfig', true, options, (ctx) =>
      this.transport.getModelConfig(modelName, versionString(modelVersion), ctx),
    );
  }

  /** `POST v2/repository/index` (no body): every model in the repository with its state. */
  getModelRepositoryIndex(options: CallOptions = {}): Promise<RepositoryIndexEntry[]> {
    return this.#call('getModelRepositoryIndex', true, options, (ctx) =>
      this.transport.getModelRepositoryIndex(ctx),
    );
  }

  /** `POST v2/repository/models/{m}/load`, optionally with a config override and model files. */
  loadModel(modelName: string, load: LoadModelOptions = {}, options: CallOptions = {}): Promise<void> {
    return this.#call('loadModel', false, options, (ctx) => this.transport.loadModel(modelName, load, ctx));
  }

  /** `POST v2/repository/models/{m}/unload` (`unload_dependents` is always sent, default false). */
  unloadModel(
    modelName: string,
    unload: { readonly unloadDependents?: boolean } = {},
    options: CallOptions = {},
  ): Promise<void> {
    return this.#call('unloadModel', false, options, (ctx) =>
      this.transport.unloadModel(modelName, unload.unloadDependents ?? false, ctx),
    );
  }

  /**
   * `GET v2/models/stats` (all models) or `v2/models/{m}[/versions/{v}]/stats`. Counters are
   * numbers, or bigints when beyond 2^53 − 1 (never silently rounded).
   */
  getInferenceStatistics(
    modelName = '',
    modelVersion?: string | number,
    options: CallOptions = {},
  ): Promise<InferenceStatistics> {
    return this.#call('getInferenceStatistics', true, options, (ctx) =>
      this.transport.getInferenceStatistics(modelName, versionString(modelVersion), ctx),
    );
  }

  /** `GET v2[/models/{m}]/trace/setting`. */
  getTraceSettings(modelName = '', options: CallOptions = {}): Promise<TraceSettings> {
    return this.#call('getTraceSettings', true, options, (ctx) =>
      this.transport.getTraceSettings(modelName, ctx),
    );
  }

  /** `POST v2[/models/{m}]/trace/setting`; a `null` value clears that setting. Returns the new settings. */
  updateTraceSettings(
    settings: TraceSettingsUpdate,
    modelName = '',
    options: CallOptions = {},
  ): Promise<TraceSettings> {
    return this.#call('updateTraceSettings', false, options, (ctx) =>
      this.transport.updateTraceSettings(modelName, settings, ctx),
    );
  }

  /** `GET v2/logging`. */
  getLogSettings(options: CallOptions = {}): Promise<LogSettings> {
    return this.#call('getLogSettings', true, options, (ctx) => this.transport.getLogSettings(ctx));
  }

  /** `POST v2/logging` with the settings to change. Returns the full settings. */
  updateLogSettings(settings: LogSettings, options: CallOptions = {}): Promise<LogSettings> {
    return this.#call('updateLogSettings', false, options, (ctx) =>
      this.transport.updateLogSettings(settings, ctx),
    );
  }

  /** `GET v2/systemsharedmemory[/region/{r}]/status`. */
  getSystemSharedMemoryStatus(
    regionName = '',
    options: CallOptions = {},
  ): Promise<SystemSharedMemoryRegion[]> {
    return this.#call('getSystemSharedMemoryStatus', true, options, (ctx) =>
      this.transport.getSystemSharedMemoryStatus(regionName, ctx),
    );
  }

  /** `POST v2/systemsharedmemory/region/{name}/register` with `{key, offset, byte_size}`. */
  registerSystemSharedMemory(
    name: string,
    key: string,
    byteSize: number,
    offset = 0,
    options: CallOptions = {},
  ): Promise<void> {
    return this.#call('registerSystemSharedMemory', false, options, (ctx) =>
      this.transport.registerSystemSharedMemory(name, key, byteSize, offset, ctx),
    );
  }

  /** `POST v2/systemsharedmemory[/region/{name}]/unregister` (no name: all regions). */
  unregisterSystemSharedMemory(name = '', options: CallOptions = {}): Promise<void> {
    return this.#call('unregisterSystemSharedMemory', false, options, (ctx) =>
      this.transport.unregisterSystemSharedMemory(name, ctx),
    );
  }

  /** `GET v2/cudasharedmemory[/region/{r}]/status`. */
  getCudaSharedMemoryStatus(regionName = '', options: CallOptions = {}): Promise<CudaSharedMemoryRegion[]> {
    return this.#call('getCudaSharedMemoryStatus', true, options, (ctx) =>
      this.transport.getCudaSharedMemoryStatus(regionName, ctx),
    );
  }

  /** `POST v2/cudasharedmemory/region/{name}/register` with the raw IPC handle (sent base64). */
  registerCudaSharedMemory(
    name: string,
    rawHandle: Uint8Array,
    deviceId: number,
    byteSize: number,
    options: CallOptions = {},
  ): Promise<void> {
    return this.#call('registerCudaSharedMemory', false, options, (ctx) =>
      this.transport.registerCudaSharedMemory(name, rawHandle, deviceId, byteSize, ctx),
    );
  }

  /** `POST v2/cudasharedmemory[/region/{name}]/unregister` (no name: all regions). */
  unregisterCudaSharedMemory(name = '', options: CallOptions = {}): Promise<void> {
    return this.#call('unregisterCudaSharedMemory', false, options, (ctx) =>
      this.transport.unregisterCudaSharedMemory(name, ctx),
    );
  }

  /**
   * Runs an inference. Inputs travel in the binary tensor extension unless `binaryData: false`
   * (per input or for all); outputs come back binary unless asked otherwise.
   *
   * Do not modify the inputs' data until the returned promise settles. Over HTTP, a binary tail of
   * 64 KiB or more (without `requestCompression`) is not copied into a new body: the socket reads
   * typed-array data where it lies (as `socket.write` does), after `infer` has returned, and again
   * on a retry. gRPC copies the data into the protobuf message.
   */
  infer(modelName: string, inputs: readonly InferInput[], options?: InferOptions): Promise<InferResult> {
    const start = process.hrtime.bigint();
    const timer: InferTimer = { sendStart: start, sendEnd: 0n, receiveStart: 0n };
    let call: InferCall;
    let scope: CallScope;
    const opts = options ?? NO_INFER_OPTIONS;
    try {
      call = inferCallOf(modelName, inputs, options);
      if (opts.retry === true) {
        return this.#call('infer', true, opts, (ctx) => this.transport.infer(call, ctx), timer).then(
          (response) => this.#inferred(response, start, timer),
        );
      }
      // No retries: one attempt, without the async layers of #call.
      scope = this.#open('infer', opts, timer);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    const started = this.#logger === silentLogger ? 0 : performance.now();
    let pending: Promise<InferResponse>;
    try {
      pending = this.transport.infer(call, scope.context);
    } catch (raw) {
      pending = Promise.reject(raw instanceof Error ? raw : new Error(String(raw)));
    }
    return pending.then(
      (response) => {
        scope.dispose();
        if (this.#logger !== silentLogger) {
          this.#logger.debug('triton call', {
            operation: 'infer',
            attempt: 0,
            ms: performance.now() - started,
          });
        }
        return this.#inferred(response, start, timer);
      },
      (raw: unknown) => {
        const error = scope.classify(raw);
        scope.dispose();
        throw error;
      },
    );
  }

  /**
   * Triton's generate extension, `POST v2/models/{m}[/versions/{v}]/generate` (HTTP only): the
   * inputs as JSON members by name (a string is BYTES; an array fills the input's shape), request
   * parameters apart, and the model's one response back with single-element outputs as scalars.
   * Errors, timeouts and retries as {@link TritonClient.infer} (not retried unless `retry: true`).
   *
   * ```ts
   * const answer = await client.generate('food_caption', { INPUT_IMAGE: base64 }, { parameters: { top_k: 1 } });
   * answer.values.TEXT; // 'Likely'
   * ```
   */
  generate(
    modelName: string,
    inputs: GenerateInputs,
    options: GenerateOptions = {},
  ): Promise<GenerateResponse> {
    const transport = this.transport;
    let call: GenerateCall;
    try {
      if (transport.generate === undefined) throw generateUnavailable(transport.kind);
      call = generateCallOf(modelName, inputs, options);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return this.#call('generate', options.retry === true, options, (ctx) =>
      (transport.generate as NonNullable<Transport['generate']>)(call, ctx),
    );
  }

  /**
   * Triton's generate extension as a stream, `POST …/generate_stream` (HTTP only): an async
   * iterable of the model's responses, one per Server-Sent Event, as they arrive (a decoupled
   * model's many, or another model's one). The request is sent when iteration starts.
   *
   * - Stop early (`break` out of `for await`, or abort `signal`) and the request is cancelled: the
   *   connection closes and the server cancels the model's request (`is_cancelled()`).
   * - An error before the first event is thrown as `infer` would throw it (`TritonServerError`
   *   with the HTTP status); an in-band `{"error": …}` event later is thrown from the iterator as
   *   `TritonServerError` (status 400, reason `UNKNOWN`: the server sends no status in-band).
   * - `timeoutMs` bounds the whole stream (default: the client's); 0 or Infinity for none.
   * - Not retried unless `retry: true`, and then only before the first event.
   *
   * ```ts
   * for await (const response of client.generateStream('food_caption', { INPUT_IMAGE: base64 })) {
   *   process.stdout.write(String(response.values.TEXT));
   * }
   * ```
   */
  generateStream(
    modelName: string,
    inputs: GenerateInputs,
    options: GenerateOptions = {},
  ): AsyncGenerator<GenerateResponse, void, undefined> {
    return this.#generateStream(modelName, inputs, options);
  }

  async *#generateStream(
    modelName: string,
    inputs: GenerateInputs,
    options: GenerateOptions,
  ): AsyncGenerator<GenerateResponse, void, undefined> {
    const transport = this.transport;
    const open = transport.openGenerateStream?.bind(transport);
    if (open === undefined) throw generateUnavailable(transport.kind);
    const call = generateCallOf(modelName, inputs, options);
    const scope = this.#open('generateStream', options, undefined);
    try {
      const maxRetries = options.retry === true ? (options.maxRetries ?? this.#maxRetries) : 0;
      const body = await this.#attempts(scope, 'generateStream', maxRetries, (ctx) => open(call, ctx));
      try {
        yield* generateResponses(body, transport.kind);
      } catch (raw) {
        throw scope.classify(raw instanceof TritonError ? raw : streamBroken(raw));
      }
    } finally {
      scope.dispose();
    }
  }

  /** The result of a successful inference, counted in {@link TritonClient.inferStat}. */
  #inferred(response: InferResponse, start: bigint, timer: InferTimer): InferResult {
    const result = new InferResult(response);
    this.#inferStat.record(start, timer, process.hrtime.bigint());
    return result;
  }

  /**
   * The client's cumulative inference statistics since it was created (Triton's
   * `ClientInferStat`): successful `infer` calls and the time spent in them, in sending and in
   * receiving. See {@link InferStat} for what each figure measures.
   *
   * ```ts
   * const before = client.inferStat();
   * // ... run inferences ...
   * const after = client.inferStat();
   * const n = after.completedRequestCount - before.completedRequestCount;
   * const avgSendUs = Number(after.cumulativeSendTimeNs - before.cumulativeSendTimeNs) / n / 1000;
   * ```
   */
  inferStat(): InferStat {
    return this.#inferStat.snapshot();
  }

  /** Closes pooled connections after in-flight calls finish; later calls throw. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.transport.close();
  }
}
