/**
 * Per model-version inference statistics, accounted exactly as Triton's statistics extension does.
 *
 * - `success` / `fail`: one count per request, duration = request end − request start (when the
 *   core starts it, as Triton's `request_start_ns`; not when its bytes arrived).
 * - `queue`: one count per successful request (Triton includes cache hits; perf_analyzer looks for
 *   the version whose `queue.count` grew), duration = time from its enqueueing to the start of its execution.
 * - `compute_input` / `compute_infer` / `compute_output`: one count per successful request; every
 *   request of a batch is charged the whole batch's durations.
 * - `inference_count`: batch rows of successful requests; `execution_count`: successful model
 *   executions; `batch_stats`: one entry per executed batch size, one count per execution.
 * - `last_inference`: ms since the epoch when the last request finished (success or failure).
 * - `cache_hit` / `cache_miss` (response cache): a hit counts as a success with its queue time and a
 *   `cache_hit` (the lookup), nothing else; a miss adds its lookup and insertion time to
 *   `cache_miss` and to the request's `success` time, as Triton's stats aggregator does.
 *
 * All counters are `bigint` so they never lose precision. The Prometheus counters in `metrics/`
 * read the same object; their `*_duration_us` values are accumulated per request in whole
 * microseconds (`ns / 1000` truncated per request), as Triton's metric reporter does.
 * @packageDocumentation
 */
import { Histogram, type HistogramSnapshot } from './histogram.js';
import {
  DEFAULT_FIRST_RESPONSE_BUCKETS,
  DEFAULT_METRICS_CONFIG,
  type MetricsConfig,
} from './metrics-config.js';
import { QuantileSummary, type SummarySnapshot } from './quantile-summary.js';

/**
 * Nanosecond timings of one execution, split like Triton's compute_input / compute_infer /
 * compute_output (what a backend's instance reports and the statistics add up).
 */
export interface ExecutionTimings {
  /** Preparing inputs for the backend (e.g. building ORT tensors, concatenating a batch). */
  readonly computeInputNs: bigint;
  /** The backend's own run. */
  readonly computeInferNs: bigint;
  /** Turning backend outputs into protocol tensors. */
  readonly computeOutputNs: bigint;
}

/** A cumulative `{count, ns}` pair (Triton's `StatisticDuration`). */
export interface DurationStat {
  readonly count: bigint;
  readonly ns: bigint;
}

/** Triton's `InferStatistics`. */
export interface InferStatsSnapshot {
  readonly success: DurationStat;
  readonly fail: DurationStat;
  readonly queue: DurationStat;
  readonly compute_input: DurationStat;
  readonly compute_infer: DurationStat;
  readonly compute_output: DurationStat;
  readonly cache_hit: DurationStat;
  readonly cache_miss: DurationStat;
}

/** Triton's `InferBatchStatistics`. */
export interface BatchStatsSnapshot {
  readonly batch_size: bigint;
  readonly compute_input: DurationStat;
  readonly compute_infer: DurationStat;
  readonly compute_output: DurationStat;
}

/** Why a request failed, as the `reason` label of `nv_inference_request_failure`. */
export type FailureReason = 'REJECTED' | 'CANCELED' | 'BACKEND' | 'OTHER';

/** Every {@link FailureReason}, in the order the metrics endpoint prints them. */
export const FAILURE_REASONS: readonly FailureReason[] = ['REJECTED', 'CANCELED', 'BACKEND', 'OTHER'];

/** Cumulative microsecond counters for the `nv_inference_*_duration_us` metrics. */
export interface MetricDurationsUs {
  readonly request: bigint;
  readonly queue: bigint;
  readonly computeInput: bigint;
  readonly computeInfer: bigint;
  readonly computeOutput: bigint;
  /** `nv_cache_hit_duration_per_model`: lookups that hit. */
  readonly cacheHit: bigint;
  /** `nv_cache_miss_duration_per_model`: lookups that missed plus their insertions. */
  readonly cacheMiss: bigint;
}

/** A consistent copy of one model version's statistics (wire field names, bigint values). */
export interface ModelStatisticsSnapshot {
  readonly name: string;
  readonly version: string;
  /** ms since the epoch of the last finished request; 0 when none yet. */
  readonly last_inference: bigint;
  readonly inference_count: bigint;
  readonly execution_count: bigint;
  readonly inference_stats: InferStatsSnapshot;
  /** Ascending by batch size. */
  readonly batch_stats: readonly BatchStatsSnapshot[];
  /** Failed requests by reason (metrics only; the sum equals `inference_stats.fail.count`). */
  readonly failuresByReason: Readonly<Record<FailureReason, bigint>>;
  /**
   * Requests received by a scheduler and not yet handed to a model instance (Triton's
   * `nv_inference_pending_request_count`: incremented on enqueue, decremented when execution starts).
   */
  readonly pendingRequests: number;
  /** Metric-side microsecond accumulators. */
  readonly durationsUs: MetricDurationsUs;
  /** Summaries and histograms, when `--metrics-config` enables them. */
  readonly latencyMetrics?: LatencyMetricsSnapshot;
  /** Whether the response cache serves this version (its `nv_cache_*_per_model` metrics are shown). */
  readonly responseCache: boolean;
}

