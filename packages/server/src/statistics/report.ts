/**
 * The neutral statistics model: what the core answers a statistics request with, field for field
 * Triton's `inference.ModelStatistics` message, the one definition in
 * `@tritonserver-ts/protocol` (`statistics.ts`) that the client also returns, here with every
 * 64-bit counter a `bigint`, so nothing is rounded. Each front end converts it to its
 * wire: `http/statistics-json.ts` writes the JSON text, `grpc/handlers/statistics.ts` builds the
 * protobuf message. Nothing here knows about either wire.
 * @packageDocumentation
 */
import type * as Protocol from '@tritonserver-ts/protocol';
import type { ModelStatisticsSnapshot } from './model-statistics.js';

/** Triton's `StatisticDuration` (the shared protocol type with `bigint` counters). */
export type StatisticDuration = Protocol.StatisticDuration<bigint>;

/** Triton's `InferStatistics`. */
export type InferStatistics = Protocol.InferStatistics<bigint>;

/** Triton's `InferResponseStatistics` (decoupled models, per response index). */
export type InferResponseStatistics = Protocol.InferResponseStatistics<bigint>;

/** Triton's `InferBatchStatistics`. */
export type InferBatchStatistics = Protocol.InferBatchStatistics<bigint>;

/** Triton's `MemoryUsage` (`id` is an int64 on the wire). */
export type MemoryUsage = Protocol.MemoryUsage<bigint>;

/**
 * Triton's `ModelStatistics`: one model version's statistics, as every wire reports them. The
 * core always gives `memory_usage` (empty: no backend reports memory usage) and `response_stats`
 * (empty: no per-response statistics are kept).
 */
export type ModelStatisticsReport = Required<Protocol.ModelStatistics<bigint>>;

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
