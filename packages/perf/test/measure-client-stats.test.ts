/** Pure: client figures of a window from synthetic request records (perf_analyzer's formulas). */
import { describe, expect, it } from 'vitest';

import { percentileIndex, summarizeClient } from '../src/measure/client-stats.js';
import { diffInferStat, sumInferStats } from '../src/measure/infer-stat.js';
import { splitWindowRecords } from '../src/measure/records.js';
import type { RequestRecord } from '../src/types.js';

const MS = 1_000_000n;

function record(startMs: number, latencyMs: number, extra: Partial<RequestRecord> = {}): RequestRecord {
  const startNs = BigInt(startMs) * MS;
  const endNs = startNs + BigInt(Math.round(latencyMs * 1e6));
  return { startNs, endNs, responseNs: [endNs], ok: true, delayed: false, stream: 0, step: 0, ...extra };
}

describe('splitWindowRecords (a request counts in the window it ends in)', () => {
  it('keeps records ending inside [start, end], carries later ones, drops earlier ones', () => {
    const records = [record(0, 5), record(8, 4), record(15, 10), record(95, 10)];
    const { inWindow, pending } = splitWindowRecords(records, 10n * MS, 100n * MS);
    // ends: 5 (before), 12 and 25 (inside), 105 (after)
    expect(inWindow.map((r) => r.endNs)).toEqual([12n * MS, 25n * MS]);
    expect(pending.map((r) => r.endNs)).toEqual([105n * MS]);
  });

  it('counts a request ending exactly on an edge once across contiguous windows', () => {
    const r = record(0, 100);
    const first = splitWindowRecords([r], 0n, 100n * MS);
    const second = splitWindowRecords(first.pending, 100n * MS, 200n * MS);
    expect(first.inWindow.length + second.inWindow.length).toBe(1);
  });
});

describe('summarizeClient', () => {
  it('computes counts, throughput × batch, mean, population std and nearest-rank percentiles', () => {
    // 10 requests with latencies 1..10 ms in a 2 s window, batch 4
    const records = Array.from({ length: 10 }, (_, i) => record(i * 10, i + 1));
    const { stats, stabilizingLatencyNs } = summarizeClient({
      records,
      durationNs: 2000n * MS,
      batchSize: 4,
      percentile: undefined,
      inferStat: undefined,
    });
    expect(stats.requestCount).toBe(10);
    expect(stats.responseCount).toBe(10);
    expect(stats.throughput).toBeCloseTo(20, 10); // 10 × 4 / 2 s
    expect(stats.responseThroughput).toBeCloseTo(5, 10);
    expect(stats.avgLatencyUs).toBe(5500);
    // perf_analyzer's population std in whole µs: √(38 500 000 − 30 250 000) = 2872.28 → 2872
    expect(stats.stdLatencyUs).toBe(2872);
    expect(stats.minLatencyUs).toBe(1000);
    expect(stats.maxLatencyUs).toBe(10_000);
    // index = floor(p/100 × 9 + 0.5): p50 → 5 (6 ms), p90 → 8 (9 ms), p95 → 9, p99 → 9
    expect(stats.percentileUs).toEqual({ 50: 6000, 90: 9000, 95: 10_000, 99: 10_000 });
    expect(stabilizingLatencyNs).toBe(5_500_000n);
    expect(stats.durationUs).toBe(2_000_000);
  });

  it('adds --percentile and stabilises on it', () => {
    const records = Array.from({ length: 100 }, (_, i) => record(i, i + 1));
    const { stats, stabilizingLatencyNs } = summarizeClient({
      records,
      durationNs: 1000n * MS,
      batchSize: 1,
      percentile: 75,
      inferStat: undefined,
    });
    expect(percentileIndex(75, 100)).toBe(74);
    expect(stats.percentileUs[75]).toBe(75_000);
    expect(Object.keys(stats.percentileUs).map(Number)).toEqual([50, 75, 90, 95, 99]);
    expect(stabilizingLatencyNs).toBe(75_000_000n);
  });

  it('leaves failed requests out of latency and throughput, counts them, delayed and sequence ends', () => {
    const records = [
      record(0, 10, { delayed: true }),
      record(1, 20, { sequenceEnd: true }),
      record(2, 30, { ok: false, error: 'boom', responseNs: [] }),
    ];
    const { stats } = summarizeClient({
      records,
      durationNs: 1000n * MS,
      batchSize: 1,
      percentile: undefined,
      inferStat: undefined,
    });
    expect(stats.requestCount).toBe(2);
    expect(stats.errorCount).toBe(1);
    expect(stats.delayedRequestCount).toBe(1);
    expect(stats.sequencePerSecond).toBeCloseTo(1, 10);
    expect(stats.throughput).toBeCloseTo(2, 10);
    expect(stats.avgLatencyUs).toBe(15_000);
  });

  it('one request: standard deviation 0, as perf_analyzer prints it', () => {
    const { stats } = summarizeClient({
      records: [record(0, 3)],
      durationNs: 1000n * MS,
      batchSize: 1,
      percentile: undefined,
      inferStat: undefined,
    });
    expect(stats.stdLatencyUs).toBe(0);
  });

  it('no request: zeros and no stabilising latency', () => {
    const s = summarizeClient({
      records: [],
      durationNs: 1n,
      batchSize: 1,
      percentile: 90,
      inferStat: undefined,
    });
    expect(s.stats.requestCount).toBe(0);
    expect(s.stats.throughput).toBe(0);
    expect(s.stabilizingLatencyNs).toBeUndefined();
  });

  it('splits the client library time into send, receive and response wait from InferStat deltas', () => {
    const start = {
      completedRequestCount: 5,
      cumulativeTotalRequestTimeNs: 1_000_000n,
      cumulativeSendTimeNs: 100_000n,
      cumulativeReceiveTimeNs: 50_000n,
    };
    const end = {
      completedRequestCount: 15,
      cumulativeTotalRequestTimeNs: 101_000_000n, // 10 requests × 10 ms
      cumulativeSendTimeNs: 2_100_000n, // 200 µs each
      cumulativeReceiveTimeNs: 1_050_000n, // 100 µs each
    };
    const delta = diffInferStat(start, end);
    const { stats } = summarizeClient({
      records: [record(0, 10)],
      durationNs: 1000n * MS,
      batchSize: 1,
      percentile: undefined,
      inferStat: delta,
    });
    expect(stats.avgSendUs).toBe(200);
    expect(stats.avgRecvUs).toBe(100);
    expect(stats.avgResponseWaitUs).toBe(10_000 - 300);
    // merging windows sums the deltas (a count-weighted mean)
    expect(sumInferStats([delta, delta]).completedRequestCount).toBe(20);
  });
});
