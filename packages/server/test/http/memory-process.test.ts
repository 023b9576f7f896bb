/**
 * Issue 14, items 5 and 7, measured on a server in its own process (`test/helpers/memory-server.ts`,
 * run from the TypeScript sources): its RSS read from /proc while the attack runs, and what it still
 * holds after the clients are gone and a full GC (array buffers, body budget, unsent output). Each
 * attack is the issue's, at the server's default limits where that stays fast; the bounds asserted are
 * loose (the machine is shared) but far below what the unbounded server reached.
 */
import { connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';

import { afterEach, describe, expect, it } from 'vitest';

import { encodeInferRequest } from '@tritonserver-ts/protocol/http';

import {
  MiB,
  mb,
  peakRss,
  sleep,
  startMemoryChild,
  until,
  type MemoryChild as Child,
} from '../helpers/memory-child.js';
import type { MemoryServerOptions, MemoryServerStats } from '../helpers/memory-server.js';

let child: Child | undefined;

afterEach(async () => {
  const c = child;
  child = undefined;
  await c?.stop();
});

async function startChild(options: MemoryServerOptions): Promise<Child> {
  child = await startMemoryChild(options);
  return child;
}

/** One request on its own connection (closed after): the status, or 0 when the server closed first. */
function exchange(
  port: number,
  request: Buffer,
  readReply = true,
): Promise<{ socket: Socket; status: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(request);
      let got = '';
      const status = new Promise<number>((done) => {
        if (!readReply) return;
        socket.on('data', (d: Buffer) => {
          got += d.toString('latin1');
          const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
          if (m !== null) done(Number(m[1]));
        });
        socket.once('close', () => done(Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0)));
      });
      resolve({ socket, status });
    });
    socket.on('error', () => undefined);
    socket.once('error', reject);
  });
}

