/**
 * `nv_inference_request_failure{reason=…}` and `nv_inference_pending_request_count` on the real
 * server, each failure provoked for real on a Python model: REJECTED (its queue is full), CANCELED
 * (the client goes away while its request waits), BACKEND (the model raises).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { slowFailPythonModel } from '../../src/testing/index.js';
import { startPythonServer, type PythonTestServer } from '../python-backend/helpers.js';

let server: PythonTestServer;

beforeAll(async () => {
  server = await startPythonServer([slowFailPythonModel()], { metricsPort: 0, httpAddress: '127.0.0.1' });
}, 60_000);

afterAll(async () => {
  await server.close();
});

const L = 'model="py_slow_fail",version="1"';

async function metric(series: string): Promise<number | undefined> {
  const text = await (await fetch(server.running.metricsUrl as string)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const failures = (reason: string): Promise<number | undefined> =>
  metric(`nv_inference_request_failure{model="py_slow_fail",reason="${reason}",version="1"}`);

function send(x: number, signal?: AbortSignal): Promise<Response> {
  return fetch(`${server.url}/v2/models/py_slow_fail/infer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ inputs: [{ name: 'X', datatype: 'FP32', shape: [1, 1], data: [x] }] }),
    ...(signal !== undefined ? { signal } : {}),
  });
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('failure reasons and the pending count, provoked for real', () => {
  it('starts with every reason at 0', async () => {
    for (const reason of ['REJECTED', 'CANCELED', 'BACKEND', 'OTHER']) expect(await failures(reason)).toBe(0);
    expect(await metric(`nv_inference_pending_request_count{${L}}`)).toBe(0);
  });

  it('REJECTED: a request finding the queue full; the pending count is the one queued, not the executing one', async () => {
    const running = send(0.8);
    // Let the first request reach the instance before the second queues behind it.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const queued = send(0);
    await until(async () => (await metric(`nv_inference_pending_request_count{${L}}`)) === 1, 'one pending');
    const rejected = await send(0);
    expect(rejected.status).toBe(503);
    expect(((await rejected.json()) as { error: string }).error).toBe('Exceeds maximum queue size');
    expect(await failures('REJECTED')).toBe(1);
    expect((await running).status).toBe(200);
    expect((await queued).status).toBe(200);
    expect(await metric(`nv_inference_pending_request_count{${L}}`)).toBe(0);
    expect(await metric(`nv_inference_request_success{${L}}`)).toBe(2);
  });

  it('CANCELED: the client gives up on a request still waiting in the queue', async () => {
    const running = send(0.8);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const abort = new AbortController();
    const waiting = send(0, abort.signal).catch((error: unknown) => error);
    await until(async () => (await metric(`nv_inference_pending_request_count{${L}}`)) === 1, 'one pending');
    abort.abort();
    expect(await waiting).toBeInstanceOf(Error);
    await until(async () => (await failures('CANCELED')) === 1, 'the cancellation to count');
    expect(await metric(`nv_inference_pending_request_count{${L}}`)).toBe(0);
    expect((await running).status).toBe(200);
  });

  it('BACKEND: the model raises in execute', async () => {
    const failed = await send(-1);
    expect(failed.status).toBe(500);
    expect(((await failed.json()) as { error: string }).error).toContain('negative X');
    expect(await failures('BACKEND')).toBe(1);
    expect(await failures('REJECTED')).toBe(1);
    expect(await failures('CANCELED')).toBe(1);
    expect(await failures('OTHER')).toBe(0);
  });
});
