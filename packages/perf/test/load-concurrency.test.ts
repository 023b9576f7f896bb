/**
 * The concurrency load manager against identity models of known execution time (the identity
 * backend sleeps `execute_delay_ms` per execution): with C requests kept in flight on a model that
 * can run C at once, throughput is C / D and latency D; on one instance, 1 / D whatever the
 * concurrency, the extra requests waiting in the queue; growing and shrinking the level changes
 * the requests in flight; a request limit sends exactly that many.
 * Timing-sensitive: run under `flock /tmp/bench.lock`; tolerances are stated per assertion (they
 * allow for a loaded 2-core host, where the server runs in this same process). What a lone request
 * adds to D on this host is measured first, in the same run ({@link requestOverheadMs}).
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createLoadManager } from '../src/load/create-load-manager.js';
import { startEmbedded, type Embedded } from './helpers/embedded.js';
import {
  datasetOf,
  fp32Input,
  loadContext,
  measureWindow,
  requestOverheadMs,
  waitFor,
} from './helpers/load.js';

/** Execution time of the test models (ms). */
const D = 100;
const INSTANCES = 4;
/**
 * What the load manager may add to a lone request's latency (measured first, per test): C requests
 * answered at once, and the manager's own work between a response and the next request.
 */
const MARGIN_MS = 15;
/** A bound on what a request adds to D, for waits that are not measurements. */
const OVERHEAD_BOUND_MS = 100;

let server: Embedded;

beforeAll(async () => {
  server = await startEmbedded({
    identity: [
      { name: 'id_parallel', delayMs: D, instances: INSTANCES },
      { name: 'id_single', delayMs: D, instances: 1 },
      { name: 'id_fast', delayMs: 0, instances: 1 },
    ],
  });
});

afterAll(async () => {
  await server?.close();
});

const input = fp32Input('INPUT0', [1, 16]);
const dataset = datasetOf({ inputs: [input] });

describe.each(['http', 'grpc'] as const)('concurrency over %s', (protocol) => {
  const url = (): string => (protocol === 'http' ? server.url : server.grpcUrl);

  it(`C=${INSTANCES} on ${INSTANCES} instances of a ${D} ms model: throughput ≈ C/D, latency ≈ D`, async () => {
    const context = await loadContext(url(), { modelName: 'id_parallel', protocol }, dataset);
    // D plus what one request alone adds on this host now, plus what the manager may add.
    const slack = (await requestOverheadMs(context.client, 'id_parallel', [input], D)) + MARGIN_MS;
    const manager = createLoadManager(context);
    try {
      await manager.changeLevel(INSTANCES);
      await measureWindow(manager, 250); // warm-up
      const window = await measureWindow(manager, 1500);
      const expected = (INSTANCES * 1000) / D; // 40/s
      console.log(
        `${protocol} C=${INSTANCES}: ${window.throughput.toFixed(1)}/s (C/D = ${expected}), ${window.avgLatencyMs.toFixed(2)} ms (allowed: D + ${slack.toFixed(1)} ms)`,
      );
      expect(window.errors).toBe(0);
      expect(window.avgLatencyMs).toBeGreaterThanOrEqual(D);
      expect(window.avgLatencyMs).toBeLessThan(D + slack);
      // C / (D + slack) … C / D, ±5 % for a window catching one round more or fewer at its edges
      // (a 1.5 s window holds about 14 rounds of C requests).
      expect(window.throughput).toBeGreaterThan(((INSTANCES * 1000) / (D + slack)) * 0.95);
      expect(window.throughput).toBeLessThan(expected * 1.05);
      // Little's law: throughput × latency = requests in flight = C (±10 %; window edges).
      expect((window.throughput * window.avgLatencyMs) / 1000).toBeGreaterThan(INSTANCES * 0.9);
      expect((window.throughput * window.avgLatencyMs) / 1000).toBeLessThan(INSTANCES * 1.1);
    } finally {
      await manager.stop();
      await context.client.close();
    }
  });
});

