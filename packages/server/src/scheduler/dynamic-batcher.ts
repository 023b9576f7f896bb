/**
 * Triton's dynamic batcher: see {@link PriorityBatchQueue} for how batches form, and
 * {@link SchedulingEngine} for execution, `preserve_ordering` and statistics.
 * @packageDocumentation
 */
import type { ModelDynamicBatching } from '../repository/model-config.js';
import type { ModelInstance } from '../runtime/types.js';
import { ModelStatistics } from '../statistics/model-statistics.js';
import { SchedulingEngine } from './engine.js';
import type { BatchLayout } from './ragged.js';
import type { RateLimitedModel } from './rate-limiter.js';
import { PriorityBatchQueue } from './priority-batch-queue.js';

/** Options of {@link createDynamicBatcher}. */
export interface DynamicBatcherOptions {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly instances: readonly ModelInstance[];
  /** `max_batch_size` (> 0; a non-batching model cannot be dynamically batched). */
  readonly maxBatchSize: number;
  readonly dynamicBatching: ModelDynamicBatching;
  readonly statistics?: ModelStatistics;
  /** Ragged inputs, batch inputs and batch outputs, if the model has any. */
  readonly batchLayout?: BatchLayout;
  readonly clock?: () => bigint;
  /** The version's registration with the server's rate limiter, when rate limiting is on. */
  readonly rateLimiter?: RateLimitedModel;
}

/** Creates a dynamic batcher over `instances`. */
export function createDynamicBatcher(options: DynamicBatcherOptions): SchedulingEngine {
  return new SchedulingEngine({
    queue: new PriorityBatchQueue({
      maxBatchSize: options.maxBatchSize,
      dynamicBatching: options.dynamicBatching,
    }),
    instances: options.instances,
    statistics: options.statistics ?? new ModelStatistics(options.modelName, options.modelVersion),
    batching: options.maxBatchSize > 0,
    preserveOrdering: options.dynamicBatching.preserve_ordering,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.batchLayout === undefined ? {} : { batchLayout: options.batchLayout }),
    ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
  });
}
