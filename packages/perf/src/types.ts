/**
 * The data the perf engine's parts hand to each other: what the model looks like, the prepared
 * requests, one record per request sent, and the measured result of one load level. Plain typed
 * data; the parts are `model/` (profile), `data/` (requests), `load/` (records), `measure/`
 * (results) and `report/` (console, CSV, JSON).
 * @packageDocumentation
 */
import type { Datatype, InferInput, ModelConfig, TensorData } from '@tritonserver-ts/client';

/** One input or output as the model declares it. */
export interface TensorSpec {
  readonly name: string;
  readonly datatype: Datatype;
  /** Dims without the batch dimension (`-1` for a variable one). */
  readonly dims: readonly number[];
  readonly optional: boolean;
  readonly isShapeTensor: boolean;
}

/** What perf_analyzer reads of a model before loading it (metadata + config). */
export interface ModelProfile {
  readonly name: string;
  /** The version asked for ('' = the server's choice). */
  readonly version: string;
  /** 0 when the model does not batch. */
  readonly maxBatchSize: number;
  readonly inputs: readonly TensorSpec[];
  readonly outputs: readonly TensorSpec[];
  /** `model_transaction_policy.decoupled`. */
  readonly decoupled: boolean;
  /** `sequence_batching` is set. */
  readonly sequenceBatching: boolean;
  /** `dynamic_batching` is set. */
  readonly dynamicBatching: boolean;
  /** `response_cache.enable`. */
  readonly responseCacheEnabled: boolean;
  /** Ensemble steps' models (`ensemble_scheduling.step[]`), whose statistics are reported too. */
  readonly composingModels: readonly { readonly name: string; readonly version: string }[];
  /** The config as the server returned it. */
  readonly config: ModelConfig;
}

/** An expected output (`validation_data`). */
export interface ExpectedOutput {
  readonly datatype: Datatype;
  readonly shape: readonly number[];
  readonly data: TensorData;
}

/** One request's inputs, ready to send (batch dimension included when the model batches). */
export interface PreparedRequest {
  readonly inputs: readonly InferInput[];
  /** From `validation_data`: outputs the response must equal, by output name. */
  readonly expectedOutputs?: ReadonlyMap<string, ExpectedOutput>;
}

/**
 * The data a run sends, as perf_analyzer lays out `--input-data`: `streams[s][step]`. A model
 * without sequence batching has one stream whose steps requests cycle through; with sequence
 * batching each sequence replays one stream's steps in order.
 */
export interface InputDataset {
  readonly streams: readonly (readonly PreparedRequest[])[];
}

/** What happened to one request (times from `process.hrtime.bigint()`). */
export interface RequestRecord {
  /** When the request was issued. */
  readonly startNs: bigint;
  /** When its last response (or its error) arrived. */
  readonly endNs: bigint;
  /** Arrival of each response (one for a non-decoupled model; none when it failed). */
  readonly responseNs: readonly bigint[];
  /** Failed requests are counted as errors and left out of latencies and throughput. */
  readonly ok: boolean;
  readonly error?: string;
  /** Rate modes: issued later than its schedule (perf_analyzer's "Delayed Request Count"). */
  readonly delayed: boolean;
  /** Which data entry was sent (`--profile-export-file` writes its inputs). */
  readonly stream: number;
  readonly step: number;
  /** Sequence models: the sequence id and its flags. */
  readonly sequenceId?: number;
  readonly sequenceStart?: boolean;
  readonly sequenceEnd?: boolean;
}

/** Client-side figures of one load level (times in µs). */
export interface ClientSideStats {
  readonly requestCount: number;
  readonly responseCount: number;
  readonly errorCount: number;
  readonly delayedRequestCount: number;
  /** Sequences finished per second (sequence models). */
  readonly sequencePerSecond: number;
  readonly durationUs: number;
  /** Inferences per second: successful requests × batch size per second. */
  readonly throughput: number;
  /** Responses per second (differs from throughput only for decoupled models). */
  readonly responseThroughput: number;
  readonly avgLatencyUs: number;
  readonly stdLatencyUs: number;
  readonly minLatencyUs: number;
  readonly maxLatencyUs: number;
  /** p50, p90, p95, p99 and the `--percentile` one, keyed by percentile. */
  readonly percentileUs: Readonly<Record<number, number>>;
  /** Average time to encode and send a request (perf_analyzer's "Client Send"). */
  readonly avgSendUs: number;
  /** Average time to receive and decode a response ("Client Recv"). */
  readonly avgRecvUs: number;
  /** Average request latency minus send and receive ("response wait"). */
  readonly avgResponseWaitUs: number;
}