/** What a request answered from the response cache cost; see {@link ModelStatistics.recordCacheHit}. */
export interface CacheHitRecord {
  /** Arrival → response ready. */
  readonly requestNs: bigint;
  /** Arrival at the scheduler → start of the lookup. */
  readonly queueNs: bigint;
  /** The lookup (hashing the request included). */
  readonly lookupNs: bigint;
}

/** What a successful request cost; see {@link ModelStatistics.recordSuccess}. */
export interface SuccessRecord {
  /** Rows in the request (1 when the model does not batch). */
  readonly batchSize: number;
  /** Arrival → response ready. */
  readonly requestNs: bigint;
  /** Arrival → execution start. */
  readonly queueNs: bigint;
  /** The durations of the execution the request was part of. */
  readonly timings: ExecutionTimings;
}

/** What a failed request cost; see {@link ModelStatistics.recordFailure}. */
export interface FailureRecord {
  /** Arrival → failure. */
  readonly requestNs: bigint;
  readonly reason: FailureReason;
}

/** The five per-request latencies that have `nv_inference_*_summary_us` summaries (Triton's order). */
export const LATENCY_NAMES = ['request', 'queue', 'computeInput', 'computeInfer', 'computeOutput'] as const;

/** One of {@link LATENCY_NAMES}. */
export type LatencyName = (typeof LATENCY_NAMES)[number];

/** The optional latency metrics of one version (`--metrics-config`, `model_metrics`). */
export interface LatencyMetricsSnapshot {
  /** Per-request microsecond summaries (`summary_latencies=true`). */
  readonly summaries?: Readonly<Record<LatencyName, SummarySnapshot>>;
  /** Request → first response, whole ms (`histogram_latencies=true`, decoupled models only). */
  readonly firstResponse?: HistogramSnapshot;
}

/** What {@link ModelStatistics.configureLatencyMetrics} is told about the model. */
export interface ModelLatencyMetricsOptions {
  /** `model_transaction_policy.decoupled`. */
  readonly decoupled: boolean;
  /** `model_metrics` buckets for the first-response histogram, when the config sets them. */
  readonly firstResponseBuckets?: readonly number[];
}

// Counters are plain numbers while they are recorded (exact far beyond any count a process reaches,
// 2^53) and bigint in snapshots: recording runs per request and a bigint operation allocates.
class MutableDuration {
  count = 0;
  ns = 0n;
  add(ns: bigint): void {
    this.count += 1;
    this.ns += ns;
  }
  /** Adds time without a count (a miss's cache time on top of its request's success time). */
  addTime(ns: bigint): void {
    this.ns += ns;
  }
  freeze(): DurationStat {
    return { count: BigInt(this.count), ns: this.ns };
  }
}

class MutableBatchStat {
  readonly computeInput = new MutableDuration();
  readonly computeInfer = new MutableDuration();
  readonly computeOutput = new MutableDuration();
}

/** Whole microseconds of a non-negative duration (exact: durations are far below 2^53 ns). */
function wholeUs(ns: bigint): number {
  return Math.trunc(Number(ns) / 1000);
}

/** Converts a non-negative duration to bigint ns, rejecting nonsense early. */
function checkNs(value: bigint, field: string): bigint {
  if (value < 0n) throw new RangeError(`statistics: ${field} must not be negative (got ${value})`);
  return value;
}

/**
 * The statistics of one model version. Schedulers and the core record into it; the statistics
 * endpoint and the metrics endpoint read {@link ModelStatistics.snapshot}.
 */
export class ModelStatistics {
  readonly name: string;
  readonly version: string;

