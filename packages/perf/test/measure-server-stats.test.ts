/** Pure: server figures from two synthetic statistics snapshots (perf_analyzer's breakdown). */
import type { InferenceStatistics, ModelStatistics } from '@tritonserver-ts/client';
import { describe, expect, it } from 'vitest';

import { isPerfError } from '../src/errors.js';
import {
  determineStatsVersion,
  mergeRawServerStats,
  serverStatsDelta,
  toServerSideStats,
} from '../src/measure/server-stats.js';

interface Phases {
  readonly n: number;
  readonly successNs?: number;
  readonly queueNs?: number;
  readonly inputNs?: number;
  readonly inferNs?: number;
  readonly outputNs?: number;
  readonly exec?: number;
  readonly hit?: readonly [number, number];
  readonly miss?: readonly [number, number];
}

const d = (count: number, ns: number) => ({ count, ns });

function stats(name: string, version: string, p: Phases): ModelStatistics {
  return {
    name,
    version,
    last_inference: 0,
    inference_count: p.n,
    execution_count: p.exec ?? p.n,
    inference_stats: {
      success: d(p.n, p.successNs ?? 0),
      fail: d(0, 0),
      queue: d(p.n, p.queueNs ?? 0),
      compute_input: d(p.n, p.inputNs ?? 0),
      compute_infer: d(p.n, p.inferNs ?? 0),
      compute_output: d(p.n, p.outputNs ?? 0),
      cache_hit: d(p.hit?.[0] ?? 0, p.hit?.[1] ?? 0),
      cache_miss: d(p.miss?.[0] ?? 0, p.miss?.[1] ?? 0),
    },
    batch_stats: [],
  };
}

const snap = (...s: ModelStatistics[]): InferenceStatistics => ({ model_stats: s });
const none = { composingOf: () => [] };

