/**
 * runPerf against the embedded server, on identity models whose execution time is known
 * (`execute_delay_ms`): throughput, latency and the server breakdown are what the model's cost
 * implies, stability windows terminate, count windows and --request-count behave as
 * perf_analyzer's, metrics are scraped, failures end the run instead of looping.
 *
 * Timing-sensitive: run under `flock /tmp/bench.lock`. Windows are short (-p 300–500 ms);
 * tolerances are stated at each assertion.
 */
import { TritonClient } from '@tritonserver-ts/client';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { isPerfError } from '../src/errors.js';
import { perfOptions, type PerfOptions } from '../src/options/perf-options.js';
import { runPerf } from '../src/perf.js';
import type { LoadLevelResult, PerfProgress } from '../src/types.js';
import { startEmbedded, type Embedded } from './helpers/embedded.js';

const DELAY_MS = 20;
let embedded: Embedded;

beforeAll(async () => {
  embedded = await startEmbedded({
    identity: [
      { name: 'delay20', delayMs: DELAY_MS, maxBatchSize: 8, dims: [4] },
      { name: 'delay20_b', delayMs: DELAY_MS, maxBatchSize: 8, dims: [4] },
      { name: 'delay50', delayMs: 50, maxBatchSize: 8, dims: [4] },
      { name: 'doomed', delayMs: 10, maxBatchSize: 8, dims: [4] },
      { name: 'step10', delayMs: 10, maxBatchSize: 8, dims: [4] },
      { name: 'step5', delayMs: 5, maxBatchSize: 8, dims: [4] },
    ],
  });
  // ens: INPUT0 → step10 → inner (an ensemble: → step5) → OUTPUT0
  const ensemble = (name: string, steps: string, dims = '4'): string =>
    `name: "${name}"\nplatform: "ensemble"\nmax_batch_size: 8\n` +
    `input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ ${dims} ] } ]\n` +
    `output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ ${dims} ] } ]\n` +
    `ensemble_scheduling { step [ ${steps} ] }\n`;
  const stepOf = (model: string, input: string, output: string): string =>
    `{ model_name: "${model}" model_version: -1 input_map { key: "INPUT0" value: "${input}" } ` +
    `output_map { key: "OUTPUT0" value: "${output}" } }`;
  const files: [string, string][] = [
    ['inner', ensemble('inner', stepOf('step5', 'INPUT0', 'OUTPUT0'))],
    ['ens', ensemble('ens', `${stepOf('step10', 'INPUT0', 'mid')}, ${stepOf('inner', 'mid', 'OUTPUT0')}`)],
    // loose: takes any length, but its step wants 4 values: a request of 3 fails in the step
    ['loose', ensemble('loose', stepOf('step5', 'INPUT0', 'OUTPUT0'), '-1')],
  ];
  const client = new TritonClient({ url: embedded.url });
  try {
    for (const [name, config] of files) {
      await mkdir(join(embedded.repository, name, '1'), { recursive: true });
      await writeFile(join(embedded.repository, name, 'config.pbtxt'), config);
      await client.loadModel(name);
    }
  } finally {
    await client.close();
  }
});

afterAll(async () => {
  await embedded?.close();
});

function options(given: Partial<PerfOptions> & { readonly modelName: string }): PerfOptions {
  return perfOptions({
    url: embedded.url,
    measurementIntervalMs: 400,
    inputData: ['zero'],
    ...given,
  });
}

async function successCount(model: string): Promise<number> {
  const client = new TritonClient({ url: embedded.url });
  try {
    const stats = await client.getInferenceStatistics(model);
    return stats.model_stats.reduce((n, s) => n + Number(s.inference_stats.success.count), 0);
  } finally {
    await client.close();
  }
}

/** overhead + queue + compute input + infer + output vs. avg request latency (each truncated to µs). */
function breakdownGap(level: LoadLevelResult): number {
  const s = level.server;
  return Math.abs(
    s.overheadUs +
      s.queueUs +
      s.computeInputUs +
      s.computeInferUs +
      s.computeOutputUs -
      s.avgRequestLatencyUs,
  );
}

