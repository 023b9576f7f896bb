/**
 * The request-rate and request-intervals load managers against identity models of known
 * execution time: the rate is hit within ±10 %, latency is the model's delay, constant gaps are
 * regular and Poisson gaps are exponential (coefficient of variation ≈ 1) with the right mean,
 * intervals are replayed in order, `--sync` keeps at most `--max-threads` requests in flight and
 * flags requests it could not send on time as delayed, and a stop ends a long wait at once.
 * Timing-sensitive: run under `flock /tmp/bench.lock`; tolerances are stated per assertion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createLoadManager } from '../src/load/create-load-manager.js';
import { poissonGaps } from '../src/load/schedule.js';
import type { RequestRecord } from '../src/types.js';
import { startEmbedded, type Embedded } from './helpers/embedded.js';
import {
  datasetOf,
  fp32Input,
  loadContext,
  measureWindow,
  requestOverheadMs,
  waitFor,
} from './helpers/load.js';

const D = 10;

let server: Embedded;

beforeAll(async () => {
  server = await startEmbedded({
    identity: [
      { name: 'id_rate', delayMs: D, instances: 4 },
      { name: 'id_slow', delayMs: 50, instances: 1 },
    ],
  });
});

afterAll(async () => {
  await server?.close();
});

const input = fp32Input('INPUT0', [1, 16]);
const dataset = datasetOf({ inputs: [input] });

/** Gaps (ms) between the issue times of consecutive requests. */
function gapsMs(records: readonly RequestRecord[]): number[] {
  const starts = records.map((r) => r.startNs).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return starts.slice(1).map((s, i) => Number(s - (starts[i] as bigint)) / 1e6);
}

function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

function cv(values: readonly number[]): number {
  const m = mean(values);
  return Math.sqrt(mean(values.map((v) => (v - m) ** 2))) / m;
}

