/**
 * The summaries' quantile estimator (CKMS over a sliding window, as prometheus-cpp keeps them):
 * within each target's error bound on many values, NaN when empty, and forgetting what left the
 * window while count and sum stay cumulative.
 */
import { describe, expect, it } from 'vitest';

import { DEFAULT_SUMMARY_QUANTILES } from '../../src/statistics/metrics-config.js';
import { QuantileSummary } from '../../src/statistics/quantile-summary.js';

describe('QuantileSummary', () => {
  it('estimates each default quantile of 20 000 shuffled values within its rank error', () => {
    const n = 20_000;
    const values = Array.from({ length: n }, (_, i) => i + 1);
    let seed = 7;
    for (let i = n - 1; i > 0; i--) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const j = seed % (i + 1);
      [values[i], values[j]] = [values[j] as number, values[i] as number];
    }
    const s = new QuantileSummary(DEFAULT_SUMMARY_QUANTILES, { now: () => 0 });
    for (const v of values) s.observe(v);
    const snap = s.snapshot();
    expect(snap.count).toBe(n);
    expect(snap.sum).toBe((n * (n + 1)) / 2);
    for (const [i, [q, estimate]] of snap.quantiles.entries()) {
      const { error } = DEFAULT_SUMMARY_QUANTILES[i] as { error: number };
      // Value v has rank v here: the estimate's rank is within error·n of q·n.
      expect(Math.abs(estimate - q * n), `q=${q}`).toBeLessThanOrEqual(error * n + 1);
    }
  });

  it('reports NaN quantiles before any value, and forgets values older than the window', () => {
    let now = 0;
    const s = new QuantileSummary([{ quantile: 0.5, error: 0.05 }], { now: () => now });
    expect(Number.isNaN(s.snapshot().quantiles[0]?.[1])).toBe(true);
    s.observe(100);
    expect(s.snapshot().quantiles[0]?.[1]).toBe(100);
    now = 61_000;
    const later = s.snapshot();
    expect(Number.isNaN(later.quantiles[0]?.[1])).toBe(true);
    expect(later.count).toBe(1);
    expect(later.sum).toBe(100);
  });
});
