import { describe, expect, it } from 'vitest';

import { ModelStatistics, StatisticsRegistry, toStatisticsReport } from '../../src/statistics/index.js';
import { renderStatisticsJson } from '../../src/http/statistics-json.js';

const timings = { computeInputNs: 10n, computeInferNs: 100n, computeOutputNs: 20n };

describe('ModelStatistics', () => {
  it('counts inferences per row and executions per batch, and charges each request the batch durations', () => {
    const s = new ModelStatistics('m', '1', { now: () => 1_700_000_000_123 });
    // One execution of 3 rows made of two requests (1 row + 2 rows).
    s.recordExecution(3, timings);
    s.recordSuccess({ batchSize: 1, requestNs: 5000n, queueNs: 700n, timings });
    s.recordSuccess({ batchSize: 2, requestNs: 6000n, queueNs: 300n, timings });
    const snap = s.snapshot();
    expect(snap.inference_count).toBe(3n);
    expect(snap.execution_count).toBe(1n);
    expect(snap.inference_stats.success).toEqual({ count: 2n, ns: 11000n });
    expect(snap.inference_stats.queue).toEqual({ count: 2n, ns: 1000n });
    expect(snap.inference_stats.compute_input).toEqual({ count: 2n, ns: 20n });
    expect(snap.inference_stats.compute_infer).toEqual({ count: 2n, ns: 200n });
    expect(snap.inference_stats.compute_output).toEqual({ count: 2n, ns: 40n });
    expect(snap.batch_stats).toEqual([
      {
        batch_size: 3n,
        compute_input: { count: 1n, ns: 10n },
        compute_infer: { count: 1n, ns: 100n },
        compute_output: { count: 1n, ns: 20n },
      },
    ]);
    expect(snap.last_inference).toBe(1_700_000_000_123n);
  });

  it('counts failures by reason without touching success, queue or compute', () => {
    const s = new ModelStatistics('m', '1');
    s.recordFailure({ requestNs: 40n, reason: 'REJECTED' });
    s.recordFailure({ requestNs: 60n, reason: 'BACKEND' });
    const snap = s.snapshot();
    expect(snap.inference_stats.fail).toEqual({ count: 2n, ns: 100n });
    expect(snap.inference_stats.success.count).toBe(0n);
    expect(snap.inference_stats.queue.count).toBe(0n);
    expect(snap.failuresByReason).toEqual({ REJECTED: 1n, CANCELED: 0n, BACKEND: 1n, OTHER: 0n });
    expect(snap.inference_count).toBe(0n);
  });

  it('accumulates metric microseconds per request, truncating each request like Triton', () => {
    const s = new ModelStatistics('m', '1');
    s.recordSuccess({ batchSize: 1, requestNs: 1999n, queueNs: 999n, timings });
    s.recordSuccess({ batchSize: 1, requestNs: 1999n, queueNs: 999n, timings });
    expect(s.snapshot().durationsUs).toEqual({
      request: 2n,
      queue: 0n,
      computeInput: 0n,
      computeInfer: 0n,
      computeOutput: 0n,
      cacheHit: 0n,
      cacheMiss: 0n,
    });
  });

  it('records response cache hits and misses as Triton: a hit is a success with no compute, a miss adds to success time', () => {
    const s = new ModelStatistics('m', '1');
    s.recordSuccess({ batchSize: 2, requestNs: 10_000n, queueNs: 1_000n, timings });
    s.recordCacheMiss(2_500n);
    s.recordCacheHit({ requestNs: 4_000n, queueNs: 500n, lookupNs: 1_500n });
    const snap = s.snapshot();
    expect(snap.inference_stats.cache_hit).toEqual({ count: 1n, ns: 1_500n });
    expect(snap.inference_stats.cache_miss).toEqual({ count: 1n, ns: 2_500n });
    expect(snap.inference_stats.success).toEqual({ count: 2n, ns: 16_500n });
    expect(snap.inference_stats.queue).toEqual({ count: 2n, ns: 1_500n });
    expect(snap.inference_stats.compute_infer.count).toBe(1n);
    expect([snap.inference_count, snap.execution_count]).toEqual([2n, 0n]);
    expect([snap.durationsUs.cacheHit, snap.durationsUs.cacheMiss, snap.durationsUs.request]).toEqual([
      1n,
      2n,
      16n,
    ]);
    expect(snap.responseCache).toBe(false);
    s.enableResponseCache();
    expect(s.snapshot().responseCache).toBe(true);
  });

  it('keeps batch_stats sorted by batch size and the pending gauge at or above zero', () => {
    const s = new ModelStatistics('m', '1');
    s.recordExecution(4, timings);
    s.recordExecution(1, timings);
    s.recordExecution(4, timings);
    expect(s.snapshot().batch_stats.map((b) => [b.batch_size, b.compute_infer.count])).toEqual([
      [1n, 1n],
      [4n, 2n],
    ]);
    s.adjustPending(2);
    s.adjustPending(-3);
    expect(s.pendingRequests).toBe(0);
  });

  it('refuses negative durations and non-positive batch sizes with a RangeError', () => {
    const s = new ModelStatistics('m', '1');
    expect(() => s.recordExecution(0, timings)).toThrow(RangeError);
    expect(() => s.recordFailure({ requestNs: -1n, reason: 'OTHER' })).toThrow(/must not be negative/);
  });
});

describe('renderStatisticsJson', () => {
  it('renders the statistics extension shape with 64-bit values exact', () => {
    const registry = new StatisticsRegistry({ now: () => 42 });
    const s = registry.get('m', '1');
    const big = 2n ** 63n + 7n;
    s.recordExecution(1, { computeInputNs: 1n, computeInferNs: big, computeOutputNs: 3n });
    s.recordSuccess({
      batchSize: 1,
      requestNs: big,
      queueNs: 5n,
      timings: { computeInputNs: 1n, computeInferNs: big, computeOutputNs: 3n },
    });
    const text = renderStatisticsJson(registry.snapshot().map(toStatisticsReport));
    expect(text).toContain(`"compute_infer":{"count":1,"ns":${big}}`);
    expect(text).toContain(`"success":{"count":1,"ns":9223372036854775815}`);
    const parsed = JSON.parse(text) as { model_stats: Record<string, unknown>[] };
    expect(Object.keys(parsed.model_stats[0] ?? {})).toEqual([
      'name',
      'version',
      'last_inference',
      'inference_count',
      'execution_count',
      'inference_stats',
      'response_stats',
      'batch_stats',
      'memory_usage',
    ]);
    expect(parsed.model_stats[0]).toMatchObject({
      name: 'm',
      version: '1',
      last_inference: 42,
      inference_count: 1,
      execution_count: 1,
      response_stats: {},
      memory_usage: [],
    });
    expect(Object.keys(parsed.model_stats[0]?.inference_stats ?? {})).toEqual([
      'success',
      'fail',
      'queue',
      'compute_input',
      'compute_infer',
      'compute_output',
      'cache_hit',
      'cache_miss',
    ]);
  });

  it('renders an empty list and narrows by model and version', () => {
    const registry = new StatisticsRegistry();
    expect(renderStatisticsJson(registry.snapshot().map(toStatisticsReport))).toBe('{"model_stats":[]}');
    registry.get('b', '2');
    registry.get('b', '10');
    registry.get('a', '1');
    expect(registry.snapshot().map((s) => `${s.name}/${s.version}`)).toEqual(['a/1', 'b/2', 'b/10']);
    expect(registry.snapshot('b', '10').map((s) => s.version)).toEqual(['10']);
    expect(registry.snapshot('zzz')).toEqual([]);
  });
});
