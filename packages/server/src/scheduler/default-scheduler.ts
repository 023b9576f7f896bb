/**
 * Triton's default scheduler (a model without `dynamic_batching`): each request runs alone, as its own
 * batch of its rows, on the next free instance; requests wait FIFO while every instance is busy.
 * @packageDocumentation
 */
import type { ModelInstance } from '../runtime/types.js';
import { ModelStatistics } from '../statistics/model-statistics.js';
import { SchedulingEngine } from './engine.js';
import type { BatchLayout } from './ragged.js';
import type { RateLimitedModel } from './rate-limiter.js';
import { FifoQueue } from './fifo-queue.js';

/** Options of {@link createDefaultScheduler}. */
export interface DefaultSchedulerOptions {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly instances: readonly ModelInstance[];
  /** `max_batch_size` of the config (0 = the model has no batch dimension). */
  readonly maxBatchSize: number;
  /** Statistics to record into (default: a private object). */
  readonly statistics?: ModelStatistics;
  /** Ragged inputs, batch inputs and batch outputs, if the model has any. */
  readonly batchLayout?: BatchLayout;
  /** Monotonic ns clock (tests). */
  readonly clock?: () => bigint;
  /** The version's registration with the server's rate limiter, when rate limiting is on. */
  readonly rateLimiter?: RateLimitedModel;
}

/** Creates the default (non-batching) scheduler. */
export function createDefaultScheduler(options: DefaultSchedulerOptions): SchedulingEngine {
  return new SchedulingEngine({
    queue: new FifoQueue(),
    instances: options.instances,
    statistics: options.statistics ?? new ModelStatistics(options.modelName, options.modelVersion),
    batching: options.maxBatchSize > 0,
    preserveOrdering: false,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.batchLayout === undefined ? {} : { batchLayout: options.batchLayout }),
    ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
  });
}
