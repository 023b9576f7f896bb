/**
 * What one client can make the HTTP front end hold (issue 14): request bodies in flight share one
 * budget (503 + Retry-After past it, released in every path), compressed bombs come out of the same
 * budget, a client that does not read its responses is cut off after the send timeout or past the
 * per-connection output cap, and an over-limit body is answered before it is drained.
 */
import { connect, type Socket } from 'node:net';
import { rm } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { encodeInferRequest } from '@tritonserver-ts/client/protocol';

import { InferenceServer } from '../../src/core/server.js';
import { startHttpServer, type HttpServerHandle } from '../../src/http/server.js';
import { makeRepository } from '../helpers/server.js';

const MiB = 1024 * 1024;
let repository: string;
let core: InferenceServer;
let http: HttpServerHandle;

beforeAll(async () => {
  repository = await makeRepository(['identity_fp32', 'simple']);
  core = await InferenceServer.create({ modelRepositories: [repository], logSink: () => undefined });
  http = await startHttpServer(core, {
    port: 0,
    host: '127.0.0.1',
    maxInputSize: 4 * MiB,
    maxInflightBodyBytes: 8 * MiB,
    sendTimeoutMs: 500,
  });
});

afterAll(async () => {
  await http.close(1000);
  await core.shutdown();
  await rm(repository, { recursive: true, force: true });
});

/** A raw HTTP/1.1 exchange: what came back, whether the server closed the socket, and how much was sent. */
interface Exchange {
  readonly reply: string;
  readonly closedByServer: boolean;
}

function openSocket(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(http.port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Collects a socket's data until it closes or `ms` pass. */
function collect(socket: Socket, ms: number): Promise<Exchange> {
  return new Promise((resolve) => {
    let reply = '';
    let closedByServer = false;
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ reply, closedByServer });
    }, ms);
    socket.on('data', (d: Buffer) => (reply += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('close', () => {
      closedByServer = true;
      clearTimeout(timer);
      resolve({ reply, closedByServer });
    });
  });
}

const live = async (): Promise<number> =>
  (await fetch(`http://127.0.0.1:${http.port}/v2/health/live`)).status;

describe('request bodies in flight share one budget', () => {
  it('refuses bodies past the budget with 503 + Retry-After, serves the rest, and returns to zero', async () => {
    const size = 3 * MiB;
    const body = Buffer.concat([Buffer.from('{}'), Buffer.alloc(size - 2, 0x20)]);
    const first = Math.floor(1.2 * MiB);
    const sockets = await Promise.all(Array.from({ length: 7 }, openSocket));
    const replies = sockets.map(() => '');
    sockets.forEach((s, i) => {
      s.on('data', (d: Buffer) => (replies[i] += d.toString('latin1')));
      s.on('error', () => undefined);
    });
    // Seven uploads of 3 MiB get 1.2 MiB in each (8.4 MiB: over the 8 MiB budget)…
    for (const s of sockets) {
      s.write(`POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nContent-Length: ${size}\r\n\r\n`);
      s.write(body.subarray(0, first));
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(http.bodyBudget.used).toBeLessThanOrEqual(8 * MiB);
    expect(await live()).toBe(200);
    // …then, one after the other, the uploads still open send the rest.
    for (const [i, s] of sockets.entries()) {
      if (replies[i] !== '') continue;
      s.write(body.subarray(first));
      const deadline = Date.now() + 5000;
      while (replies[i] === '' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    }
    for (const s of sockets) s.destroy();
    const statuses = replies.map((r) => Number(/^HTTP\/1\.1 (\d{3})/.exec(r)?.[1]));
    expect(
      statuses.every((st) => st === 200 || st === 503),
      String(statuses),
    ).toBe(true);
    expect(statuses.filter((st) => st === 200).length).toBeGreaterThanOrEqual(3);
    const refused = replies.filter((r) => r.startsWith('HTTP/1.1 503'));
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) {
      expect(r).toMatch(/retry-after: 1/i);
      expect(r).toContain("exceed the server's limit of 8388608 bytes (--http-max-inflight-body-bytes)");
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(http.bodyBudget.used).toBe(0);
    expect(await live()).toBe(200);
  }, 30_000);

  it('refuses a declared body the budget cannot hold before reading any of it', async () => {
    // Two clients hold 3.5 MiB each of the 8 MiB budget, mid-upload.
    const hogs = await Promise.all([openSocket(), openSocket()]);
    const hogged = hogs.map((h) => collect(h, 5000));
    for (const h of hogs) {
      h.write(`POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nContent-Length: ${4 * MiB}\r\n\r\n`);
      h.write(Buffer.alloc(3 * MiB + MiB / 2, 0x20));
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(http.bodyBudget.used).toBe(7 * MiB);
    // A third declares 4 MiB and sends nothing: it is refused at once.
    const third = await openSocket();
    const answer = collect(third, 5000);
    third.write(`POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nContent-Length: ${4 * MiB}\r\n\r\n`);
    const started = Date.now();
    let reply = '';
    third.on('data', (d: Buffer) => (reply += d.toString('latin1')));
    while (reply === '' && Date.now() - started < 3000) await new Promise((r) => setTimeout(r, 10));
    expect(reply).toMatch(/^HTTP\/1\.1 503 /);
    expect(reply).toMatch(/retry-after: 1/i);
    for (const h of hogs) h.destroy();
    third.destroy();
    await Promise.all([...hogged, answer]);
    await new Promise((r) => setTimeout(r, 100));
    expect(http.bodyBudget.used).toBe(0);
  }, 30_000);

  it('counts decompressed bytes too: concurrent gzip bombs are refused and release everything', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * MiB, 0x20)); // ~64 KiB on the wire
    const answers = await Promise.all(
      Array.from({ length: 16 }, () =>
        fetch(`http://127.0.0.1:${http.port}/v2/models/simple/infer`, {
          method: 'POST',
          headers: { 'Content-Encoding': 'gzip' },
          body: bomb,
        }).then(async (r) => ({ status: r.status, text: await r.text() })),
      ),
    );
    for (const a of answers) {
      expect([400, 503]).toContain(a.status);
      expect(a.text).toMatch(/Use --http-max-input-size|--http-max-inflight-body-bytes/);
    }
    expect(http.bodyBudget.used).toBe(0);
    expect(await live()).toBe(200);
  }, 30_000);
});