describe('serverStatsDelta + toServerSideStats', () => {
  it('per-request averages of the delta, overhead = latency − queue − compute', () => {
    const start = snap(
      stats('m', '1', { n: 10, successNs: 10e6, queueNs: 1e6, inputNs: 1e6, inferNs: 5e6, outputNs: 1e6 }),
    );
    // 20 more requests: 12 ms each, queue 2 ms, input 0.5 ms, infer 8 ms, output 0.25 ms
    const end = snap(
      stats('m', '1', {
        n: 30,
        exec: 25,
        successNs: 10e6 + 20 * 12e6,
        queueNs: 1e6 + 20 * 2e6,
        inputNs: 1e6 + 20 * 0.5e6,
        inferNs: 5e6 + 20 * 8e6,
        outputNs: 1e6 + 20 * 0.25e6,
      }),
    );
    const s = toServerSideStats(serverStatsDelta({ name: 'm', version: '' }, start, end, none), false);
    expect(s.successCount).toBe(20);
    expect(s.inferenceCount).toBe(20);
    expect(s.executionCount).toBe(15);
    expect(s.avgRequestLatencyUs).toBe(12_000);
    expect(s.queueUs).toBe(2000);
    expect(s.computeInputUs).toBe(500);
    expect(s.computeInferUs).toBe(8000);
    expect(s.computeOutputUs).toBe(250);
    expect(s.overheadUs).toBe(12_000 - 2000 - 8750);
    expect(s.overheadUs + s.queueUs + s.computeInputUs + s.computeInferUs + s.computeOutputUs).toBe(
      s.avgRequestLatencyUs,
    );
  });

  it('overhead is clamped at 0', () => {
    const end = snap(stats('m', '1', { n: 1, successNs: 1e6, queueNs: 1e6, inferNs: 1e6 }));
    expect(
      toServerSideStats(serverStatsDelta({ name: 'm', version: '1' }, snap(), end, none), false).overheadUs,
    ).toBe(0);
  });

  it('picks the version whose queue count grew; the highest, with a warning, when several did', () => {
    const start = snap(stats('m', '1', { n: 5 }), stats('m', '2', { n: 5 }), stats('m', '3', { n: 5 }));
    const end = snap(stats('m', '1', { n: 5 }), stats('m', '2', { n: 9 }), stats('m', '3', { n: 5 }));
    expect(determineStatsVersion({ name: 'm', version: '' }, start, end)).toBe('2');
    const warnings: string[] = [];
    const both = snap(stats('m', '1', { n: 6 }), stats('m', '2', { n: 9 }), stats('m', '3', { n: 5 }));
    expect(determineStatsVersion({ name: 'm', version: '' }, start, both, (m) => warnings.push(m))).toBe('2');
    expect(warnings[0]).toMatch(/Multiple versions of model m are loaded/);
    expect(determineStatsVersion({ name: 'm', version: '3' }, start, end)).toBe('3');
  });

  it('no version grew → PerfError SERVER "failed to find the requested model version"', () => {
    const s = snap(stats('m', '1', { n: 5 }));
    let caught: unknown;
    try {
      determineStatsVersion({ name: 'm', version: '' }, s, s);
    } catch (error) {
      caught = error;
    }
    expect(isPerfError(caught, 'SERVER')).toBe(true);
    expect((caught as Error).message).toBe('failed to find the requested model version');
    expect(() => determineStatsVersion({ name: 'm', version: '7' }, s, s)).toThrow(
      'failed to find the requested model version',
    );
  });

  it('ensembles: composing models recursively; queue and compute are the sums of theirs', () => {
    const start = snap(
      stats('ens', '1', { n: 0 }),
      stats('pre', '1', { n: 0 }),
      stats('inner', '1', { n: 0 }),
      stats('net', '1', { n: 0 }),
    );
    const end = snap(
      stats('ens', '1', { n: 10, successNs: 10 * 20e6 }),
      stats('pre', '1', { n: 10, queueNs: 10 * 1e6, inferNs: 10 * 3e6 }),
      stats('inner', '1', { n: 10, successNs: 10 * 12e6 }),
      stats('net', '1', { n: 10, queueNs: 10 * 2e6, inputNs: 10 * 1e6, inferNs: 10 * 8e6 }),
    );
    const tree: Record<string, { name: string; version: string }[]> = {
      ens: [
        { name: 'pre', version: '' },
        { name: 'inner', version: '-1' },
      ],
      inner: [{ name: 'net', version: '1' }],
    };
    const raw = serverStatsDelta({ name: 'ens', version: '' }, start, end, {
      composingOf: (n) => tree[n] ?? [],
    });
    const s = toServerSideStats(raw, false);
    expect(s.avgRequestLatencyUs).toBe(20_000);
    expect(s.queueUs).toBe(3000);
    expect(s.computeInferUs).toBe(11_000);
    expect(s.computeInputUs).toBe(1000);
    expect(s.overheadUs).toBe(20_000 - 3000 - 12_000);
    expect(s.composing.map((c) => `${c.name}:${c.version}`)).toEqual(['pre:1', 'inner:1']);
    const inner = s.composing[1]?.stats;
    expect(inner?.composing[0]?.name).toBe('net');
    expect(inner?.composing[0]?.stats.computeInferUs).toBe(8000);
  });

  it('response cache on: overhead leaves out the combined cache + compute average', () => {
    // 10 requests: 4 cache hits (0.1 ms lookups), 6 misses (0.2 ms) computed (6 ms infer)
    const end = snap({
      ...stats('m', '1', { n: 10, successNs: 10 * 5e6, queueNs: 0 }),
      inference_stats: {
        success: d(10, 10 * 5e6),
        fail: d(0, 0),
        queue: d(10, 10 * 0.5e6),
        compute_input: d(6, 0),
        compute_infer: d(6, 6 * 6e6),
        compute_output: d(6, 0),
        cache_hit: d(4, 4 * 0.1e6),
        cache_miss: d(6, 6 * 0.2e6),
      },
    });
    const s = toServerSideStats(serverStatsDelta({ name: 'm', version: '1' }, snap(), end, none), true);
    expect(s.cacheHitCount).toBe(4);
    expect(s.cacheHitUs).toBe(100);
    expect(s.cacheMissUs).toBe(200);
    // combined = (0.4 + 1.2 + 36) ms / (6 + 4) = 3760 µs; overhead = 5000 − 500 − 3760
    expect(s.overheadUs).toBe(740);
  });

  it('merging windows sums raw deltas, then averages (not an average of averages)', () => {
    const a = serverStatsDelta(
      { name: 'm', version: '1' },
      snap(),
      snap(stats('m', '1', { n: 1, successNs: 10e6, inferNs: 10e6 })),
      none,
    );
    const b = serverStatsDelta(
      { name: 'm', version: '1' },
      snap(),
      snap(stats('m', '1', { n: 3, successNs: 6e6, inferNs: 6e6 })),
      none,
    );
    const s = toServerSideStats(mergeRawServerStats([a, b]), false);
    expect(s.successCount).toBe(4);
    expect(s.computeInferUs).toBe(4000);
  });
});
