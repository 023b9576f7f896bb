/**
 * Where a request's `success` duration starts: as Triton's `request_start_ns`, when the core starts
 * the request (trace `REQUEST_START`), after the front end has received and decoded it. A client
 * that takes long to send its body must not show up as server time in the statistics.
 */
import { connect } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestServer, type TestServer } from '../helpers/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ only: ['simple'] });
});
afterAll(async () => {
  await srv.close();
});

const PAUSE_MS = 400;

/** One `simple` infer (JSON body) whose headers go first and whose body follows `PAUSE_MS` later. */
function slowBodyInfer(): Promise<string> {
  const body = JSON.stringify({
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
    ],
  });
  const { port } = new URL(srv.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(
        `POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
      );
      setTimeout(() => socket.write(body), PAUSE_MS);
    });
    let reply = '';
    socket.on('data', (d: Buffer) => (reply += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(reply));
  });
}

async function successStats(): Promise<{ count: number; ns: number }> {
  const res = await fetch(`${srv.url}/v2/models/simple/stats`);
  const json = (await res.json()) as {
    model_stats: { inference_stats: { success: { count: number; ns: number } } }[];
  };
  return json.model_stats[0]!.inference_stats.success;
}

describe('statistics: the success duration', () => {
  it('starts when the core starts the request, not when the headers arrived (Triton request_start_ns)', async () => {
    const before = await successStats();
    const started = performance.now();
    const reply = await slowBodyInfer();
    const elapsedMs = performance.now() - started;
    expect(reply).toMatch(/^HTTP\/1\.1 200 /);
    expect(reply).toContain('"OUTPUT0"');
    // The client saw the whole pause ...
    expect(elapsedMs).toBeGreaterThanOrEqual(PAUSE_MS - 5);
    const after = await successStats();
    expect(after.count).toBe(before.count + 1);
    // ... the server's statistics do not: counting from the headers would be ≥ 400 ms.
    const ms = (after.ns - before.ns) / 1e6;
    expect(ms).toBeGreaterThan(0);
    expect(ms).toBeLessThan(PAUSE_MS / 2);
  });
});