describe('request rate', () => {
  it.each(['http', 'grpc'] as const)(
    'constant 100/s over %s: rate ±10 %%, latency ≈ D, regular gaps',
    async (protocol) => {
      const url = protocol === 'http' ? server.url : server.grpcUrl;
      const context = await loadContext(
        url,
        {
          modelName: 'id_rate',
          protocol,
          async: true,
          load: { kind: 'request_rate', range: { start: 100, end: 100, step: 1 }, distribution: 'constant' },
        },
        dataset,
      );
      // What a lone request adds to D on this host now (measured in this run).
      const overhead = await requestOverheadMs(context.client, 'id_rate', [input], D);
      const manager = createLoadManager(context);
      try {
        await manager.changeLevel(100);
        await measureWindow(manager, 200);
        const cpu0 = process.cpuUsage();
        const window = await measureWindow(manager, 2000);
        const cpu = process.cpuUsage(cpu0);
        const gaps = gapsMs(window.records);
        const sorted = [...gaps].sort((a, b) => a - b);
        const p50Error = Math.abs((sorted[Math.floor(sorted.length / 2)] ?? 0) - 10);
        console.log(
          `${protocol} rate 100/s: ${window.throughput.toFixed(1)}/s, latency ${window.avgLatencyMs.toFixed(2)} ms, gap mean ${mean(gaps).toFixed(3)} ms cv ${cv(gaps).toFixed(3)}, ` +
            `median gap error ${p50Error.toFixed(3)} ms, delayed ${window.records.filter((r) => r.delayed).length}, ` +
            `process CPU (generator + in-process server) ${((cpu.user + cpu.system) / window.records.length).toFixed(0)} µs/request`,
        );
        expect(window.errors).toBe(0);
        expect(window.throughput).toBeGreaterThan(90);
        expect(window.throughput).toBeLessThan(110);
        expect(window.avgLatencyMs).toBeGreaterThanOrEqual(D);
        expect(window.avgLatencyMs).toBeLessThan(D + overhead + 8);
        // Gaps: mean 10 ms (±5 %), the median one within 1 ms of it, and a spread well below the
        // exponential gaps' cv of 1 (timer lateness on a loaded host has reached cv 0.45).
        expect(mean(gaps)).toBeGreaterThan(9.5);
        expect(mean(gaps)).toBeLessThan(10.5);
        expect(p50Error).toBeLessThan(1);
        expect(cv(gaps)).toBeLessThan(0.6);
      } finally {
        await manager.stop();
        await context.client.close();
      }
    },
  );

  it('poisson 100/s: mean rate ±20 %, exponential gaps (cv ≈ 1)', async () => {
    const context = await loadContext(
      server.url,
      {
        modelName: 'id_rate',
        async: true,
        seed: 7,
        load: { kind: 'request_rate', range: { start: 100, end: 100, step: 1 }, distribution: 'poisson' },
      },
      dataset,
    );
    const manager = createLoadManager(context);
    try {
      await manager.changeLevel(100);
      const window = await measureWindow(manager, 2500);
      const gaps = gapsMs(window.records);
      console.log(
        `poisson 100/s: ${window.throughput.toFixed(1)}/s, gap mean ${mean(gaps).toFixed(2)} ms, cv ${cv(gaps).toFixed(2)}`,
      );
      expect(window.errors).toBe(0);
      // 250 expected arrivals: a Poisson count's sd is 6.3 %, so ±20 % is ±3 sd (the schedule's own
      // mean over many gaps is checked in load-schedule.test.ts).
      expect(window.throughput).toBeGreaterThan(80);
      expect(window.throughput).toBeLessThan(120);
      // Sharper: the requests answered are the seeded schedule's arrivals in the window (±3).
      const schedule = poissonGaps(100, 7);
      let at = schedule();
      let due = 0;
      while (at <= window.seconds * 1e9) {
        due += 1;
        at += schedule();
      }
      expect(Math.abs(window.records.length - due)).toBeLessThanOrEqual(3);
      expect(cv(gaps)).toBeGreaterThan(0.75);
      expect(cv(gaps)).toBeLessThan(1.25);
    } finally {
      await manager.stop();
      await context.client.close();
    }
  });

  it('--sync: at most --max-threads requests in flight; requests sent late are delayed', async () => {
    const context = await loadContext(
      server.url,
      {
        modelName: 'id_slow',
        async: false,
        maxThreads: 2,
        load: { kind: 'request_rate', range: { start: 100, end: 100, step: 1 }, distribution: 'constant' },
      },
      dataset,
    );
    const manager = createLoadManager(context);
    let maxInFlight = 0;
    const probe = setInterval(() => {
      maxInFlight = Math.max(maxInFlight, manager.inFlight);
    }, 2);
    try {
      await manager.changeLevel(100);
      const window = await measureWindow(manager, 1500);
      const delayed = window.records.filter((r) => r.delayed).length;
      console.log(
        `sync, 2 threads, 100/s asked of a 20/s model: ${window.throughput.toFixed(1)}/s, max in flight ${maxInFlight}, delayed ${delayed}/${window.records.length}`,
      );
      expect(maxInFlight).toBe(2);
      // The model serves 20/s; 100/s cannot be kept, so nearly every request is late.
      expect(window.throughput).toBeLessThan(22);
      expect(delayed).toBeGreaterThan(window.records.length * 0.8);
    } finally {
      clearInterval(probe);
      await manager.stop();
      await context.client.close();
    }
  });

  it('a request limit issues exactly that many at the rate; stop ends a long wait at once', async () => {
    const context = await loadContext(
      server.url,
      {
        modelName: 'id_rate',
        async: true,
        load: { kind: 'request_rate', range: { start: 200, end: 200, step: 1 }, distribution: 'constant' },
      },
      dataset,
    );
    const manager = createLoadManager(context);
    try {
      const t0 = process.hrtime.bigint();
      await manager.changeLevel(200, 20);
      await waitFor(() => manager.inFlight === 0 && Number(process.hrtime.bigint() - t0) > 150e6);
      const records = manager.takeRecords();
      expect(records).toHaveLength(20);
      // 20 requests at 200/s: the last one issued ~100 ms after the start.
      const span = Number((records.at(-1) as RequestRecord).startNs - t0) / 1e6;
      expect(span).toBeGreaterThan(90);
      expect(span).toBeLessThan(130);
      await manager.changeLevel(0.2); // the next request in 5 s
      const stopStart = Date.now();
      await manager.stop(1000);
      expect(Date.now() - stopStart).toBeLessThan(200);
      expect(manager.takeRecords()).toHaveLength(0);
    } finally {
      await manager.stop();
      await context.client.close();
    }
  });
});

describe('request intervals', () => {
  it('replays the intervals in order, in a loop', async () => {
    const intervalsUs = [5000, 25000, 10000];
    const context = await loadContext(
      server.url,
      { modelName: 'id_rate', async: true, load: { kind: 'request_intervals', intervalsUs } },
      dataset,
    );
    const manager = createLoadManager(context);
    try {
      const t0 = process.hrtime.bigint();
      await manager.changeLevel(0, 13);
      await waitFor(() => manager.inFlight === 0 && Number(process.hrtime.bigint() - t0) > 200e6);
      const records = manager.takeRecords();
      expect(records).toHaveLength(13);
      // Request i is due at t0 + the first i+1 intervals (looped): never early, rarely late by more
      // than the timer grain (median ≤ 1.5 ms, every one ≤ 15 ms on a loaded host).
      const starts = records.map((r) => r.startNs).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      let dueMs = 0;
      const lateness = starts.map((start, i) => {
        dueMs += (intervalsUs[i % intervalsUs.length] as number) / 1000;
        return Number(start - t0) / 1e6 - dueMs;
      });
      console.log(`intervals: lateness ${lateness.map((l) => l.toFixed(2)).join(' ')} ms`);
      expect(Math.min(...lateness)).toBeGreaterThanOrEqual(-0.05);
      const sorted = [...lateness].sort((a, b) => a - b);
      expect(sorted[Math.floor(sorted.length / 2)]).toBeLessThan(1.5);
      expect(Math.max(...lateness)).toBeLessThan(15);
    } finally {
      await manager.stop();
      await context.client.close();
    }
  });
});