  private lastInferenceMs = 0;
  private inferenceCount = 0;
  private executionCount = 0;
  private readonly success = new MutableDuration();
  private readonly fail = new MutableDuration();
  private readonly queue = new MutableDuration();
  private readonly computeInput = new MutableDuration();
  private readonly computeInfer = new MutableDuration();
  private readonly computeOutput = new MutableDuration();
  private readonly batches = new Map<number, MutableBatchStat>();
  private readonly failures: Record<FailureReason, bigint> = {
    REJECTED: 0n,
    CANCELED: 0n,
    BACKEND: 0n,
    OTHER: 0n,
  };
  private pending = 0;
  private usRequest = 0;
  private usQueue = 0;
  private usComputeInput = 0;
  private usComputeInfer = 0;
  private usComputeOutput = 0;
  private readonly cacheHit = new MutableDuration();
  private readonly cacheMiss = new MutableDuration();
  private usCacheHit = 0;
  private usCacheMiss = 0;
  private cacheEnabled = false;
  private readonly now: () => number;
  private readonly metricsConfig: MetricsConfig;
  private readonly summaries: Record<LatencyName, QuantileSummary> | undefined;
  private firstResponse: Histogram | undefined;

  /**
   * @param name - Model name.
   * @param version - Model version (decimal string).
   * @param options - `now` returns ms since the epoch (injectable for tests); `metrics` is the
   *   server's `--metrics-config`.
   */
  constructor(name: string, version: string, options: { now?: () => number; metrics?: MetricsConfig } = {}) {
    this.name = name;
    this.version = version;
    this.now = options.now ?? Date.now;
    this.metricsConfig = options.metrics ?? DEFAULT_METRICS_CONFIG;
    if (this.metricsConfig.summaryLatencies) {
      const quantiles = this.metricsConfig.summaryQuantiles;
      const make = (): QuantileSummary => new QuantileSummary(quantiles, { now: this.now });
      this.summaries = {
        request: make(),
        queue: make(),
        computeInput: make(),
        computeInfer: make(),
        computeOutput: make(),
      };
    }
  }

  /**
   * Sets up the model-dependent latency metrics when a version loads: the first-response histogram
   * exists for a decoupled model under `histogram_latencies=true`, with the `model_metrics` buckets
   * or Triton's defaults. A reload starts a new histogram (Triton applies new buckets on reload).
   */
  configureLatencyMetrics(options: ModelLatencyMetricsOptions): void {
    this.firstResponse =
      this.metricsConfig.histogramLatencies && options.decoupled
        ? new Histogram(options.firstResponseBuckets ?? DEFAULT_FIRST_RESPONSE_BUCKETS)
        : undefined;
  }

  /**
   * Records the time from a request's start to its first response (decoupled models), in whole
   * milliseconds as Triton observes it.
   */
  recordFirstResponse(requestNs: bigint): void {
    this.firstResponse?.observe(Math.trunc(Number(checkNs(requestNs, 'requestNs')) / 1e6));
  }

  /** Records one request that completed successfully. */
  recordSuccess(record: SuccessRecord): void {
    const requestNs = checkNs(record.requestNs, 'requestNs');
    const queueNs = checkNs(record.queueNs, 'queueNs');
    const { computeInputNs, computeInferNs, computeOutputNs } = record.timings;
    if (!Number.isSafeInteger(record.batchSize) || record.batchSize < 1) {
      throw new RangeError(`statistics: batchSize must be a positive integer (got ${record.batchSize})`);
    }
    this.success.add(requestNs);
    this.queue.add(queueNs);
    this.computeInput.add(checkNs(computeInputNs, 'computeInputNs'));
    this.computeInfer.add(checkNs(computeInferNs, 'computeInferNs'));
    this.computeOutput.add(checkNs(computeOutputNs, 'computeOutputNs'));
    this.inferenceCount += record.batchSize;
    this.usRequest += wholeUs(requestNs);
    this.usQueue += wholeUs(queueNs);
    this.usComputeInput += wholeUs(computeInputNs);
    this.usComputeInfer += wholeUs(computeInferNs);
    this.usComputeOutput += wholeUs(computeOutputNs);
    const summaries = this.summaries;
    if (summaries !== undefined) {
      summaries.request.observe(wholeUs(requestNs));
      summaries.queue.observe(wholeUs(queueNs));
      summaries.computeInput.observe(wholeUs(computeInputNs));
      summaries.computeInfer.observe(wholeUs(computeInferNs));
      summaries.computeOutput.observe(wholeUs(computeOutputNs));
    }
    this.lastInferenceMs = Math.trunc(this.now());
  }

  /** Records one request that failed (rejected, cancelled, backend error, or anything else). */
  recordFailure(record: FailureRecord): void {
    const requestNs = checkNs(record.requestNs, 'requestNs');
    this.fail.add(requestNs);
    this.failures[record.reason] += 1n;
    this.lastInferenceMs = Math.trunc(this.now());
  }

  /** Marks this version as served through the response cache (its cache metrics are shown). */
  enableResponseCache(): void {
    this.cacheEnabled = true;
  }