describe('responses a client does not read', () => {
  // Responses larger than the kernel's socket buffers can absorb (the 16 MiB).
  let big: HttpServerHandle;
  beforeAll(async () => {
    big = await startHttpServer(core, {
      port: 0,
      host: '127.0.0.1',
      maxInputSize: 32 * MiB,
      sendTimeoutMs: 500,
    });
  });
  afterAll(async () => {
    await big.close(1000);
  });

  /** An identity request whose response carries `mib` MiB of binary output. */
  function bigInfer(mib: number): Buffer {
    const n = (mib * MiB) / 4;
    const { body, headerLength } = encodeInferRequest(
      [{ name: 'INPUT0', datatype: 'FP32', shape: [1, n], data: new Float32Array(n) }],
      { outputs: [{ name: 'OUTPUT0', binaryData: true }] },
    );
    const head = `POST /v2/models/identity_fp32/infer HTTP/1.1\r\nHost: x\r\nInference-Header-Content-Length: ${headerLength}\r\nContent-Length: ${body.byteLength}\r\n\r\n`;
    return Buffer.concat([Buffer.from(head), Buffer.from(body)]);
  }

  it('closes connections whose responses are not delivered within the send timeout', async () => {
    const sockets = await Promise.all(
      Array.from(
        { length: 4 },
        () =>
          new Promise<Socket>((resolve, reject) => {
            const socket = connect(big.port, '127.0.0.1', () => resolve(socket));
            socket.once('error', reject);
          }),
      ),
    );
    const connections = (): Promise<number> =>
      new Promise((resolve, reject) => big.server.getConnections((e, n) => (e ? reject(e) : resolve(n))));
    for (const s of sockets) {
      s.on('error', () => undefined);
      s.pause(); // never read (a paused client does not even notice the close: count on the server)
      s.write(bigInfer(16));
    }
    const started = Date.now();
    await new Promise((r) => setTimeout(r, 200));
    expect(await connections()).toBe(4);
    while ((await connections()) > 0 && Date.now() - started < 10_000)
      await new Promise((r) => setTimeout(r, 50));
    // The 500 ms send timeout (after the inference) cut every non-reader off, freeing its response.
    expect(await connections()).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
    for (const s of sockets) s.destroy();
    expect((await fetch(`http://127.0.0.1:${big.port}/v2/health/live`)).status).toBe(200);
  }, 30_000);

  it('leaves a client that reads its responses alone', async () => {
    const n = (16 * MiB) / 4;
    const { body, headerLength } = encodeInferRequest(
      [{ name: 'INPUT0', datatype: 'FP32', shape: [1, n], data: new Float32Array(n).fill(2) }],
      { outputs: [{ name: 'OUTPUT0', binaryData: true }] },
    );
    for (let i = 0; i < 2; i++) {
      const r = await fetch(`http://127.0.0.1:${big.port}/v2/models/identity_fp32/infer`, {
        method: 'POST',
        headers: { 'Inference-Header-Content-Length': String(headerLength) },
        body,
      });
      expect(r.status).toBe(200);
      expect((await r.arrayBuffer()).byteLength).toBeGreaterThan(16 * MiB);
    }
  }, 30_000);
});

describe('an over-limit body', () => {
  it('is answered first: a client that uploads before reading gets the 400, not a reset', async () => {
    const socket = await openSocket();
    let reply = '';
    let reset = false;
    socket.on('data', (d: Buffer) => (reply += d.toString('latin1')));
    socket.on('error', () => (reset = true));
    const size = 5 * MiB; // over the 4 MiB limit, within what the server drains
    socket.write(`POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nContent-Length: ${size}\r\n\r\n`);
    // The whole body is written before anything is read, as simple clients do.
    await new Promise<void>((resolve) => socket.write(Buffer.alloc(size, 0x20), () => resolve()));
    const deadline = Date.now() + 5000;
    while (!reply.includes('"}') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    socket.destroy();
    expect(reset).toBe(false);
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect(reply).toContain(`Request JSON size of ${size} exceeds the maximum allowed value of ${4 * MiB}`);
    expect(await live()).toBe(200);
  }, 30_000);

  it('keeps the connection usable once the rest has been drained', async () => {
    const socket = await openSocket();
    let reply = '';
    socket.on('data', (d: Buffer) => (reply += d.toString('latin1')));
    const size = 4 * MiB + 1;
    socket.write(`POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nContent-Length: ${size}\r\n\r\n`);
    socket.write(Buffer.alloc(size, 0x20));
    socket.write('GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n');
    const deadline = Date.now() + 5000;
    while (!/HTTP\/1\.1 200 /.test(reply) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    socket.destroy();
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect(reply).toMatch(/HTTP\/1\.1 200 /);
  }, 30_000);
});