describe('runPerf on the embedded server (time windows)', () => {
  it('concurrency 1 and 4 on a 20 ms model: throughput, latency, queue and compute as the cost implies', async () => {
    const events: PerfProgress[] = [];
    const run = await runPerf(
      // -s 20: ~20 requests per window at concurrency 1, one request is 5 %
      options({
        modelName: 'delay20',
        stabilityPercentage: 20,
        load: { kind: 'concurrency', range: { start: 1, end: 4, step: 3 } },
      }),
      { onProgress: (e) => events.push(e) },
    );
    expect(run.model.name).toBe('delay20');
    expect(run.results.map((r) => r.level)).toEqual([1, 4]);
    const [c1, c4] = run.results as [LoadLevelResult, LoadLevelResult];
    for (const level of run.results) {
      expect(level.stable).toBe(true);
      expect(level.windows).toBeGreaterThanOrEqual(3);
      expect(level.windows).toBeLessThanOrEqual(10);
      expect(level.client.errorCount).toBe(0);
      // throughput is successful requests × batch ÷ window seconds
      // (durationUs is truncated to whole µs: compare to 1e-6 relative)
      const implied = level.client.requestCount / (level.client.durationUs / 1e6);
      expect(Math.abs(level.client.throughput / implied - 1)).toBeLessThan(1e-6);
      // one instance serves one 20 ms execution at a time: at most 50 infer/s, and (± 35 % for a
      // loaded 2-core host) close to it
      expect(level.client.throughput).toBeLessThanOrEqual(1000 / DELAY_MS + 1);
      expect(level.client.throughput).toBeGreaterThan((1000 / DELAY_MS) * 0.65);
      // compute infer is the delay (+ up to 5 ms of timer slack on a loaded host)
      expect(level.server.computeInferUs).toBeGreaterThanOrEqual(DELAY_MS * 1000);
      expect(level.server.computeInferUs).toBeLessThan((DELAY_MS + 5) * 1000);
      // the breakdown adds up (each part truncated to whole µs: at most 4 µs apart)
      expect(breakdownGap(level)).toBeLessThanOrEqual(4);
      expect(level.server.successCount).toBe(level.server.inferenceCount);
      expect(level.records.length).toBe(level.client.requestCount);
      expect(level.generator.cpuUs).toBeGreaterThan(0);
      expect(level.metrics).toBeUndefined();
    }
    // the client library's split: send and receive take little, the rest is the response wait
    expect(c1.client.avgResponseWaitUs).toBeGreaterThanOrEqual(DELAY_MS * 1000 * 0.95);
    expect(c1.client.avgSendUs + c1.client.avgRecvUs + c1.client.avgResponseWaitUs).toBeLessThanOrEqual(
      c1.client.avgLatencyUs + 2,
    );
    // concurrency 1: latency is the delay plus transport (< 15 ms on top), no queueing
    expect(c1.client.avgLatencyUs).toBeGreaterThanOrEqual(DELAY_MS * 1000);
    expect(c1.client.avgLatencyUs).toBeLessThan((DELAY_MS + 15) * 1000);
    expect(c1.server.queueUs).toBeLessThan(5000);
    // concurrency 4 on one instance: each request waits for the 3 ahead of it (≈ 60 ms of queue)
    expect(c4.server.queueUs).toBeGreaterThan(3 * DELAY_MS * 1000 * 0.8);
    expect(c4.client.avgLatencyUs).toBeGreaterThan(4 * DELAY_MS * 1000 * 0.9);
    // Little's law: concurrency = throughput × latency (± 15 %)
    expect((c4.client.throughput * c4.client.avgLatencyUs) / 1e6).toBeGreaterThan(4 * 0.85);
    expect((c4.client.throughput * c4.client.avgLatencyUs) / 1e6).toBeLessThan(4 * 1.15);
    // percentiles are ordered and within [min, max]
    const p = c4.client.percentileUs;
    expect(c4.client.minLatencyUs).toBeLessThanOrEqual(p[50] ?? -1);
    expect(p[50]).toBeLessThanOrEqual(p[90] ?? -1);
    expect(p[90]).toBeLessThanOrEqual(p[99] ?? -1);
    expect(p[99]).toBeLessThanOrEqual(c4.client.maxLatencyUs);
    // progress: level-start, ≥ 3 windows, level-done per level
    expect(events.filter((e) => e.kind === 'level-start').length).toBe(2);
    expect(events.filter((e) => e.kind === 'window').length).toBe(c1.windows + c4.windows);
    expect(events.filter((e) => e.kind === 'level-done').length).toBe(2);
  });

  it('an unreachable stability criterion ends after -r windows, marked unstable, and ends the sweep', async () => {
    const run = await runPerf(
      options({
        modelName: 'delay20',
        measurementIntervalMs: 300,
        stabilityPercentage: 0,
        maxTrials: 4,
        load: { kind: 'concurrency', range: { start: 1, end: 3, step: 1 } },
      }),
    );
    expect(run.results).toHaveLength(1);
    expect(run.results[0]?.stable).toBe(false);
    expect(run.results[0]?.windows).toBe(4);
    expect(run.results[0]?.client.requestCount).toBeGreaterThan(0);
  });

  it('-l: the sweep stops at the first level whose latency reaches the limit', async () => {
    // 20 ms per request on one instance: concurrency c waits ≈ 20·c ms; limit 50 ms
    const run = await runPerf(
      options({
        modelName: 'delay20',
        latencyThresholdMs: 50,
        stabilityPercentage: 25,
        load: { kind: 'concurrency', range: { start: 1, end: 0, step: 2 } },
      }),
    );
    const levels = run.results.map((r) => r.level);
    expect(levels[0]).toBe(1);
    const last = run.results.at(-1);
    // open range: it ended only because a level went over (or did not stabilise)
    expect(last?.overLatencyThreshold === true || last?.stable === false).toBe(true);
    expect(levels.length).toBeLessThanOrEqual(3); // concurrency 5 waits ≈ 100 ms
    for (const r of run.results.slice(0, -1)) expect(r.overLatencyThreshold).toBe(false);
  });
});

