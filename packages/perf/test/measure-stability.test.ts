/** Pure: perf_analyzer's stopping rules and the sweep of levels. */
import { describe, expect, it } from 'vitest';

import { exceedsLatencyThreshold, isStable, overLatencyThreshold } from '../src/measure/stability.js';
import { meanRate, sweepLevels } from '../src/measure/sweep.js';

const w = (throughput: number, latencyMs: number | undefined) => ({
  throughput,
  latencyNs: latencyMs === undefined ? undefined : BigInt(latencyMs * 1_000_000),
});

describe('isStable (last 3 windows, max/min ≤ 1 + s/100 on throughput and latency)', () => {
  it('needs 3 windows', () => {
    expect(isStable([w(100, 10), w(100, 10)], 10)).toBe(false);
    expect(isStable([w(100, 10), w(100, 10), w(100, 10)], 10)).toBe(true);
  });

  it('judges only the last 3 windows', () => {
    expect(isStable([w(10, 100), w(100, 10), w(105, 10.5), w(109, 10.9)], 10)).toBe(true);
  });

  it('throughput spread over s% is unstable; exactly s% is stable', () => {
    expect(isStable([w(100, 10), w(110, 10), w(105, 10)], 10)).toBe(true);
    expect(isStable([w(100, 10), w(111, 10), w(105, 10)], 10)).toBe(false);
  });

  it('latency spread over s% is unstable unless only throughput is checked', () => {
    const windows = [w(100, 10), w(100, 12), w(100, 11)];
    expect(isStable(windows, 10)).toBe(false);
    expect(isStable(windows, 10, false)).toBe(true);
    expect(isStable(windows, 25)).toBe(true);
  });

  it('a failed window (zero throughput) is never stable', () => {
    expect(isStable([w(100, 10), w(0, undefined), w(100, 10)], 10)).toBe(false);
  });
});

describe('-l', () => {
  it('a window of the last 3 at or over the limit ends the level', () => {
    expect(exceedsLatencyThreshold([w(1, 10), w(1, 20), w(1, 49)], 50)).toBe(false);
    expect(exceedsLatencyThreshold([w(1, 10), w(1, 50), w(1, 49)], 50)).toBe(true);
    expect(exceedsLatencyThreshold([w(1, 60), w(1, 60)], 50)).toBe(false); // fewer than 3
    expect(exceedsLatencyThreshold([w(1, 60), w(1, 60), w(1, 60)], 0)).toBe(false); // no limit
  });

  it('the merged level compares whole ms', () => {
    expect(overLatencyThreshold(49_999_999n, 50)).toBe(false);
    expect(overLatencyThreshold(50_000_000n, 50)).toBe(true);
    expect(overLatencyThreshold(99_000_000n, 0)).toBe(false);
  });
});

describe('sweepLevels', () => {
  const take = (it: Iterable<number>, n: number): number[] => {
    const out: number[] = [];
    for (const v of it) {
      out.push(v);
      if (out.length === n) break;
    }
    return out;
  };

  it('walks start:end:step inclusively', () => {
    expect([...sweepLevels({ kind: 'concurrency', range: { start: 1, end: 7, step: 2 } })]).toEqual([
      1, 3, 5, 7,
    ]);
    expect([...sweepLevels({ kind: 'concurrency', range: { start: 2, end: 2, step: 1 } })]).toEqual([2]);
  });

  it('end 0 grows without limit (the caller stops at -l)', () => {
    expect(take(sweepLevels({ kind: 'concurrency', range: { start: 1, end: 0, step: 4 } }), 5)).toEqual([
      1, 5, 9, 13, 17,
    ]);
  });

  it('fractional request rates do not drift', () => {
    expect([
      ...sweepLevels({
        kind: 'request_rate',
        distribution: 'constant',
        range: { start: 0.1, end: 0.5, step: 0.1 },
      }),
    ]).toEqual([0.1, 0.2, 0.3, 0.4, 0.5]);
  });

  it('request intervals: one level at the mean rate', () => {
    expect([...sweepLevels({ kind: 'request_intervals', intervalsUs: [10_000, 30_000] })]).toEqual([50]);
    expect(meanRate([])).toBe(0);
  });
});
