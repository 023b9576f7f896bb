import { describe, expect, it } from 'vitest';

import { rankConfigs, satisfiesConstraints, selectBest } from '../src/tune/select.js';
import type { TuneConstraints } from '../src/tune/tune-options.js';
import { measurement, sampleResult, settings } from './helpers/tune-fixtures.js';

const P99_50: TuneConstraints = { latencyBudgetMs: 50, latencyMetric: 'p99', minThroughput: undefined };

describe('tuner: choosing the best', () => {
  it('takes the highest throughput with no constraints', () => {
    const ms = [
      measurement('a', settings(1, 4), 8, 100, 80),
      measurement('b', settings(2, 4, true), 8, 200, 40),
      measurement('c', settings(2, 1), 8, 50, 160),
    ];
    expect(selectBest(ms, 5)?.variant).toBe('b');
  });

  it('applies the latency budget on the chosen metric', () => {
    // b is faster but its p99 (80 ms) is over 50 ms; its average (40 ms) is not.
    const make = (c: TuneConstraints) => [
      measurement('a', settings(1, 0), 1, 50, 20, c),
      measurement('b', settings(2, 0), 2, 62.5, 80, c),
    ];
    expect(selectBest(make(P99_50), 5)?.variant).toBe('a');
    expect(selectBest(make({ ...P99_50, latencyMetric: 'avg' }), 5)?.variant).toBe('b');
    expect(selectBest(make({ ...P99_50, latencyBudgetMs: 10 }), 5)).toBeUndefined();
    const min = { latencyBudgetMs: undefined, latencyMetric: 'p99', minThroughput: 55 } as const;
    expect(make(min).map((m) => m.satisfiesConstraints)).toEqual([false, true]);
  });

  it('decides ties (within the tolerance) by fewer resources, then smaller batches, then lower concurrency', () => {
    const ms = [
      measurement('big', settings(2, 8, true), 8, 101, 30),
      measurement('small', settings(1, 8, true), 8, 99, 30),
      measurement('smaller-batch', settings(1, 4, true), 8, 98, 30),
      measurement('smaller-batch-low-c', settings(1, 4, true), 4, 97, 20),
    ];
    expect(selectBest(ms, 5)?.variant).toBe('smaller-batch-low-c');
    expect(selectBest(ms, 5)?.concurrency).toBe(4);
    // With no tolerance, the highest throughput wins outright.
    expect(selectBest(ms, 0)?.variant).toBe('big');
    // Beyond the tolerance the faster configuration wins even with more instances.
    expect(
      selectBest(
        [measurement('x', settings(2, 4), 8, 120, 10), measurement('y', settings(1, 4), 8, 100, 10)],
        5,
      )?.variant,
    ).toBe('x');
  });

  it('never picks a measurement with failed requests or none measured', () => {
    const none = { latencyBudgetMs: undefined, latencyMetric: 'p99', minThroughput: undefined } as const;
    const m = measurement('a', settings(1, 4), 1, 100, 10);
    expect(satisfiesConstraints({ ...m, errorCount: 1 }, none)).toBe(false);
    expect(satisfiesConstraints({ ...m, requestCount: 0 }, none)).toBe(false);
    expect(satisfiesConstraints({ ...m, latencyMs: { ...m.latencyMs, p99: Number.NaN } }, P99_50)).toBe(
      false,
    );
  });

  it('lets only stable measurements win unless told otherwise', () => {
    const ms = [
      { ...measurement('fast-unstable', settings(2, 4), 8, 300, 10), stable: false },
      measurement('slow-stable', settings(1, 4), 8, 100, 10),
    ];
    expect(selectBest(ms, 5)?.variant).toBe('slow-stable');
    expect(selectBest(ms, 5, false)?.variant).toBe('fast-unstable');
    expect(selectBest([ms[0] as (typeof ms)[number]], 5)).toBeUndefined();
    expect(rankConfigs(ms, 5).map((r) => [r.variant, r.best?.throughput])).toEqual([
      ['slow-stable', 100],
      ['fast-unstable', undefined],
    ]);
  });

  it('ranks configurations with the winner first, then those meeting the constraints', () => {
    const ms = [
      measurement('a', settings(1, 4), 1, 300, 90, P99_50),
      measurement('b', settings(1, 4), 1, 100, 10, P99_50),
      measurement('c', settings(2, 4), 1, 150, 20, P99_50),
      measurement('c', settings(2, 4), 8, 400, 70, P99_50),
    ];
    const ranking = rankConfigs(ms, 5);
    expect(ranking.map((r) => r.variant)).toEqual(['c', 'b', 'a']);
    expect(ranking[0]?.best?.throughput).toBe(150);
    expect(ranking[0]?.maxThroughput).toBe(400);
    expect(ranking[2]?.best).toBeUndefined();
  });

  it('picks the arithmetic best of the sample sweep (2 instances × max batch 4 with dynamic batching at concurrency 8)', () => {
    const r = sampleResult();
    expect(r.best?.variant).toBe(
      r.space.variants.find((v) => v.settings.instanceCount === 2 && v.settings.dynamicBatching.enabled)
        ?.name,
    );
    expect(r.best?.concurrency).toBe(8);
    expect(r.best?.throughput).toBe(200);
  });
});