describe('runPerf over gRPC and on ensembles', () => {
  it('gRPC: the same model measures the same way', async () => {
    const run = await runPerf(
      options({
        modelName: 'delay20',
        protocol: 'grpc',
        url: embedded.grpcUrl,
        measurementIntervalMs: 300,
        stabilityPercentage: 30,
      }),
    );
    const level = run.results[0];
    expect(level?.stable).toBe(true);
    expect(level?.client.throughput).toBeLessThanOrEqual(1000 / DELAY_MS + 1);
    expect(level?.client.throughput).toBeGreaterThan((1000 / DELAY_MS) * 0.65);
    expect(level?.server.computeInferUs).toBeGreaterThanOrEqual(DELAY_MS * 1000);
    expect(level?.client.avgResponseWaitUs).toBeGreaterThan(0);
  });

  it('an ensemble reports its composing models recursively; queue and compute are their sums', async () => {
    const run = await runPerf(
      options({ modelName: 'ens', measurementIntervalMs: 300, stabilityPercentage: 30 }),
    );
    const level = run.results[0];
    expect(level?.stable).toBe(true);
    const server = level?.server;
    expect(server?.composing.map((c) => `${c.name}:${c.version}`)).toEqual(['step10:1', 'inner:1']);
    const inner = server?.composing[1]?.stats;
    expect(inner?.composing.map((c) => `${c.name}:${c.version}`)).toEqual(['step5:1']);
    // every ensemble request ran each step once (statistics are read while a request may be
    // between steps: at concurrency 1, one request at each end of the merged windows)
    const total = server?.successCount ?? 0;
    expect(total).toBeGreaterThan(10);
    expect(Math.abs((server?.composing[0]?.stats.successCount ?? 0) - total)).toBeLessThanOrEqual(2);
    expect(Math.abs((inner?.composing[0]?.stats.successCount ?? 0) - total)).toBeLessThanOrEqual(2);
    // compute infer = 10 ms + 5 ms (+ up to 5 ms of timer slack)
    expect(server?.computeInferUs).toBeGreaterThanOrEqual(15_000);
    expect(server?.computeInferUs).toBeLessThan(20_000);
    expect(server?.composing[0]?.stats.computeInferUs).toBeGreaterThanOrEqual(10_000);
    // the breakdown adds up (composing averages each truncated: a few µs)
    if (level !== undefined) expect(breakdownGap(level)).toBeLessThanOrEqual(8);
  });
});