  /**
   * Records one request answered from the response cache, as Triton's `UpdateSuccessCacheHit`: a
   * success with its queue time and a `cache_hit`; no compute time, no inference or execution count.
   */
  recordCacheHit(record: CacheHitRecord): void {
    const requestNs = checkNs(record.requestNs, 'requestNs');
    const queueNs = checkNs(record.queueNs, 'queueNs');
    const lookupNs = checkNs(record.lookupNs, 'lookupNs');
    this.success.add(requestNs);
    this.queue.add(queueNs);
    this.cacheHit.add(lookupNs);
    this.usRequest += wholeUs(requestNs);
    this.usQueue += wholeUs(queueNs);
    this.usCacheHit += wholeUs(lookupNs);
  }

  /**
   * Records one cache miss, as Triton's `UpdateSuccessCacheMiss`: the lookup and the insertion of the
   * computed response (`missNs`) count as `cache_miss` and are added to the request's `success` time
   * (the request itself was recorded by the scheduler that ran it).
   */
  recordCacheMiss(missNs: bigint): void {
    const ns = checkNs(missNs, 'missNs');
    this.cacheMiss.add(ns);
    this.success.addTime(ns);
    this.usRequest += wholeUs(ns);
    this.usCacheMiss += wholeUs(ns);
  }

  /** Records one successful model execution of `batchSize` rows. */
  recordExecution(batchSize: number, timings: ExecutionTimings): void {
    if (!Number.isSafeInteger(batchSize) || batchSize < 1) {
      throw new RangeError(`statistics: batch size must be a positive integer (got ${batchSize})`);
    }
    let stat = this.batches.get(batchSize);
    if (stat === undefined) {
      stat = new MutableBatchStat();
      this.batches.set(batchSize, stat);
    }
    stat.computeInput.add(checkNs(timings.computeInputNs, 'computeInputNs'));
    stat.computeInfer.add(checkNs(timings.computeInferNs, 'computeInferNs'));
    stat.computeOutput.add(checkNs(timings.computeOutputNs, 'computeOutputNs'));
    this.executionCount += 1;
  }

  /** Adjusts the pending-request gauge (+1 when a request enters a scheduler, −1 when it leaves). */
  adjustPending(delta: number): void {
    this.pending = Math.max(0, this.pending + delta);
  }

  /** Requests waiting for an instance right now (see the snapshot's `pendingRequests`). */
  get pendingRequests(): number {
    return this.pending;
  }

  /** A consistent copy of every counter. */
  snapshot(): ModelStatisticsSnapshot {
    const batch_stats = [...this.batches.entries()]
      .sort(([a], [b]) => a - b)
      .map(([size, s]) => ({
        batch_size: BigInt(size),
        compute_input: s.computeInput.freeze(),
        compute_infer: s.computeInfer.freeze(),
        compute_output: s.computeOutput.freeze(),
      }));
    return {
      name: this.name,
      version: this.version,
      last_inference: BigInt(this.lastInferenceMs),
      inference_count: BigInt(this.inferenceCount),
      execution_count: BigInt(this.executionCount),
      inference_stats: {
        success: this.success.freeze(),
        fail: this.fail.freeze(),
        queue: this.queue.freeze(),
        compute_input: this.computeInput.freeze(),
        compute_infer: this.computeInfer.freeze(),
        compute_output: this.computeOutput.freeze(),
        cache_hit: this.cacheHit.freeze(),
        cache_miss: this.cacheMiss.freeze(),
      },
      batch_stats,
      failuresByReason: { ...this.failures },
      pendingRequests: this.pending,
      durationsUs: {
        request: BigInt(this.usRequest),
        queue: BigInt(this.usQueue),
        computeInput: BigInt(this.usComputeInput),
        computeInfer: BigInt(this.usComputeInfer),
        computeOutput: BigInt(this.usComputeOutput),
        cacheHit: BigInt(this.usCacheHit),
        cacheMiss: BigInt(this.usCacheMiss),
      },
      responseCache: this.cacheEnabled,
      ...(this.summaries !== undefined || this.firstResponse !== undefined
        ? { latencyMetrics: this.latencySnapshot() }
        : {}),
    };
  }

  private latencySnapshot(): LatencyMetricsSnapshot {
    const s = this.summaries;
    return {
      ...(s !== undefined
        ? {
            summaries: {
              request: s.request.snapshot(),
              queue: s.queue.snapshot(),
              computeInput: s.computeInput.snapshot(),
              computeInfer: s.computeInfer.snapshot(),
              computeOutput: s.computeOutput.snapshot(),
            },
          }
        : {}),
      ...(this.firstResponse !== undefined ? { firstResponse: this.firstResponse.snapshot() } : {}),
    };
  }
}
