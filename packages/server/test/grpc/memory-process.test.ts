/**
 * Issue 23, items 1, 3 and 8, measured on a server in its own process (`test/helpers/memory-server.ts`
 * with its gRPC front end): RSS read from /proc while a hostile gRPC client runs, the event loop's
 * health (an HTTP `/v2/health/live` answered promptly during the attack), and what the server still
 * holds once the clients are gone. The attacker speaks HTTP/2 itself (`node:http2`), so it can do
 * what a real client library would not: never read its responses, send a gzip bomb, open thousands
 * of streams. Bounds are loose (the machine is shared) but far below what the unbounded server reached.
 */
import { connect as http2Connect, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { gzipSync } from 'node:zlib';

import { afterEach, describe, expect, it } from 'vitest';

import { encodeInferCall } from '@tritonserver-ts/protocol/grpc';

import {
  MiB,
  mb,
  sleep,
  startMemoryChild,
  until,
  watchMemoryChild as watch,
  type MemoryChild as Child,
} from '../helpers/memory-child.js';
import type { MemoryServerOptions } from '../helpers/memory-server.js';

let child: Child | undefined;
const sessions: ClientHttp2Session[] = [];

afterEach(async () => {
  for (const s of sessions.splice(0)) s.destroy();
  const c = child;
  child = undefined;
  await c?.stop();
});

async function startChild(options: MemoryServerOptions): Promise<Child> {
  child = await startMemoryChild(options);
  return child;
}

/** A gRPC message: the 5-byte prefix (compressed flag, length) and the bytes. */
function frame(message: Uint8Array, compressed = false): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt8(compressed ? 1 : 0, 0);
  head.writeUInt32BE(message.byteLength, 1);
  return Buffer.concat([head, message]);
}

function identityRequest(bytes: number): Buffer {
  const n = Math.floor(bytes / 4);
  return Buffer.from(
    encodeInferCall({
      modelName: 'identity_fp32',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, n], data: new Float32Array(n).fill(1.5) }],
    }),
  );
}

function session(c: Child): ClientHttp2Session {
  const s = http2Connect(`http://127.0.0.1:${c.grpcPort}`);
  s.on('error', () => undefined);
  sessions.push(s);
  return s;
}

/** Opens a call of `method`; the stream is paused (its responses are never read) unless `read`. */
function call(
  s: ClientHttp2Session,
  method: string,
  headers: Record<string, string> = {},
  read = false,
): ClientHttp2Stream {
  const stream = s.request({
    ':method': 'POST',
    ':path': `/inference.GRPCInferenceService/${method}`,
    'content-type': 'application/grpc',
    te: 'trailers',
    ...headers,
  });
  stream.on('error', () => undefined);
  if (!read) stream.pause();
  return stream;
}

/** The call's grpc-status (from trailers or a trailers-only response), reading its messages. */
function status(stream: ClientHttp2Stream): Promise<{ code: number; message: string }> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (h: Record<string, unknown>): void => {
      if (done || h['grpc-status'] === undefined) return;
      done = true;
      resolve({
        code: Number(h['grpc-status']),
        message: decodeURIComponent(typeof h['grpc-message'] === 'string' ? h['grpc-message'] : ''),
      });
    };
    stream.on('response', finish);
    stream.on('trailers', finish);
    stream.on('close', () => {
      if (!done) resolve({ code: -1, message: `closed (rst ${stream.rstCode})` });
    });
    stream.resume();
  });
}

/** Writes `bytes` on `stream`, waiting for the server to take them (gives up after `ms`). */
async function send(stream: ClientHttp2Stream, bytes: Buffer, ms: number): Promise<boolean> {
  if (stream.write(bytes)) return true;
  return await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => {
      stream.off('drain', onDrain);
      resolve(false);
    }, ms);
    const onDrain = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    stream.once('drain', onDrain);
  });
}