describe('runPerf measurement modes', () => {
  it('request rate: throughput follows the rate, the level is the rate', async () => {
    // 25 req/s on a 20 ms model (50/s capacity): the server keeps up
    const run = await runPerf(
      options({
        modelName: 'delay20',
        measurementIntervalMs: 500,
        stabilityPercentage: 25,
        load: { kind: 'request_rate', distribution: 'constant', range: { start: 25, end: 25, step: 1 } },
      }),
    );
    const level = run.results[0];
    expect(level?.mode).toBe('request_rate');
    expect(level?.level).toBe(25);
    expect(level?.stable).toBe(true);
    // ± 15 % of the asked rate
    expect(level?.client.throughput).toBeGreaterThan(25 * 0.85);
    expect(level?.client.throughput).toBeLessThan(25 * 1.15);
    // no queueing at half the capacity: latency ≈ the delay
    expect(level?.client.avgLatencyUs).toBeLessThan((DELAY_MS + 15) * 1000);
  });

  it('count_windows: each window lasts until N requests ended (checked every second)', async () => {
    // 50 ms per request: 15 requests take 0.75 s, so each window is one 1 s check
    const run = await runPerf(
      options({
        modelName: 'delay50',
        measurementMode: 'count_windows',
        measurementRequestCount: 15,
        stabilityPercentage: 25,
      }),
    );
    const level = run.results[0];
    expect(level?.stable).toBe(true);
    const reported = Math.min(level?.windows ?? 0, 3);
    expect(level?.client.requestCount).toBeGreaterThanOrEqual(15 * reported);
    // three windows of whole seconds (≥ 1 s each, well under 2 s each)
    expect(level?.client.durationUs).toBeGreaterThanOrEqual(reported * 1_000_000);
    expect(level?.client.durationUs).toBeLessThan(reported * 2_000_000);
  });

  it('--request-count N sends exactly N requests (after the warmup) in one window', async () => {
    const before = await successCount('delay20_b');
    const run = await runPerf(
      options({
        modelName: 'delay20_b',
        measurementMode: 'count_windows',
        requestCount: 30,
        measurementRequestCount: 30,
        warmupRequestCount: 5,
        load: { kind: 'concurrency', range: { start: 2, end: 2, step: 1 } },
      }),
    );
    const level = run.results[0];
    expect(level?.windows).toBe(1);
    expect(level?.stable).toBe(true);
    expect(level?.client.requestCount).toBe(30);
    expect(level?.server.successCount).toBe(30);
    // the window is the span of the 30 requests: 30 × 20 ms on one instance ≈ 0.6 s (+ 40 %)
    expect(level?.client.durationUs).toBeGreaterThanOrEqual(30 * DELAY_MS * 1000);
    expect(level?.client.durationUs).toBeLessThan(30 * DELAY_MS * 1000 * 1.4);
    expect((await successCount('delay20_b')) - before).toBe(35);
  });

  it('--collect-metrics scrapes the metrics port; a CPU-only server has no GPU figures', async () => {
    const warnings: string[] = [];
    const run = await runPerf(
      options({
        modelName: 'delay20',
        measurementIntervalMs: 300,
        stabilityPercentage: 50,
        collectMetrics: true,
        metricsUrl: embedded.metricsUrl.replace(/^http:\/\//, ''),
        metricsIntervalMs: 100,
      }),
      { onWarning: (m) => warnings.push(m) },
    );
    const metrics = run.results[0]?.metrics;
    expect(metrics?.scrapes).toBeGreaterThanOrEqual(3);
    expect(metrics?.gpuUtilization).toEqual({});
    expect(metrics?.gpuMemoryTotalBytes).toEqual({});
    expect(warnings).toContain("WARNING: Unable to parse 'nv_gpu_utilization' metric.");
    expect(warnings.filter((w) => w.includes('nv_gpu_utilization'))).toHaveLength(1);
  });

  it('a metrics endpoint that does not answer fails the run with SERVER', async () => {
    const error = await runPerf(
      options({
        modelName: 'delay20',
        measurementIntervalMs: 300,
        collectMetrics: true,
        metricsUrl: '127.0.0.1:9/metrics',
        metricsIntervalMs: 100,
      }),
    ).catch((e: unknown) => e);
    expect(isPerfError(error, 'SERVER')).toBe(true);
    expect((error as Error).message).toMatch(
      /failed to collect metrics from http:\/\/127\.0\.0\.1:9\/metrics/,
    );
  });
});

describe('runPerf ends cleanly', () => {
  it("every request failing ends the run with PerfError SERVER and the first request's error", async () => {
    const started = Date.now();
    const error = await runPerf(
      options({
        modelName: 'loose',
        measurementIntervalMs: 300,
        maxTrials: 20,
        shapes: new Map([['INPUT0', [3]]]),
      }),
    ).catch((e: unknown) => e);
    expect(isPerfError(error, 'SERVER')).toBe(true);
    // the step's own shape error, not a statistics or timeout message
    expect((error as Error).message).toMatch(/step5/);
    expect((error as Error).message).not.toMatch(/statistics/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('the model unloaded mid-run ends the run with PerfError SERVER (no endless loop)', async () => {
    const client = new TritonClient({ url: embedded.url });
    try {
      const started = Date.now();
      const error = await runPerf(
        options({ modelName: 'doomed', measurementIntervalMs: 300, maxTrials: 20 }),
        {
          onProgress: (e) => {
            if (e.kind === 'level-start') setTimeout(() => void client.unloadModel('doomed'), 200);
          },
        },
      ).catch((e: unknown) => e);
      expect(isPerfError(error, 'SERVER')).toBe(true);
      expect((error as Error).message).toMatch(/doomed/);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await client.loadModel('doomed').catch(() => undefined);
      await client.close();
    }
  });

  it('an abort returns the levels measured so far', async () => {
    const controller = new AbortController();
    const run = await runPerf(
      options({
        modelName: 'delay20',
        measurementIntervalMs: 300,
        stabilityPercentage: 50,
        load: { kind: 'concurrency', range: { start: 1, end: 8, step: 1 } },
      }),
      {
        signal: controller.signal,
        onProgress: (e) => {
          if (e.kind === 'level-done') controller.abort();
        },
      },
    );
    expect(run.results.map((r) => r.level)).toEqual([1]);
  });
});
