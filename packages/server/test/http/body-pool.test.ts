/**
 * Binary infer bodies are received into reused buffers (issue 11): the pool's own rules (alignment,
 * reuse of equal sizes, bounds, buffers given back once), and over HTTP that bodies sharing the pool,
 * one after another and at the same time, each get their own data back, that a body cut off by its
 * client returns its buffer, and that small, JSON and compressed bodies stay outside the pool.
 */
import { connect } from 'node:net';
import { rm } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { decodeInferResponse, encodeInferRequest } from '@tritonserver-ts/protocol/http';
import { pooledCapacityFor } from '@tritonserver-ts/protocol';

import { InferenceServer } from '../../src/core/server.js';
import { BodyPool, POOLED_BODY_MAX_BYTES, POOLED_BODY_MIN_BYTES } from '../../src/http/body-pool.js';
import { startHttpServer, type HttpServerHandle } from '../../src/http/server.js';
import { makeRepository } from '../helpers/server.js';

describe('BodyPool', () => {
  it('aligns the given byte, reuses a buffer for an equal size and hands it out once', () => {
    const pool = new BodyPool();
    const a = pool.take(100_000, 13);
    expect(a.byteLength).toBe(100_000);
    expect((a.byteOffset + 13) % 8).toBe(0);
    expect(a.buffer.byteLength).toBeGreaterThan(a.byteOffset + a.byteLength);
    const b = pool.take(100_000, 13);
    expect(b.buffer).not.toBe(a.buffer);
    pool.give(a);
    pool.give(a); // a second give is ignored: the buffer is idle once
    expect(pool.idleBytes).toBe(a.buffer.byteLength);
    const c = pool.take(100_000, 5);
    expect(c.buffer).toBe(a.buffer);
    expect((c.byteOffset + 5) % 8).toBe(0);
    expect(pool.idleBytes).toBe(0);
    expect(pool.take(100_000).buffer).not.toBe(a.buffer);
  });

  it('does not give a much larger idle buffer to a small body, nor keep foreign or detached ones', () => {
    const pool = new BodyPool();
    const big = pool.take(1_000_000);
    pool.give(big);
    expect(pool.take(100_000).buffer).not.toBe(big.buffer);
    pool.give(Buffer.alloc(200_000));
    expect(pool.idleBytes).toBe(big.buffer.byteLength);
    const moved = pool.take(300_000);
    structuredClone(moved.buffer, { transfer: [moved.buffer as ArrayBuffer] });
    pool.give(moved);
    expect(pool.idleBytes).toBe(big.buffer.byteLength);
  });

  it('keeps at most its idle bytes and pools only bodies within its size bounds', () => {
    const pool = new BodyPool(pooledCapacityFor(200_001));
    const a = pool.take(200_000);
    const b = pool.take(200_000);
    pool.give(a);
    pool.give(b);
    expect(pool.idleBytes).toBe(a.buffer.byteLength);
    expect(pool.pools(POOLED_BODY_MIN_BYTES - 1)).toBe(false);
    expect(pool.pools(POOLED_BODY_MIN_BYTES)).toBe(true);
    expect(pool.pools(POOLED_BODY_MAX_BYTES)).toBe(true);
    expect(pool.pools(POOLED_BODY_MAX_BYTES + 1)).toBe(false);
    expect(pooledCapacityFor(602_112)).toBeLessThanOrEqual(602_112 * 1.125);
  });
});

describe('binary infer bodies over HTTP', () => {
  let repository: string;
  let core: InferenceServer;
  let http: HttpServerHandle;

  beforeAll(async () => {
    repository = await makeRepository(['identity_fp32', 'slow_identity']);
    core = await InferenceServer.create({ modelRepositories: [repository], logSink: () => undefined });
    http = await startHttpServer(core, { port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await http.close(1000);
    await core.shutdown();
    await rm(repository, { recursive: true, force: true });
  });

  const request = (n: number, fill: (i: number) => number) =>
    encodeInferRequest(
      [
        {
          name: 'INPUT0',
          datatype: 'FP32',
          shape: [1, n],
          data: Float32Array.from({ length: n }, (_, i) => fill(i)),
        },
      ],
      { outputs: [{ name: 'OUTPUT0', binaryData: true }] },
    );

  async function infer(
    model: string,
    body: { body: Uint8Array; headerLength: number | undefined },
    headers: Record<string, string> = {},
    payload: Uint8Array = body.body,
  ): Promise<Float32Array> {
    const r = await fetch(`http://127.0.0.1:${http.port}/v2/models/${model}/infer`, {
      method: 'POST',
      headers: { 'Inference-Header-Content-Length': String(body.headerLength ?? 0), ...headers },
      body: payload,
    });
    expect(r.status).toBe(200);
    const bytes = new Uint8Array(await r.arrayBuffer());
    const decoded = decodeInferResponse(bytes, r.headers.get('inference-header-content-length') ?? undefined);
    return decoded.outputs[0]?.data as Float32Array;
  }

  it('answers each body with its own data, one after another and at the same time', async () => {
    const n = 150_000; // 600 KB: pooled
    for (let round = 0; round < 3; round++) {
      const out = await infer(
        'identity_fp32',
        request(n, (i) => i + round),
      );
      expect(out.length).toBe(n);
      expect(out[0]).toBe(round);
      expect(out[n - 1]).toBe(n - 1 + round);
    }
    expect(http.bodyPool.idleBytes).toBeGreaterThan(0);
    // Concurrent requests on a model that holds each for 50 ms: every body is in flight at once.
    const outs = await Promise.all(
      Array.from({ length: 6 }, (_, k) =>
        infer(
          'slow_identity',
          request(n, (i) => k * 1e6 + (i % 997)),
        ),
      ),
    );
    outs.forEach((out, k) => {
      expect(out.length).toBe(n);
      expect(out[0]).toBe(k * 1e6);
      expect(out[n - 1]).toBe(k * 1e6 + ((n - 1) % 997));
    });
    // Bodies in flight together held buffers of their own.
    expect(http.bodyPool.idleBytes).toBeGreaterThan(2 * n * 4);
  });

  it('gives the buffer of a body cut off by its client back to the pool', async () => {
    const idle = http.bodyPool.idleBytes;
    const { body, headerLength } = request(150_000, () => 1);
    const socket = connect(http.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /v2/models/identity_fp32/infer HTTP/1.1\r\nHost: x\r\nInference-Header-Content-Length: ${headerLength ?? 0}\r\nContent-Length: ${body.byteLength}\r\n\r\n`,
    );
    socket.write(body.subarray(0, 300_000));
    await new Promise((r) => setTimeout(r, 100));
    // Taken out of the pool while the body arrives.
    expect(http.bodyPool.idleBytes).toBeLessThan(idle);
    socket.destroy();
    const deadline = Date.now() + 5000;
    while (http.bodyPool.idleBytes < idle && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    expect(http.bodyPool.idleBytes).toBe(idle);
  });

  it('leaves small and compressed bodies outside the pool', async () => {
    const idle = http.bodyPool.idleBytes;
    const small = await infer(
      'identity_fp32',
      request(100, (i) => i),
    );
    expect(small[99]).toBe(99);
    const big = request(150_000, (i) => i % 7);
    const out = await infer('identity_fp32', big, { 'Content-Encoding': 'gzip' }, gzipSync(big.body));
    expect(out[150_000 - 1]).toBe((150_000 - 1) % 7);
    expect(http.bodyPool.idleBytes).toBe(idle);
  });
});
