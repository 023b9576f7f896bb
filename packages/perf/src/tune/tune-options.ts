/**
 * The tuner's options (model-analyzer-ts): what to sweep, how to measure each point, and what
 * "best" means. Names follow Triton Model Analyzer's `profile` options where one exists
 * (`run_config_search_max_instance_count` → `maxInstanceCount`, `latency_budget`, `min_throughput`,
 * `concurrency`); the defaults are smaller than Model Analyzer's (see the package README).
 * @packageDocumentation
 */
import type { PerfOptions } from '../options/perf-options.js';

/** Which latency a budget applies to (Model Analyzer's constraint is `perf_latency_p99`). */
export type LatencyMetric = 'p50' | 'p90' | 'p95' | 'p99' | 'avg';

/** Every latency metric, in the order tables print them. */
export const LATENCY_METRICS: readonly LatencyMetric[] = ['p50', 'p90', 'p95', 'p99', 'avg'];

/** One dynamic-batching choice of the sweep: `off`, or on with these settings. */
export type DynamicBatchingChoice =
  | { readonly enabled: false }
  | {
      readonly enabled: true;
      /** `preferred_batch_size` ([] = none: the batcher forms the largest batch it can). */
      readonly preferredBatchSize: readonly number[];
      /** `max_queue_delay_microseconds` (Triton's default 0). */
      readonly maxQueueDelayMicroseconds: number;
    };

/** The configuration space (Model Analyzer's automatic brute search, bounded explicitly). */
export interface SearchSpaceOptions {
  /** Instance counts to try (`run_config_search_min/max_instance_count`; default 1 and 2). */
  readonly instanceCounts: readonly number[];
  /**
   * `max_batch_size` values to try (`run_config_search_min/max_model_batch_size`, powers of two;
   * default 1, 2, 4, 8). Ignored for a model whose `max_batch_size` is 0 (it cannot batch).
   */
  readonly maxBatchSizes: readonly number[];
  /** Dynamic batching choices (default: off, and on with Triton's default settings). */
  readonly dynamicBatching: readonly DynamicBatchingChoice[];
  /**
   * onnxruntime's `intra_op_thread_count` per instance (only for onnxruntime models; [] = leave the
   * model's own setting; default []).
   */
  readonly intraOpThreadCounts: readonly number[];
  /** Client concurrencies to measure each configuration at (default 1, 2, 4, …, 16). */
  readonly concurrency: readonly number[];
  /** Model Analyzer's `run_config_search_disable`: measure only the model's own configuration. */
  readonly searchDisabled: boolean;
  /** A bound on the number of configurations (the sweep is refused beyond it; default 64). */
  readonly maxConfigs: number;
}

/** What the best configuration must satisfy (Model Analyzer's `constraints`). */
export interface TuneConstraints {
  /** `latency_budget` in ms on {@link TuneConstraints.latencyMetric} (undefined = none). */
  readonly latencyBudgetMs: number | undefined;
  /** Which latency the budget bounds (default p99, Model Analyzer's `perf_latency_p99`). */
  readonly latencyMetric: LatencyMetric;
  /** `min_throughput` in infer/sec (undefined = none). */
  readonly minThroughput: number | undefined;
}

/** Everything {@link tune} needs. */
export interface TuneOptions extends TuneConstraints {
  /** The model to tune (Model Analyzer's `profile_models`, one model here). */
  readonly modelName: string;
  /** '' = the server's choice. */
  readonly modelVersion: string;
  /** Server endpoint and protocol (Model Analyzer's `triton_http_endpoint` / `client_protocol`). */
  readonly url: string;
  readonly protocol: PerfOptions['protocol'];
  readonly space: SearchSpaceOptions;
  /**
   * The perf run of each measurement: every perf option except the model, endpoint and load mode,
   * which the tuner sets (default: `-p 1000`, `-r 5`, random data; Model Analyzer's
   * `perf_analyzer_flags`).
   */
  readonly perf: Partial<Omit<PerfOptions, 'modelName' | 'modelVersion' | 'url' | 'protocol' | 'load'>>;
  /**
   * Measurements whose throughput is within this many percent of the best are ties, decided by
   * fewer resources (instances × threads, then smaller batches, then lower concurrency). Default 5.
   */
  readonly tieTolerancePercent: number;
  /**
   * Stop raising the concurrency of a configuration once a measurement is over the latency budget
   * (a higher concurrency only queues more; Model Analyzer stops its concurrency sweep early too).
   * Default true.
   */
  readonly earlyExit: boolean;
  /**
   * Only measurements that met perf_analyzer's stability criterion can win (default true; perf_analyzer
   * fails such a run, so Model Analyzer has no measurement for it). Unstable ones are still reported.
   */
  readonly requireStable: boolean;
  /** How long to wait for a configuration to become ready after the load call (default 60 s). */
  readonly readyTimeoutMs: number;
}

/** The tuner's defaults (smaller than Model Analyzer's 1–5 instances, 1–128 batch, 1–1024 concurrency). */
export const TUNE_DEFAULTS = {
  modelVersion: '',
  protocol: 'http',
  latencyBudgetMs: undefined,
  latencyMetric: 'p99',
  minThroughput: undefined,
  space: {
    instanceCounts: [1, 2],
    maxBatchSizes: [1, 2, 4, 8],
    dynamicBatching: [
      { enabled: false },
      { enabled: true, preferredBatchSize: [], maxQueueDelayMicroseconds: 0 },
    ],
    intraOpThreadCounts: [],
    concurrency: [1, 2, 4, 8, 16],
    searchDisabled: false,
    maxConfigs: 64,
  },
  perf: { measurementIntervalMs: 1000, maxTrials: 5 },
  tieTolerancePercent: 5,
  earlyExit: true,
  requireStable: true,
  readyTimeoutMs: 60_000,
} as const satisfies Omit<TuneOptions, 'modelName' | 'url'>;

/** Complete options from a partial set (the space merged field by field). */
export function tuneOptions(
  given: Partial<Omit<TuneOptions, 'space'>> & {
    readonly modelName: string;
    readonly url: string;
    readonly space?: Partial<SearchSpaceOptions>;
  },
): TuneOptions {
  return {
    ...TUNE_DEFAULTS,
    ...given,
    space: { ...TUNE_DEFAULTS.space, ...given.space },
    perf: { ...TUNE_DEFAULTS.perf, ...given.perf },
  };
}

/** Powers of two from `min` to `max` inclusive (Model Analyzer's automatic batch/concurrency sweep). */
export function powersOfTwo(min: number, max: number): number[] {
  const values: number[] = [];
  for (let v = 1; v <= max; v *= 2) if (v >= min) values.push(v);
  return values;
}