/** A normal client's request on its own connection (`Connection: close`), its status. */
async function normal(port: number, path = '/v2/health/ready'): Promise<number> {
  const { socket, status } = await exchange(
    port,
    Buffer.from(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
  );
  const s = await status;
  socket.destroy();
  return s;
}

function identityRequest(bytes: number): Buffer {
  const n = Math.floor(bytes / 4);
  const { body, headerLength } = encodeInferRequest(
    [{ name: 'INPUT0', datatype: 'FP32', shape: [1, n], data: new Float32Array(n).fill(1.5) }],
    { outputs: [{ name: 'OUTPUT0', binaryData: true }] },
  );
  return Buffer.concat([
    Buffer.from(
      `POST /v2/models/identity_fp32/infer HTTP/1.1\r\nHost: x\r\nInference-Header-Content-Length: ${headerLength}\r\nContent-Length: ${body.byteLength}\r\n\r\n`,
    ),
    Buffer.from(body),
  ]);
}

describe('memory of a server process under the issue 14 attacks', () => {
  it('item 5: forty clients that never read 16 MiB responses are cut at the send timeout and the memory is returned', async () => {
    const c = await startChild({ models: ['identity_fp32'], http: { sendTimeoutMs: 1000 } });
    const request = identityRequest(16 * MiB);
    expect(await normal(c.port)).toBe(200);
    const base = await c.stats();
    const rounds: { peak: number; after: MemoryServerStats }[] = [];
    for (let round = 0; round < 3; round++) {
      const peak = peakRss(c);
      // Forty connections send their request and never read: the paused socket's kernel buffers fill.
      const sockets: Socket[] = [];
      for (let i = 0; i < 40; i++) {
        const { socket } = await exchange(c.port, request, false);
        socket.pause();
        sockets.push(socket);
      }
      expect(await normal(c.port)).toBe(200);
      // Every connection is gone (cut by the server, or answered 503 and closed by nobody: count them).
      const gone = await until(async () => {
        const s = await c.stats();
        return s.unsentResponseBytes === 0 && s.bodyBudgetUsed === 0 && s.connectionsCut > 0;
      }, 15_000);
      expect(gone).toBe(true);
      for (const s of sockets) s.destroy();
      expect(await until(async () => (await c.stats()).connections === 0, 5000)).toBe(true);
      rounds.push({ peak: peak(), after: await c.stats() });
    }
    const [first, second, third] = rounds as [(typeof rounds)[0], (typeof rounds)[0], (typeof rounds)[0]];
    console.info(
      `item 5: RSS ${mb(base.rss)} MiB before, peak ${rounds.map((r) => mb(r.peak)).join(' / ')} MiB, ` +
        `${rounds.map((r) => mb(r.after.rss)).join(' / ')} MiB after each round; array buffers after ` +
        `${mb(base.arrayBuffers)} → ${rounds.map((r) => mb(r.after.arrayBuffers)).join(' / ')} MiB; ` +
        `${third.after.connectionsCut} connections cut`,
    );
    // Nothing is kept once the clients are gone: every response buffer and body was released…
    for (const r of rounds) {
      expect(r.after.arrayBuffers - base.arrayBuffers).toBeLessThan(48 * MiB);
      expect(r.after.bodyBudgetUsed).toBe(0);
      expect(r.after.unsentResponseBytes).toBe(0);
    }
    // …so a later attack reuses the memory of the earlier ones instead of adding to it (one attack
    // holds 40 × 16 MiB = 640 MiB of responses). The first attack starts on a fresh heap, and the C
    // allocator keeps part of what it took (RSS 400–640 MiB after it, against ~165 before), so the
    // second attack's peak may sit 300–460 MiB above the first's (measured on a quiet host; 161 and
    // 207 MiB on a loaded one). From then on peaks level off (five rounds: 847, 1389, 1207, 1193,
    // 1287 MiB), so the third attack is compared with the two before it; a leak of the responses
    // would add ~640 MiB per attack. The arrayBuffers checks above are the exact ones.
    const before = {
      peak: Math.max(first.peak, second.peak),
      rss: Math.max(first.after.rss, second.after.rss),
    };
    expect(third.after.rss - before.rss).toBeLessThan(320 * MiB);
    // The peak is the noisiest figure: in one full-suite run the third peak sat 342 MiB above the
    // earlier ones (1238 / 1232 / 1574 MiB) while every round's array buffers came back to +16 MiB;
    // 448 MiB still fails on a leak of one attack's 640 MiB.
    expect(third.peak - before.peak).toBeLessThan(448 * MiB);
  }, 60_000);

  it('item 7: sixteen concurrent gzip bombs stay within the body budget and release it', async () => {
    const c = await startChild({ models: ['simple'], http: {} }); // default limits: 64 MiB, 256 MiB
    const bomb = gzipSync(Buffer.alloc(63 * MiB, 0x20));
    const head = `POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: ${bomb.byteLength}\r\nConnection: close\r\n\r\n`;
    const request = Buffer.concat([Buffer.from(head), bomb]);
    const base = await c.stats();
    const peak = peakRss(c);
    const attempts = await Promise.all(Array.from({ length: 16 }, () => exchange(c.port, request)));
    const statuses = await Promise.all(attempts.map((a) => a.status));
    const top = peak();
    for (const a of attempts) a.socket.destroy();
    expect(
      statuses.every((s) => s === 400 || s === 503),
      String(statuses),
    ).toBe(true);
    expect(await normal(c.port)).toBe(200);
    // Bodies that decompressed within the limits went on to the JSON decoder's worker, which is
    // ended once idle (1 s), returning them.
    expect(await until(async () => (await c.stats()).arrayBuffers - base.arrayBuffers < 16 * MiB, 5000)).toBe(
      true,
    );
    const after = await c.stats();
    console.info(
      `item 7 (gzip bombs): RSS ${mb(base.rss)} MiB before, peak ${mb(top)}, ${mb(after.rss)} after; ` +
        `array buffers ${mb(base.arrayBuffers)} → ${mb(after.arrayBuffers)} MiB; statuses ${statuses.join(',')}`,
    );
    // Sixteen 63 MiB outputs at once would be over 1 GiB (twice that while joined). The budget holds
    // 256 MiB of output at a time; pieces of refused bombs wait for the next GC, and a body that fits
    // is decoded (as a string) in the JSON worker: a few hundred MiB more at worst.
    expect(top - base.rss).toBeLessThan(800 * MiB);
    expect(after.bodyBudgetUsed).toBe(0);
    expect(after.arrayBuffers - base.arrayBuffers).toBeLessThan(16 * MiB);
  }, 60_000);

  it('item 7: sixteen concurrent large JSON bodies: the budget admits what it can hold, 503 + Retry-After for the rest, and releases it all', async () => {
    const c = await startChild({
      models: ['identity_fp32'],
      http: { maxInputSize: 16 * MiB, maxInflightBodyBytes: 64 * MiB },
    });
    const n = 3_000_000; // "1.25," per value: a 15 MB JSON body
    const json = Buffer.from(
      JSON.stringify({
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, n], data: new Array<number>(n).fill(1.25) }],
        outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }],
      }),
    );
    const head = `POST /v2/models/identity_fp32/infer HTTP/1.1\r\nHost: x\r\nContent-Length: ${json.byteLength}\r\nConnection: close\r\n\r\n`;
    const request = Buffer.concat([Buffer.from(head), json]);
    const base = await c.stats();
    const peak = peakRss(c);
    const attempts = await Promise.all(Array.from({ length: 16 }, () => exchange(c.port, request)));
    const during = await normal(c.port);
    const statuses = await Promise.all(attempts.map((a) => a.status));
    const top = peak();
    for (const a of attempts) a.socket.destroy();
    expect(during).toBe(200);
    expect(
      statuses.every((s) => s === 200 || s === 503),
      String(statuses),
    ).toBe(true);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(4);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(1);
    await sleep(1500); // the JSON decoder's worker ends when idle, with what it was handed
    const after = await c.stats();
    console.info(
      `item 7 (JSON bodies): RSS ${mb(base.rss)} MiB before, peak ${mb(top)}, ${mb(after.rss)} after; ` +
        `array buffers ${mb(base.arrayBuffers)} → ${mb(after.arrayBuffers)} MiB; statuses ${statuses.join(',')}`,
    );
    expect(top - base.rss).toBeLessThan(1024 * MiB);
    expect(after.bodyBudgetUsed).toBe(0);
    // The onnxruntime worker keeps one reusable input buffer per instance (12 MB here).
    expect(after.arrayBuffers - base.arrayBuffers).toBeLessThan(48 * MiB);
  }, 60_000);
});