/** Server-side figures of one load level, from statistics deltas (times in µs, per request). */
export interface ServerSideStats {
  readonly inferenceCount: number;
  readonly executionCount: number;
  readonly successCount: number;
  /** Average server request latency (`success.ns / success.count`). */
  readonly avgRequestLatencyUs: number;
  /** Latency not in queue or compute (what perf_analyzer calls overhead). */
  readonly overheadUs: number;
  readonly queueUs: number;
  readonly computeInputUs: number;
  readonly computeInferUs: number;
  readonly computeOutputUs: number;
  readonly cacheHitCount: number;
  readonly cacheHitUs: number;
  readonly cacheMissCount: number;
  readonly cacheMissUs: number;
  /** Ensembles: each composing model's own figures. */
  readonly composing: readonly {
    readonly name: string;
    readonly version: string;
    readonly stats: ServerSideStats;
  }[];
}

/** `--collect-metrics`: averages and maxima over the level, per GPU uuid (none on CPU-only servers). */
export interface MetricsSummary {
  readonly gpuUtilization: Readonly<Record<string, number>>;
  readonly gpuPowerUsage: Readonly<Record<string, number>>;
  readonly gpuMemoryUsedBytes: Readonly<Record<string, number>>;
  readonly gpuMemoryTotalBytes: Readonly<Record<string, number>>;
  /** Scrapes taken. */
  readonly scrapes: number;
}

/** The load generator's own cost over the measured windows (this process, `process.cpuUsage()`). */
export interface GeneratorCost {
  readonly cpuUs: number;
  readonly cpuUsPerRequest: number;
  /** CPU time over wall time (1 = one core busy). */
  readonly cpuUtilization: number;
}

/**
 * One measurement window of a level as perf_analyzer's `-v` reports it (its `Pass [n]` line): the
 * window's own throughput and latency, or why the window has none.
 */
export interface WindowPass {
  /** 1-based window number at this level. */
  readonly trial: number;
  /** Successful requests × batch size per second over this window. */
  readonly throughput: number;
  readonly avgLatencyUs: number;
  /** Sample standard deviation of the window's latencies (µs). */
  readonly stdLatencyUs: number;
  /** The `--percentile` latency of the window (µs), when `--percentile` is given. */
  readonly percentileLatencyUs?: number;
  /** The window's error (no request ended in it): perf_analyzer prints it instead of the figures. */
  readonly error?: string;
}

/** The measured result of one load level (its stable windows merged). */
export interface LoadLevelResult {
  readonly mode: 'concurrency' | 'request_rate' | 'request_intervals';
  /** Concurrency, or requests per second (for `request_intervals`: the mean rate). */
  readonly level: number;
  /** Windows met the stability criterion (false: `-r` trials ran out; the last windows are reported). */
  readonly stable: boolean;
  /** Windows measured at this level (all trials). */
  readonly windows: number;
  /**
   * Every window measured at this level, in order (perf_analyzer's `-v` `Pass [n]` lines). Absent
   * in results built by hand; `runPerf` always sets it.
   */
  readonly passes?: readonly WindowPass[];
  /**
   * The level's stabilising latency (average, or `--percentile`) reached `-l`: perf_analyzer
   * reports no such level and ends the sweep there. Absent = false.
   */
  readonly overLatencyThreshold?: boolean;
  readonly client: ClientSideStats;
  readonly server: ServerSideStats;
  readonly metrics: MetricsSummary | undefined;
  readonly generator: GeneratorCost;
  /** Records of the reported windows, for `--profile-export-file`. */
  readonly records: readonly RequestRecord[];
  /**
   * Start and end of each reported window (`process.hrtime.bigint()`; a boundary two windows share
   * once), for `--profile-export-file`'s `window_boundaries`. Without it the export uses the span
   * of `records`.
   */
  readonly windowBoundariesNs?: readonly bigint[];
}

/** A whole perf run. */
export interface PerfRun {
  readonly model: ModelProfile;
  readonly results: readonly LoadLevelResult[];
  /** Wall-clock start (ms since the epoch). */
  readonly startedAtMs: number;
}

/** Progress of a run, for a progress line and for logs. */
export type PerfProgress =
  | { readonly kind: 'level-start'; readonly mode: LoadLevelResult['mode']; readonly level: number }
  | {
      readonly kind: 'window';
      readonly level: number;
      /** 1-based trial at this level. */
      readonly trial: number;
      readonly maxTrials: number;
      readonly throughput: number;
      readonly avgLatencyUs: number;
      readonly stable: boolean;
    }
  | { readonly kind: 'level-done'; readonly result: LoadLevelResult };

/** Optional hooks of {@link PerfRun | a run}. */
export interface PerfHooks {
  readonly onProgress?: (event: PerfProgress) => void;
  /** Aborts the run: in-flight requests finish, the levels measured so far are returned. */
  readonly signal?: AbortSignal;
  /**
   * perf_analyzer's stderr warnings during the run (several versions served, GPU metrics missing,
   * latency not stabilising in async mode). Why a level is left out is on the level itself.
   */
  readonly onWarning?: (message: string) => void;
}
