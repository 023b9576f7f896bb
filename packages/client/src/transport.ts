/**
 * The seam between `TritonClient` and a wire protocol. The HTTP and gRPC transports implement it,
 * so `TritonClient` (options, retries, timeouts, errors, results) stays the same for both. Only
 * transport-neutral types cross it: `infer` takes an {@link InferCall} (neutral request options
 * plus HTTP-only hints other wires ignore) and returns the neutral {@link InferResponse}.
 *
 * A transport throws `TritonServerError`, `TritonConnectionError` or `TritonProtocolError`; it
 * need not tell timeouts from aborts (the client does, from the signals it created).
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
import type { TransportKind } from './errors.js';
import type { InferTimer } from './infer-stat.js';
import type { QueryParams } from './query-params.js';
import type { InferResponse } from '@tritonserver-ts/protocol';
import type { GenerateResponse } from '@tritonserver-ts/protocol/http';

/** Per-call context handed to a transport. */
export interface TransportContext {
  /** Fires on user abort or timeout; the transport must stop work when it fires. */
  readonly signal: AbortSignal;
  /** Merged headers (client defaults + call). */
  readonly headers: Readonly<Record<string, string>>;
  /** Merged query parameters (client defaults + call). */
  readonly queryParams: Readonly<QueryParams>;
  /**
   * When the call's timeout expires (ms since the epoch), for transports that tell the server
   * (gRPC's deadline); absent when the call has no timeout. `signal` fires at the same moment.
   */
  readonly deadline?: number | undefined;
  /**
   * Only for `infer`: the attempt's timestamps, for the client's `InferStat`. The transport
   * stamps `sendEnd` (`process.hrtime.bigint()`) once the encoded request is handed to its wire
   * library and `receiveStart` when the response starts to arrive; a transport may ignore it.
   */
  readonly timer?: InferTimer | undefined;
  /**
   * The same cancellation as `signal`, followed without an `AbortSignal` (which `TritonClient`
   * makes only when a transport reads `signal`). Absent in contexts made elsewhere; see
   * `cancellationOf`.
   */
  readonly cancellation?: Cancellation;
}

/** Told once when a call is cancelled (timeout or user abort), with the same reason as `signal`. */
export interface CancellationListener {
  onCallAbort(reason: unknown): void;
}

/** A call's cancellation: the state of its `signal`, and listeners told when it fires. */
export interface Cancellation {
  readonly aborted: boolean;
  /** The abort reason (a `TritonTimeoutError` or `TritonAbortError`), once aborted. */
  readonly reason: unknown;
  /** Adds a listener, told once if the call is cancelled (not when it already was). */
  addListener(listener: CancellationListener): void;
  removeListener(listener: CancellationListener): void;
}

/** The operations of a Triton client, one per server API. */
export interface Transport {
  readonly kind: TransportKind;
  isServerLive(ctx: TransportContext): Promise<boolean>;
  isServerReady(ctx: TransportContext): Promise<boolean>;
  isModelReady(name: string, version: string, ctx: TransportContext): Promise<boolean>;
  getServerMetadata(ctx: TransportContext): Promise<ServerMetadata>;
  getModelMetadata(name: string, version: string, ctx: TransportContext): Promise<ModelMetadata>;
  getModelConfig(name: string, version: string, ctx: TransportContext): Promise<ModelConfig>;
  getModelRepositoryIndex(ctx: TransportContext): Promise<RepositoryIndexEntry[]>;
  loadModel(name: string, options: LoadModelOptions, ctx: TransportContext): Promise<void>;
  unloadModel(name: string, unloadDependents: boolean, ctx: TransportContext): Promise<void>;
  getInferenceStatistics(name: string, version: string, ctx: TransportContext): Promise<InferenceStatistics>;
  getTraceSettings(modelName: string, ctx: TransportContext): Promise<TraceSettings>;
  updateTraceSettings(
    modelName: string,
    settings: TraceSettingsUpdate,
    ctx: TransportContext,
  ): Promise<TraceSettings>;
  getLogSettings(ctx: TransportContext): Promise<LogSettings>;
  updateLogSettings(settings: LogSettings, ctx: TransportContext): Promise<LogSettings>;
  getSystemSharedMemoryStatus(region: string, ctx: TransportContext): Promise<SystemSharedMemoryRegion[]>;
  registerSystemSharedMemory(
    name: string,
    key: string,
    byteSize: number,
    offset: number,
    ctx: TransportContext,
  ): Promise<void>;
  unregisterSystemSharedMemory(name: string, ctx: TransportContext): Promise<void>;
  getCudaSharedMemoryStatus(region: string, ctx: TransportContext): Promise<CudaSharedMemoryRegion[]>;
  registerCudaSharedMemory(
    name: string,
    rawHandle: Uint8Array,
    deviceId: number,
    byteSize: number,
    ctx: TransportContext,
  ): Promise<void>;
  unregisterCudaSharedMemory(name: string, ctx: TransportContext): Promise<void>;
  infer(call: InferCall, ctx: TransportContext): Promise<InferResponse>;
  /** The generate extension (HTTP only): the model's one response. Absent on transports without it. */
  generate?(call: GenerateCall, ctx: TransportContext): Promise<GenerateResponse>;
  /**
   * The generate extension's stream (HTTP only): the Server-Sent Events body, once the server
   * answered 200; ending its iteration early must close the request. Absent on transports without it.
   */
  openGenerateStream?(call: GenerateCall, ctx: TransportContext): Promise<AsyncIterable<Uint8Array>>;
  /** Closes pooled connections; in-flight calls finish first. */
  close(): Promise<void>;
}
