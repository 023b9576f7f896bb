/**
 * The statistics extension's messages, written once for both ends: field for field Triton's
 * `inference.ModelStatistics` and its parts (snake_case names as in the `.proto` and the JSON body).
 *
 * Every type is generic over the representation of the 64-bit counters, `I`:
 * - the embedded server's core produces `bigint` counters (`ModelStatistics<bigint>`), exact at any
 *   size;
 * - the client returns {@link Uint64} counters (the default): a `number` when exact and a `bigint`
 *   beyond 2^53 − 1, so ordinary counters stay plain numbers and none is silently rounded. Both the
 *   HTTP transport (from the JSON body) and the gRPC transport (from the protobuf message) produce it.
 * @packageDocumentation
 */

/** A 64-bit unsigned value: `number` when exact, `bigint` beyond `Number.MAX_SAFE_INTEGER`. */
export type Uint64 = number | bigint;

/** Triton's `StatisticDuration`: a cumulative count and total duration in ns. */
export interface StatisticDuration<I extends Uint64 = Uint64> {
  readonly count: I;
  readonly ns: I;
}

/** Triton's `InferStatistics`: per-model request statistics. */
export interface InferStatistics<I extends Uint64 = Uint64> {
  readonly success: StatisticDuration<I>;
  readonly fail: StatisticDuration<I>;
  readonly queue: StatisticDuration<I>;
  readonly compute_input: StatisticDuration<I>;
  readonly compute_infer: StatisticDuration<I>;
  readonly compute_output: StatisticDuration<I>;
  readonly cache_hit: StatisticDuration<I>;
  readonly cache_miss: StatisticDuration<I>;
}

/** Triton's `InferResponseStatistics` (decoupled models, per response index). */
export interface InferResponseStatistics<I extends Uint64 = Uint64> {
  readonly compute_infer: StatisticDuration<I>;
  readonly compute_output: StatisticDuration<I>;
  readonly success: StatisticDuration<I>;
  readonly fail: StatisticDuration<I>;
  readonly empty_response: StatisticDuration<I>;
  readonly cancel: StatisticDuration<I>;
}

/** Triton's `InferBatchStatistics`: the statistics of one batch size. */
export interface InferBatchStatistics<I extends Uint64 = Uint64> {
  readonly batch_size: I;
  readonly compute_input: StatisticDuration<I>;
  readonly compute_infer: StatisticDuration<I>;
  readonly compute_output: StatisticDuration<I>;
}

/** Triton's `MemoryUsage` (`id` is an int64 on the wire). */
export interface MemoryUsage<I extends Uint64 = Uint64> {
  readonly type: string;
  readonly id: I;
  readonly byte_size: I;
}

/**
 * Triton's `ModelStatistics`: one model version's statistics.
 *
 * `memory_usage` and `response_stats` are optional because Triton releases before they were added
 * leave them out of the JSON body; the embedded server and the gRPC wire always give them.
 */
export interface ModelStatistics<I extends Uint64 = Uint64> {
  readonly name: string;
  readonly version: string;
  /** ms since the epoch of the last finished request; 0 when none yet. */
  readonly last_inference: I;
  readonly inference_count: I;
  readonly execution_count: I;
  readonly inference_stats: InferStatistics<I>;
  /** Ascending by batch size. */
  readonly batch_stats: readonly InferBatchStatistics<I>[];
  readonly memory_usage?: readonly MemoryUsage<I>[];
  /** Keyed by response index. */
  readonly response_stats?: Readonly<Record<string, InferResponseStatistics<I>>>;
}

/** `GET v2/models[/{m}[/versions/{v}]]/stats` / `ModelStatisticsResponse`. */
export interface InferenceStatistics<I extends Uint64 = Uint64> {
  readonly model_stats: readonly ModelStatistics<I>[];
}
