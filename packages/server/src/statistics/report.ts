/**
 * The neutral statistics model: what the core answers a statistics request with, field for field
 * Triton's `inference.ModelStatistics` message (snake_case names as in the `.proto` and the JSON
 * body; every 64-bit counter a `bigint`, so nothing is rounded). Each front end converts it to its
 * wire: `http/statistics-json.ts` writes the JSON text, `grpc/handlers/statistics.ts` builds the
 * protobuf message. Nothing here knows about either wire.
 * @packageDocumentation
 */
import type { ModelStatisticsSnapshot } from './model-statistics.js';

/** Triton's `StatisticDuration`: a cumulative count and total duration in ns. */
export interface StatisticDuration {
  readonly count: bigint;
  readonly ns: bigint;
}

/** Triton's `InferStatistics`. */
export interface InferStatistics {
  readonly success: StatisticDuration;
  readonly fail: StatisticDuration;
  readonly queue: StatisticDuration;
  readonly compute_input: StatisticDuration;
  readonly compute_infer: StatisticDuration;
  readonly compute_output: StatisticDuration;
  readonly cache_hit: StatisticDuration;
  readonly cache_miss: StatisticDuration;
}

/** Triton's `InferResponseStatistics` (decoupled models, per response index). */
export interface InferResponseStatistics {
  readonly compute_infer: StatisticDuration;
  readonly compute_output: StatisticDuration;
  readonly success: StatisticDuration;
  readonly fail: StatisticDuration;
  readonly empty_response: StatisticDuration;
  readonly cancel: StatisticDuration;
}

/** Triton's `InferBatchStatistics`. */
export interface InferBatchStatistics {
  readonly batch_size: bigint;
  readonly compute_input: StatisticDuration;
  readonly compute_infer: StatisticDuration;
  readonly compute_output: StatisticDuration;
}

/** Triton's `MemoryUsage` (`id` is an int64 on the wire). */
export interface MemoryUsage {
  readonly type: string;
  readonly id: bigint;
  readonly byte_size: bigint;
}

/** Triton's `ModelStatistics`: one model version's statistics, as every wire reports them. */
export interface ModelStatisticsReport {
  readonly name: string;
  readonly version: string;
  /** ms since the epoch of the last finished request; 0 when none yet. */
  readonly last_inference: bigint;
  readonly inference_count: bigint;
  readonly execution_count: bigint;
  readonly inference_stats: InferStatistics;
  /** Ascending by batch size. */
  readonly batch_stats: readonly InferBatchStatistics[];
  /** Always empty here: no backend reports memory usage. */
  readonly memory_usage: readonly MemoryUsage[];
  /** Keyed by response index; empty here (no per-response statistics are kept). */
  readonly response_stats: Readonly<Record<string, InferResponseStatistics>>;
}

/** The report of one snapshot (the metrics-only fields of the snapshot are left out). */
export function toStatisticsReport(s: ModelStatisticsSnapshot): ModelStatisticsReport {
  return {
    name: s.name,
    version: s.version,
    last_inference: s.last_inference,
    inference_count: s.inference_count,
    execution_count: s.execution_count,
    inference_stats: s.inference_stats,
    batch_stats: s.batch_stats,
    memory_usage: [],
    response_stats: {},
  };
}