describe('concurrency over http', () => {
  it('C=1 on one instance: throughput ≈ 1/D; C=3 on one instance: still 1/D, latency ≈ 3D', async () => {
    const context = await loadContext(server.url, { modelName: 'id_single' }, dataset);
    const slack = (await requestOverheadMs(context.client, 'id_single', [input], D)) + MARGIN_MS;
    const manager = createLoadManager(context);
    try {
      await manager.changeLevel(1);
      await measureWindow(manager, 150);
      const one = await measureWindow(manager, 1500);
      await manager.changeLevel(3);
      await measureWindow(manager, 400);
      const three = await measureWindow(manager, 1500);
      console.log(
        `1 instance: C=1 ${one.throughput.toFixed(1)}/s ${one.avgLatencyMs.toFixed(1)} ms; C=3 ${three.throughput.toFixed(1)}/s ${three.avgLatencyMs.toFixed(1)} ms (allowed: D + ${slack.toFixed(1)} ms per request)`,
      );
      expect(one.avgLatencyMs).toBeGreaterThanOrEqual(D);
      expect(one.avgLatencyMs).toBeLessThan(D + slack);
      expect(one.throughput).toBeGreaterThan(1000 / (D + slack));
      expect(one.throughput).toBeLessThan((1000 / D) * 1.1);
      // Three in flight on one instance: it serves one at a time, the others queue.
      expect(three.throughput).toBeGreaterThan(1000 / (D + slack));
      expect(three.throughput).toBeLessThan((1000 / D) * 1.1);
      expect(three.avgLatencyMs).toBeGreaterThan(3 * D * 0.9);
      expect(three.avgLatencyMs).toBeLessThan(3 * (D + slack));
    } finally {
      await manager.stop();
      await context.client.close();
    }
  });

  it('keeps exactly `level` requests in flight, growing and shrinking', async () => {
    const context = await loadContext(server.url, { modelName: 'id_parallel' }, dataset);
    const manager = createLoadManager(context);
    try {
      await manager.changeLevel(2);
      await waitFor(() => manager.inFlight === 2);
      const samples2: number[] = [];
      for (let i = 0; i < 10; i++) {
        samples2.push(manager.inFlight);
        await sleep(17);
      }
      // Between a response and the next request a slot is empty for microseconds only.
      expect(samples2.filter((n) => n === 2).length).toBeGreaterThanOrEqual(9);
      expect(Math.max(...samples2)).toBe(2);
      await manager.changeLevel(6);
      await waitFor(() => manager.inFlight === 6);
      await manager.changeLevel(1);
      // Slots above the level stop after their current request (≤ D + overhead).
      await waitFor(() => manager.inFlight === 1, 2 * (D + OVERHEAD_BOUND_MS));
      await sleep(D * 2);
      expect(manager.inFlight).toBe(1);
    } finally {
      await manager.stop();
      await context.client.close();
    }
    expect(manager.inFlight).toBe(0);
  });

  it('a request limit sends exactly that many requests, then nothing until the next level', async () => {
    const context = await loadContext(server.url, { modelName: 'id_fast' }, dataset);
    const manager = createLoadManager(context);
    try {
      await manager.changeLevel(4, 37);
      expect(manager.inFlight).toBe(4);
      await waitFor(() => manager.inFlight === 0);
      await sleep(50);
      expect(manager.takeRecords()).toHaveLength(37);
      await manager.changeLevel(3, 10);
      await waitFor(() => manager.inFlight === 0);
      await sleep(50);
      const records = manager.takeRecords();
      expect(records).toHaveLength(10);
      expect(records.every((r) => r.ok && r.responseNs.length === 1 && r.endNs >= r.startNs)).toBe(true);
      expect(manager.inFlight).toBe(0);
    } finally {
      await manager.stop();
      await context.client.close();
    }
  });

  it('more than 10 requests in flight on the one abort signal raise no listener-leak warning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(`${warning.name}: ${warning.message}`);
    };
    process.on('warning', onWarning);
    const context = await loadContext(server.url, { modelName: 'id_fast' }, dataset);
    const manager = createLoadManager(context);
    try {
      await manager.changeLevel(16, 200);
      expect(manager.inFlight).toBe(16);
      await waitFor(() => manager.inFlight === 0);
      const records = manager.takeRecords();
      expect(records).toHaveLength(200);
      expect(records.every((r) => r.ok)).toBe(true);
      await sleep(50); // warnings are emitted on a later tick
      expect(warnings.filter((w) => w.includes('MaxListenersExceeded'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await manager.stop();
      await context.client.close();
    }
  });
});
