/**
 * The response cache in front of a model's scheduler, as Triton's dynamic batch scheduler does it at
 * enqueue: the request is hashed and looked up; a hit is answered at once (no queue, no backend); a
 * miss runs as usual and its successful response is inserted. Two identical requests arriving
 * together both run, and only the first insertion counts as a miss (the second finds the key there:
 * Triton's ALREADY_EXISTS). Failed requests are neither cached nor counted.
 *
 * Which models use it (Triton's rules): `response_cache { enable: true }` in the config and a cache
 * on the server; not decoupled models (refused at load, `repository/validate.ts`), not requests that
 * stream (`onResponse`), and not models with `sequence_batching` (Triton's sequence batcher does not
 * look the cache up).
 * @packageDocumentation
 */
import type { ModelStatistics } from '../statistics/model-statistics.js';
import { responseCacheKey } from './cache-key.js';
import type { ResponseCache } from './response-cache.js';
import type { Scheduler, SchedulerFactory, SchedulerRequest, SchedulerResponse } from './types.js';

/** Options of {@link CachedScheduler}. */
export interface CachedSchedulerOptions {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly cache: ResponseCache;
  readonly statistics?: ModelStatistics;
  /** Where a failed insertion is reported (Triton logs it as an error). */
  readonly onInsertError?: (message: string) => void;
  /** Monotonic ns clock (default `process.hrtime.bigint`). */
  readonly clock?: () => bigint;
}

/** See the module documentation. */
export class CachedScheduler implements Scheduler {
  readonly #inner: Scheduler;
  readonly #opts: CachedSchedulerOptions;
  readonly #clock: () => bigint;

  constructor(inner: Scheduler, options: CachedSchedulerOptions) {
    this.#inner = inner;
    this.#opts = options;
    this.#clock = options.clock ?? (() => process.hrtime.bigint());
    options.statistics?.enableResponseCache();
  }

  get pendingCount(): number {
    return this.#inner.pendingCount;
  }

  drain(): Promise<void> {
    return this.#inner.drain();
  }

  async enqueue(request: SchedulerRequest): Promise<SchedulerResponse> {
    if (request.onResponse !== undefined) return this.#inner.enqueue(request);
    const { cache, statistics } = this.#opts;
    const queueStart = this.#clock();
    const key = responseCacheKey(
      this.#opts.modelName,
      this.#opts.modelVersion,
      request.inputs,
      request.requestedOutputs,
    );
    // As Triton: hashing counts as queue time, the cache's time is the lookup (and the insertion).
    const lookupStart = this.#clock();
    const hit = cache.lookup(key);
    const lookupEnd = this.#clock();
    if (hit !== undefined) {
      statistics?.recordCacheHit({
        requestNs: nonNegative(lookupEnd - request.receivedAt),
        queueNs: lookupStart - queueStart,
        lookupNs: lookupEnd - lookupStart,
      });
      return hit;
    }
    const response = await this.#inner.enqueue(request);
    const insertStart = this.#clock();
    const result = cache.insert(key, response);
    const insertEnd = this.#clock();
    if (result.kind !== 'exists') {
      statistics?.recordCacheMiss(lookupEnd - lookupStart + (insertEnd - insertStart));
      if (result.kind === 'too-large') {
        this.#opts.onInsertError?.(`Failed to insert key [${key}] into response cache: ${result.message}`);
      }
    }
    return response;
  }
}

function nonNegative(ns: bigint): bigint {
  return ns > 0n ? ns : 0n;
}

/** Whether a model with `config` answers through the response cache (when the server has one). */
export function usesResponseCache(config: Parameters<SchedulerFactory>[0]['config']): boolean {
  return (
    config.response_cache?.enable === true &&
    config.sequence_batching === undefined &&
    config.model_transaction_policy?.decoupled !== true
  );
}

/**
 * `factory` with the response cache in front of the schedulers of models that use it (see
 * {@link usesResponseCache}); other models get `factory`'s scheduler as it is.
 */
export function withResponseCache(
  factory: SchedulerFactory,
  cache: ResponseCache,
  onInsertError?: (message: string) => void,
): SchedulerFactory {
  return (options) => {
    const scheduler = factory(options);
    if (!usesResponseCache(options.config)) return scheduler;
    return new CachedScheduler(scheduler, {
      modelName: options.modelName,
      modelVersion: options.modelVersion,
      cache,
      ...(options.statistics !== undefined ? { statistics: options.statistics } : {}),
      ...(onInsertError !== undefined ? { onInsertError } : {}),
    });
  };
}
