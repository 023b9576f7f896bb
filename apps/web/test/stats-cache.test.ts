/**
 * The stats page's figures from the response cache: Triton's `cache_hit` / `cache_miss` (the same on
 * both wires) reach `ModelStats`, and the dashboard shows them only for a model that uses the cache.
 */
import { describe, expect, it } from 'vitest';

import type { InferenceStatistics } from '@tritonserver-ts/client';

import { normalizeModelStats } from '../src/server/stats';

const zero = { count: 0, ns: 0 };

function raw(
  cacheHit: { count: number; ns: number },
  cacheMiss: { count: number; ns: number },
): InferenceStatistics {
  return {
    model_stats: [
      {
        name: 'food_classifier',
        version: '1',
        last_inference: 0,
        inference_count: 2,
        execution_count: 2,
        inference_stats: {
          success: { count: 3, ns: 3_000_000 },
          fail: zero,
          queue: zero,
          compute_input: zero,
          compute_infer: zero,
          compute_output: zero,
          cache_hit: cacheHit,
          cache_miss: cacheMiss,
        },
        batch_stats: [],
        memory_usage: [],
        response_stats: {},
      },
    ],
  };
}

describe('stats: response cache figures', () => {
  it('maps cache_hit and cache_miss (count, ms)', () => {
    const s = normalizeModelStats(raw({ count: 1, ns: 2_000 }, { count: 2, ns: 5_000_000 }));
    expect(s?.cacheHit).toEqual({ count: 1, ms: 0.002 });
    expect(s?.cacheMiss).toEqual({ count: 2, ms: 5 });
  });

  it('reports zeros for a model without the cache (the page then shows no cache tiles)', () => {
    const s = normalizeModelStats(raw(zero, zero));
    expect([s?.cacheHit.count, s?.cacheMiss.count]).toEqual([0, 0]);
  });
});
