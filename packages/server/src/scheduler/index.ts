/**
 * Scheduling per Triton: the default scheduler, the dynamic batcher, warmup and reload.
 * @packageDocumentation
 */
export * from './types.js';
export * from './errors.js';
export * from './batch.js';
export * from './engine.js';
export * from './default-scheduler.js';
export * from './dynamic-batcher.js';
export * from './priority-batch-queue.js';
export * from './create-scheduler.js';
export * from './reloadable-scheduler.js';
export * from './warmup.js';
export * from './rate-limiter.js';
export type { QueuedRequest, SchedulingQueue, TakeResult } from './entry.js';
export * from './response-cache.js';
export * from './cache-key.js';
export * from './cached-scheduler.js';