describe('gRPC memory of a server process under the issue 23 attacks', () => {
  it('item 1: a ModelStreamInfer stream that is never read stops being read; the server holds a bounded amount', async () => {
    const c = await startChild({
      models: ['identity_fp32'],
      http: {},
      grpc: { maxConnectionOutputBytes: 16 * MiB, streamMaxInflightRequests: 16, sendTimeoutMs: 60_000 },
    });
    const base = c.rss();
    const stop = watch(c);
    const s = session(c);
    const stream = call(s, 'ModelStreamInfer');
    // 1,000 requests of 256 KiB (256 MiB of answers) as fast as the server takes them, for 4 s.
    const request = frame(identityRequest(256 * 1024));
    // Requests written (the last one may still wait in the client when the server stopped reading).
    let sent = 0;
    const deadline = Date.now() + 4000;
    while (sent < 1000 && Date.now() < deadline) {
      sent++;
      if (!(await send(stream, request, deadline - Date.now()))) break;
    }
    await sleep(500);
    const during = await stop();
    console.info(
      `item 1 (stream): sent ${sent} requests before the server stopped reading; RSS ${mb(base)} → peak ${mb(during.peakRss)} MiB; worst health ${during.worstHealthMs.toFixed(0)} ms`,
    );
    // The server stopped reading long before 1,000 requests (16 in flight + 16 MiB queued ≈ 80 requests,
    // plus what HTTP/2 flow control and socket buffers hold).
    expect(sent).toBeLessThan(400);
    expect(during.peakRss - base).toBeLessThan(200 * MiB);
    expect(during.worstHealthMs).toBeLessThan(1000);
    // The stream still works once its client reads: every request it took is answered.
    let answered = 0;
    stream.on('data', () => undefined);
    const counted = new Promise<void>((resolve) => {
      let buffered = Buffer.alloc(0);
      stream.on('data', (d: Buffer) => {
        buffered = Buffer.concat([buffered, d]);
        while (buffered.byteLength >= 5 && buffered.byteLength >= 5 + buffered.readUInt32BE(1)) {
          buffered = buffered.subarray(5 + buffered.readUInt32BE(1));
          answered++;
          if (answered === sent) resolve();
        }
      });
    });
    stream.resume();
    await counted;
    stream.end();
    expect((await status(stream)).code).toBe(0);
    expect(answered).toBe(sent);
  }, 60_000);

  it('item 1: sixteen connections whose unary answers are never read are closed at the send timeout and their memory returned', async () => {
    const c = await startChild({
      models: ['identity_fp32'],
      http: {},
      grpc: { sendTimeoutMs: 1500 },
    });
    const request = frame(identityRequest(4 * MiB));
    const base = await c.stats();
    const stop = watch(c);
    const conns: ClientHttp2Session[] = [];
    // Per connection: how many of its calls the in-flight budget refused (a trailers-only
    // UNAVAILABLE, which arrives whether or not the client reads: headers are not flow-controlled).
    const refused: number[] = [];
    for (let i = 0; i < 16; i++) {
      const s = session(c);
      conns.push(s);
      refused.push(0);
      for (let j = 0; j < 8; j++) {
        const stream = call(s, 'ModelInfer');
        stream.on('response', (headers) => {
          if (headers['grpc-status'] !== undefined && headers['grpc-status'] !== '0')
            refused[i] = (refused[i] ?? 0) + 1;
        });
        stream.end(request);
      }
    }
    // 128 calls of 4 MiB against a 64 MiB in-flight budget: many are refused at once, the others
    // are answered with 4 MiB that is never read. A connection holding an unread answer is closed
    // by the server (a client that takes nothing for 1.5 s); one whose eight calls were all refused
    // holds nothing, so nothing closes it (with a busy host, or larger windows, that happens).
    const holding = (i: number): boolean => (refused[i] ?? 0) < 8;
    const closed = await until(() => conns.every((s, i) => !holding(i) || s.closed || s.destroyed), 20_000);
    const during = await stop();
    const after = await c.stats();
    const refusedOnly = conns.filter((_, i) => !holding(i)).length;
    console.info(
      `item 1 (unary): RSS ${mb(base.rss)} → peak ${mb(during.peakRss)} → ${mb(after.rss)} MiB after; array buffers ${mb(base.arrayBuffers)} → ${mb(after.arrayBuffers)} MiB; ${after.grpcConnectionsCut} connections cut, ${refusedOnly} with every call refused; worst health ${during.worstHealthMs.toFixed(0)} ms (128 inferences of 4 MiB at once)`,
    );
    // Every connection that held an answer was closed by the server, and with it everything it held.
    expect(closed).toBe(true);
    expect(refusedOnly).toBeLessThan(16);
    expect(after.grpcConnectionsCut).toBe(16 - refusedOnly);
    expect(after.grpcUnsentBytes).toBe(0);
    expect(after.grpcConnections).toBe(refusedOnly);
    expect(after.arrayBuffers - base.arrayBuffers).toBeLessThan(48 * MiB);
  }, 60_000);

  it('item 1: a connection over its unread-output cap gets RESOURCE_EXHAUSTED for new calls', async () => {
    const c = await startChild({
      models: ['identity_fp32'],
      http: {},
      grpc: { maxConnectionOutputBytes: 8 * MiB, sendTimeoutMs: 60_000 },
    });
    const request = frame(identityRequest(4 * MiB));
    const s = session(c);
    // Four answers of 4 MiB wait unread (16 MiB, over the 8 MiB cap).
    for (let j = 0; j < 4; j++) call(s, 'ModelInfer').end(request);
    await sleep(1500);
    const refused = call(s, 'ModelInfer', {}, true);
    refused.end(request);
    const answer = await status(refused);
    expect(answer.code).toBe(8); // RESOURCE_EXHAUSTED
    expect(answer.message).toMatch(/unread/);
  }, 30_000);

  it('item 3: a gzip bomb is refused with RESOURCE_EXHAUSTED before it is inflated in full', async () => {
    const c = await startChild({
      models: ['identity_fp32'],
      http: { maxInflightBodyBytes: 64 * MiB },
      grpc: {},
    });
    // 1 GiB of zeros in ~1 MiB of gzip.
    const bomb = gzipSync(Buffer.alloc(1024 * MiB), { level: 9 });
    const base = c.rss();
    const stop = watch(c);
    const answers = await Promise.all(
      [0, 1, 2, 3].map(() => {
        const stream = call(session(c), 'ModelInfer', { 'grpc-encoding': 'gzip' }, true);
        stream.end(frame(bomb, true));
        return status(stream);
      }),
    );
    const during = await stop();
    console.info(
      `item 3: gzip bomb ${mb(bomb.byteLength)} MiB → 1024 MiB ×4: RSS ${mb(base)} → peak ${mb(during.peakRss)} MiB; worst health ${during.worstHealthMs.toFixed(0)} ms; ${answers.map((a) => a.message).join(' | ')}`,
    );
    for (const a of answers) expect(a.code).toBe(8);
    expect(during.peakRss - base).toBeLessThan(300 * MiB);
    // A compressed request within the limits still works.
    const ok = call(session(c), 'ModelInfer', { 'grpc-encoding': 'gzip' }, true);
    ok.end(frame(gzipSync(identityRequest(1024)), true));
    expect((await status(ok)).code).toBe(0);
  }, 60_000);

  it('item 3: uncompressed requests in flight count in the budget shared with HTTP; refused ones get UNAVAILABLE and all is returned', async () => {
    const c = await startChild({
      models: ['slow_identity'],
      http: { maxInflightBodyBytes: 8 * MiB },
      grpc: {},
    });
    const n = (3 * MiB) / 4;
    const request = frame(
      Buffer.from(
        encodeInferCall({
          modelName: 'slow_identity',
          inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, n], data: new Float32Array(n).fill(2) }],
        }),
      ),
    );
    // Six 3 MiB requests at once to a model that takes 50 ms each, one at a time: two fit in 8 MiB.
    const answers = await Promise.all(
      [0, 1, 2, 3, 4, 5].map(() => {
        const stream = call(session(c), 'ModelInfer', {}, true);
        stream.end(request);
        return status(stream);
      }),
    );
    const ok = answers.filter((a) => a.code === 0).length;
    const refused = answers.filter((a) => a.code === 14);
    console.info(
      `item 3 (uncompressed): ${ok} served, ${refused.length} refused: ${refused[0]?.message ?? ''}`,
    );
    expect(ok).toBeGreaterThanOrEqual(2);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(ok + refused.length).toBe(6);
    for (const r of refused) expect(r.message).toMatch(/--http-max-inflight-body-bytes/);
    // Every reservation came back: the next request is served.
    expect(await until(async () => (await c.stats()).bodyBudgetUsed === 0, 5000)).toBe(true);
    const again = call(session(c), 'ModelInfer', {}, true);
    again.end(request);
    expect((await status(again)).code).toBe(0);
  }, 30_000);

  it('item 8: a connection may open at most the documented number of concurrent streams', async () => {
    const c = await startChild({ models: ['identity_fp32'], http: {}, grpc: { maxConcurrentStreams: 64 } });
    const s = session(c);
    await new Promise<void>((resolve) => s.once('remoteSettings', () => resolve()));
    expect(s.remoteSettings.maxConcurrentStreams).toBe(64);
  }, 30_000);
});
