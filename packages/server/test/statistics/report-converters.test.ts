import { decodeMessage, encodeMessage, ModelStatisticsResponseSchema } from '@tritonserver-ts/protocol/grpc';
import { describe, expect, it } from 'vitest';

import { statisticsResponse } from '../../src/grpc/handlers/statistics.js';
import { renderStatisticsJson } from '../../src/http/statistics-json.js';
import type { ModelStatisticsReport, StatisticDuration } from '../../src/statistics/report.js';

const d = (count: bigint, ns: bigint): StatisticDuration => ({ count, ns });
const big = 2n ** 64n - 1n;

/** A report with every field filled, 64-bit values beyond 2^53 included. */
const report: ModelStatisticsReport = {
  name: 'm',
  version: '3',
  last_inference: 1_700_000_000_123n,
  inference_count: big,
  execution_count: 5n,
  inference_stats: {
    success: d(1n, big),
    fail: d(2n, 20n),
    queue: d(3n, 30n),
    compute_input: d(4n, 40n),
    compute_infer: d(5n, 50n),
    compute_output: d(6n, 60n),
    cache_hit: d(0n, 0n),
    cache_miss: d(0n, 0n),
  },
  batch_stats: [
    { batch_size: 8n, compute_input: d(1n, 2n), compute_infer: d(3n, 4n), compute_output: d(5n, 6n) },
  ],
  memory_usage: [{ type: 'CPU', id: -1n, byte_size: 1024n }],
  response_stats: {
    '0': {
      compute_infer: d(1n, 1n),
      compute_output: d(2n, 2n),
      success: d(3n, 3n),
      fail: d(4n, 4n),
      empty_response: d(5n, 5n),
      cancel: d(6n, 6n),
    },
  },
};

describe('statistics converters (one neutral report, two wires)', () => {
  it('HTTP: renders every field in Triton’s key order with 64-bit values exact', () => {
    const text = renderStatisticsJson([report]);
    expect(text).toContain(`"inference_count":${big}`);
    expect(text).toContain(`"success":{"count":1,"ns":${big}}`);
    expect(text).toContain(
      '"response_stats":{"0":{"compute_infer":{"count":1,"ns":1},"compute_output":{"count":2,"ns":2},' +
        '"success":{"count":3,"ns":3},"fail":{"count":4,"ns":4},"empty_response":{"count":5,"ns":5},' +
        '"cancel":{"count":6,"ns":6}}}',
    );
    expect(text).toContain('"memory_usage":[{"type":"CPU","id":-1,"byte_size":1024}]');
    // The key order is pinned in model-statistics.test.ts; here the whole text must be valid JSON.
    expect(() => JSON.parse(text) as unknown).not.toThrow();
  });

  it('gRPC: builds a ModelStatisticsResponse that survives the wire with every field', () => {
    const bytes = encodeMessage(ModelStatisticsResponseSchema, statisticsResponse([report]));
    const back = decodeMessage(ModelStatisticsResponseSchema, bytes);
    const s = back.modelStats[0];
    expect(s).toMatchObject({
      name: 'm',
      version: '3',
      lastInference: 1_700_000_000_123n,
      inferenceCount: big,
      executionCount: 5n,
    });
    expect(s?.inferenceStats?.success).toMatchObject({ count: 1n, ns: big });
    expect(s?.inferenceStats?.computeOutput).toMatchObject({ count: 6n, ns: 60n });
    expect(s?.batchStats[0]).toMatchObject({ batchSize: 8n, computeInfer: { count: 3n, ns: 4n } });
    expect(s?.memoryUsage[0]).toMatchObject({ type: 'CPU', id: -1n, byteSize: 1024n });
    expect(s?.responseStats['0']).toMatchObject({
      emptyResponse: { count: 5n, ns: 5n },
      cancel: { count: 6n, ns: 6n },
    });
  });
});
