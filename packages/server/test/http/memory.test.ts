/**
 * What one client can make the HTTP front end hold (issue 14, items 5 and 7), in process with small
 * limits so each attack takes a moment: request bodies in flight share one budget (a declared
 * Content-Length reserved up front, chunked bodies and decompressed output as they grow; 503 +
 * Retry-After past it; released in every path), decompression is cut at the size limit and at the
 * budget, a client that takes none of its response for the send timeout or piles up unread responses
 * past the per-connection cap is cut off, clients that read are left alone, and an over-limit body is
 * answered before it is drained. `memory-process.test.ts` measures the same attacks in a separate
 * server process (RSS, and buffers returned after a full GC).
 */
import { connect, type Socket } from 'node:net';
import { rm } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { encodeInferRequest } from '@tritonserver-ts/protocol/http';

import { InferenceServer } from '../../src/core/server.js';
import { startHttpServer, type HttpServerHandle } from '../../src/http/server.js';
import { makeRepository, startTestServer } from '../helpers/server.js';

const MiB = 1024 * 1024;
let repository: string;
let core: InferenceServer;
/**
 * 4 MiB bodies at most, 8 MiB of them in flight. The send timeout is long here: these tests are about
 * the body budget, and on a loaded machine a 500 ms timeout cut the test's own keep-alive health probes
 * (the send-timeout tests below have their own server with 500 ms).
 */
let http: HttpServerHandle;

beforeAll(async () => {
  repository = await makeRepository(['identity_fp32', 'slow_identity', 'simple']);
  core = await InferenceServer.create({ modelRepositories: [repository], logSink: () => undefined });
  http = await startHttpServer(core, {
    port: 0,
    host: '127.0.0.1',
    maxInputSize: 4 * MiB,
    maxInflightBodyBytes: 8 * MiB,
    sendTimeoutMs: 10_000,
  });
});

afterAll(async () => {
  await http.close(1000);
  await core.shutdown();
  await rm(repository, { recursive: true, force: true });
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await sleep(10);
  }
  return true;
}

function openSocket(port = http.port): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** A raw client: everything received (latin1) and whether the server closed the connection. */
interface RawClient {
  readonly socket: Socket;
  received(): string;
  closed(): boolean;
}

async function rawClient(port = http.port): Promise<RawClient> {
  const socket = await openSocket(port);
  let received = '';
  let closed = false;
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  socket.on('error', () => undefined);
  socket.once('close', () => (closed = true));
  return { socket, received: () => received, closed: () => closed };
}

/** One HTTP response parsed out of raw bytes. */
interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** Every complete response (Content-Length framed) in `raw`. */
function parseResponses(raw: string): RawResponse[] {
  const out: RawResponse[] = [];
  let at = 0;
  for (;;) {
    const end = raw.indexOf('\r\n\r\n', at);
    if (end < 0) return out;
    const [statusLine, ...lines] = raw.slice(at, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const l of lines) {
      const i = l.indexOf(':');
      headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (raw.length < end + 4 + length) return out;
    out.push({
      status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')?.[1]),
      headers,
      body: raw.slice(end + 4, end + 4 + length),
    });
    at = end + 4 + length;
  }
}

/** A JSON repository-index body of exactly `size` bytes (`{}` and spaces). */
const indexBody = (size: number): Buffer => Buffer.concat([Buffer.from('{}'), Buffer.alloc(size - 2, 0x20)]);
const indexHead = (size: number): string =>
  `POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nContent-Length: ${size}\r\n\r\n`;

/** An identity_fp32 request whose response carries `bytes` of binary output (as one raw HTTP request). */
function identityRequest(bytes: number, model = 'identity_fp32'): { head: string; body: Buffer } {
  const n = Math.floor(bytes / 4);
  const { body, headerLength } = encodeInferRequest(
    [{ name: 'INPUT0', datatype: 'FP32', shape: [1, n], data: new Float32Array(n).fill(1.5) }],
    { outputs: [{ name: 'OUTPUT0', binaryData: true }] },
  );
  const head = `POST /v2/models/${model}/infer HTTP/1.1\r\nHost: x\r\nInference-Header-Content-Length: ${headerLength}\r\nContent-Length: ${body.byteLength}\r\n\r\n`;
  return { head, body: Buffer.from(body) };
}

/** The 503 of a full budget, as the issue asks: Retry-After and a JSON error naming the flag. */
function expectBudgetRefusal(r: RawResponse | undefined, limit: number): void {
  expect(r?.status).toBe(503);
  expect(r?.headers['retry-after']).toBe('1');
  expect(r?.headers['content-type']).toBe('application/json');
  expect((JSON.parse(r?.body ?? '') as { error: string }).error).toBe(
    `request bodies in flight exceed the server's limit of ${limit} bytes (--http-max-inflight-body-bytes); retry later`,
  );
}

const live = async (port = http.port): Promise<number> =>
  (await fetch(`http://127.0.0.1:${port}/v2/health/live`)).status;

/** A normal client's small inference (`simple`: INPUT0 + INPUT1). */
async function normalInfer(port = http.port): Promise<number> {
  const r = await fetch(`http://127.0.0.1:${port}/v2/models/simple/infer`, {
    method: 'POST',
    body: JSON.stringify({
      inputs: ['INPUT0', 'INPUT1'].map((name) => ({
        name,
        datatype: 'INT32',
        shape: [1, 16],
        data: Array.from({ length: 16 }, (_, i) => i),
      })),
    }),
  });
  await r.arrayBuffer();
  return r.status;
}

/** Samples `read()` every few ms until stopped; returns the largest value seen. */
function sampleMax(read: () => number): () => number {
  let max = read();
  const timer = setInterval(() => (max = Math.max(max, read())), 2);
  return () => {
    clearInterval(timer);
    return Math.max(max, read());
  };
}

describe('request bodies in flight share one budget', () => {
  it('reserves a declared Content-Length before reading: what cannot fit is refused at once (503 + Retry-After), drained politely, and the budget returns to zero', async () => {
    const size = 3 * MiB;
    // Four clients declare 3 MiB each and send nothing yet: two fit in the 8 MiB budget.
    const clients = await Promise.all(Array.from({ length: 4 }, () => rawClient()));
    for (const c of clients) c.socket.write(indexHead(size));
    expect(await until(() => clients.filter((c) => c.received() !== '').length === 2, 3000)).toBe(true);
    expect(http.bodyBudget.used).toBe(6 * MiB);
    const refused = clients.filter((c) => c.received() !== '');
    const admitted = clients.filter((c) => c.received() === '');
    for (const c of refused) expectBudgetRefusal(parseResponses(c.received())[0], 8 * MiB);
    // A normal client is served meanwhile.
    expect(await live()).toBe(200);
    expect(await normalInfer()).toBe(200);
    // The admitted ones upload and get their answers.
    for (const c of admitted) c.socket.write(indexBody(size));
    expect(await until(() => admitted.every((c) => parseResponses(c.received()).length === 1), 5000)).toBe(
      true,
    );
    for (const c of admitted) expect(parseResponses(c.received())[0]?.status).toBe(200);
    // A refused client that sends its body anyway is drained, and its connection stays usable.
    const polite = refused[0] as RawClient;
    polite.socket.write(indexBody(size));
    polite.socket.write('GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await until(() => parseResponses(polite.received()).length === 2, 5000)).toBe(true);
    expect(parseResponses(polite.received())[1]?.status).toBe(200);
    for (const c of clients) c.socket.destroy();
    expect(await until(() => http.bodyBudget.used === 0, 2000)).toBe(true);
  });

  it('reserves a chunked body as it arrives and refuses the one that would pass the budget', async () => {
    const piece = Math.floor(1.2 * MiB);
    const chunk = (data: Buffer): Buffer =>
      Buffer.concat([Buffer.from(`${data.byteLength.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
    const clients = await Promise.all(Array.from({ length: 7 }, () => rawClient()));
    const maxUsed = sampleMax(() => http.bodyBudget.used);
    // Seven chunked uploads of 1.2 MiB each: 8.4 MiB, over the 8 MiB budget.
    for (const c of clients) {
      c.socket.write('POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
      c.socket.write(chunk(indexBody(piece)));
    }
    expect(await until(() => clients.some((c) => c.received() !== ''), 3000)).toBe(true);
    await sleep(100);
    for (const c of clients) if (c.received() === '') c.socket.write('0\r\n\r\n');
    expect(await until(() => clients.every((c) => parseResponses(c.received()).length >= 1), 5000)).toBe(
      true,
    );
    expect(maxUsed()).toBeLessThanOrEqual(8 * MiB);
    const answers = clients.map((c) => parseResponses(c.received())[0]);
    const refused = answers.filter((a) => a?.status === 503);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) expectBudgetRefusal(r, 8 * MiB);
    expect(answers.filter((a) => a?.status === 200).length).toBeGreaterThanOrEqual(5);
    for (const c of clients) c.socket.destroy();
    expect(await until(() => http.bodyBudget.used === 0, 2000)).toBe(true);
  });

  it('a burst of concurrent large infer bodies beyond the budget: some 503 + Retry-After, the rest served, the server live throughout, the budget back to zero', async () => {
    const { head, body } = identityRequest(3.5 * MiB);
    const maxUsed = sampleMax(() => http.bodyBudget.used);
    const burst = Promise.all(
      Array.from({ length: 16 }, async () => {
        const c = await rawClient();
        c.socket.write(head);
        c.socket.write(body);
        await until(() => parseResponses(c.received()).length === 1 || c.closed(), 10_000);
        c.socket.destroy();
        return parseResponses(c.received())[0];
      }),
    );
    // A normal client throughout the burst.
    const normal: number[] = [];
    for (let i = 0; i < 5; i++) normal.push(await live(), await normalInfer());
    const answers = await burst;
    expect(normal.every((s) => s === 200)).toBe(true);
    expect(maxUsed()).toBeLessThanOrEqual(8 * MiB);
    const statuses = answers.map((a) => a?.status);
    expect(
      statuses.every((s) => s === 200 || s === 503),
      String(statuses),
    ).toBe(true);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(2);
    const refused = answers.filter((a) => a?.status === 503);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) expectBudgetRefusal(r, 8 * MiB);
    expect(await until(() => http.bodyBudget.used === 0, 2000)).toBe(true);
    expect(await live()).toBe(200);
  });

  it('returns the reservation in every path: client gone mid-body (declared and chunked), client gone during inference, error replies', async () => {
    // Gone mid-body.
    const declared = await rawClient();
    declared.socket.write(indexHead(3 * MiB));
    declared.socket.write(Buffer.alloc(MiB, 0x20));
    const chunked = await rawClient();
    chunked.socket.write(
      'POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    chunked.socket.write(`${MiB.toString(16)}\r\n`);
    chunked.socket.write(Buffer.alloc(MiB, 0x20));
    expect(await until(() => http.bodyBudget.used === 4 * MiB, 2000)).toBe(true);
    declared.socket.destroy();
    chunked.socket.destroy();
    expect(await until(() => http.bodyBudget.used === 0, 2000)).toBe(true);

    // Gone while its inference runs: the body stays reserved until the inference ends, then returns.
    const { head, body } = identityRequest(2 * MiB, 'slow_identity');
    const gone = await rawClient();
    gone.socket.write(head);
    gone.socket.write(body);
    expect(await until(() => http.bodyBudget.used >= 2 * MiB, 2000)).toBe(true);
    gone.socket.destroy();
    expect(await until(() => http.bodyBudget.used === 0, 3000)).toBe(true);

    // Error replies: unknown model, malformed JSON, unsupported encoding.
    const errors = await Promise.all([
      fetch(`http://127.0.0.1:${http.port}/v2/models/nope/infer`, { method: 'POST', body: '{"inputs": []}' }),
      fetch(`http://127.0.0.1:${http.port}/v2/models/simple/infer`, { method: 'POST', body: '{"inputs": [' }),
      fetch(`http://127.0.0.1:${http.port}/v2/models/simple/infer`, {
        method: 'POST',
        headers: { 'Content-Encoding': 'br' },
        body: Buffer.alloc(1000),
      }),
    ]);
    expect(errors.map((r) => r.status)).toEqual([400, 400, 415]);
    expect(http.bodyBudget.used).toBe(0);
  });
});

describe('request decompression', () => {
  it('concurrent gzip bombs past --http-max-input-size are cut at the limit (400, Triton message) and release everything', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * MiB, 0x20)); // ~64 KiB on the wire
    const maxUsed = sampleMax(() => http.bodyBudget.used);
    const answers = await Promise.all(
      Array.from({ length: 16 }, () =>
        fetch(`http://127.0.0.1:${http.port}/v2/models/simple/infer`, {
          method: 'POST',
          headers: { 'Content-Encoding': 'gzip' },
          body: bomb,
        }).then(async (r) => ({ status: r.status, text: await r.text() })),
      ),
    );
    expect(maxUsed()).toBeLessThanOrEqual(8 * MiB);
    for (const a of answers) {
      if (a.status === 503) continue; // the budget ran out first
      expect(a.status).toBe(400);
      expect(JSON.parse(a.text)).toEqual({
        error: `Decompressed data size exceeds the maximum allowed value of ${4 * MiB} bytes. Use --http-max-input-size to increase the limit.`,
      });
    }
    expect(answers.some((a) => a.status === 400)).toBe(true);
    expect(http.bodyBudget.used).toBe(0);
    expect(await live()).toBe(200);
  });

  describe('bodies under the size limit whose decompressed total passes the budget', () => {
    // 32 MiB bodies allowed, 32 MiB in flight; sixteen concurrent 31 MiB bombs would be 496 MiB.
    let wide: HttpServerHandle;
    beforeAll(async () => {
      wide = await startHttpServer(core, {
        port: 0,
        host: '127.0.0.1',
        maxInputSize: 32 * MiB,
        maxInflightBodyBytes: 32 * MiB,
      });
    });
    afterAll(async () => {
      await wide.close(1000);
    });

    it('are decompressed only as far as the budget allows: 503 past it, allocation bounded, budget back to zero', async () => {
      // Valid JSON once decompressed (400 for its missing inputs), 31 MiB of it.
      const bomb = gzipSync(Buffer.concat([Buffer.from('{}'), Buffer.alloc(31 * MiB, 0x20)]));
      const before = process.memoryUsage().arrayBuffers;
      const maxBuffers = sampleMax(() => process.memoryUsage().arrayBuffers);
      const maxUsed = sampleMax(() => wide.bodyBudget.used);
      const answers = await Promise.all(
        Array.from({ length: 16 }, () =>
          fetch(`http://127.0.0.1:${wide.port}/v2/models/simple/infer`, {
            method: 'POST',
            headers: { 'Content-Encoding': 'gzip' },
            body: bomb,
          }).then(async (r) => ({
            status: r.status,
            text: await r.text(),
            retry: r.headers.get('retry-after'),
          })),
        ),
      );
      const grown = (maxBuffers() - before) / MiB;
      expect(maxUsed()).toBeLessThanOrEqual(32 * MiB);
      const statuses = answers.map((a) => a.status);
      expect(
        statuses.every((s) => s === 400 || s === 503),
        String(statuses),
      ).toBe(true);
      expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(8);
      for (const a of answers.filter((x) => x.status === 400)) expect(a.text).not.toContain('Decompressed');
      for (const a of answers.filter((x) => x.status === 503)) {
        expect(a.retry).toBe('1');
        expect(a.text).toContain('--http-max-inflight-body-bytes');
      }
      // Decompressing all sixteen at once would hold ~500 MiB (twice that while joined); within the
      // budget the server holds at most 32 MiB of output at a time, plus pieces not yet collected.
      expect(grown, `array buffers grew by ${grown.toFixed(0)} MiB`).toBeLessThan(200);
      expect(wide.bodyBudget.used).toBe(0);
      expect(await live(wide.port)).toBe(200);
    });
  });
});

describe('responses a client does not read', () => {
  // Responses larger than the kernel's socket buffers can absorb (the 16 MiB).
  let big: HttpServerHandle;
  beforeAll(async () => {
    big = await startHttpServer(core, {
      port: 0,
      host: '127.0.0.1',
      maxInputSize: 32 * MiB,
      maxInflightBodyBytes: 256 * MiB,
      sendTimeoutMs: 500,
    });
  });
  afterAll(async () => {
    await big.close(1000);
  });

  const connections = (server: HttpServerHandle): Promise<number> =>
    new Promise((resolve, reject) => server.server.getConnections((e, n) => (e ? reject(e) : resolve(n))));

  it('closes connections whose clients take none of their response for the send timeout, and frees it', async () => {
    const { head, body } = identityRequest(16 * MiB);
    const cutBefore = big.responseWriter.connectionsCut;
    const sockets = await Promise.all(Array.from({ length: 4 }, () => openSocket(big.port)));
    for (const s of sockets) {
      s.on('error', () => undefined);
      s.pause(); // never read (a paused client does not even notice the close: count on the server)
      s.write(head);
      s.write(body);
    }
    const started = Date.now();
    // The responses are built and wait, unread.
    expect(await until(() => big.responseWriter.unsentBytes > 32 * MiB, 5000)).toBe(true);
    expect(await connections(big)).toBe(4);
    // A normal client meanwhile.
    expect(await normalInfer(big.port)).toBe(200);
    // 500 ms without progress (after the inference) cuts every non-reader off, freeing its response.
    // (Counted by the writer: the normal client's keep-alive connection stays open.)
    expect(await until(() => big.responseWriter.connectionsCut - cutBefore === 4, 10_000)).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(big.responseWriter.unsentBytes).toBe(0);
    expect(await connections(big)).toBeLessThanOrEqual(1);
    for (const s of sockets) s.destroy();
    expect(await live(big.port)).toBe(200);
  });

  it('keeps a slow reader that makes progress, though its response takes several send timeouts', async () => {
    const { head, body } = identityRequest(16 * MiB);
    const s = await openSocket(big.port);
    let got = 0;
    let closed = false;
    s.once('close', () => (closed = true));
    // Reads about 256 KiB every 20 ms (~12 MiB/s): never 500 ms without progress, 16 MiB take > 1 s.
    let budget = 0;
    s.on('data', (d: Buffer) => {
      got += d.byteLength;
      budget -= d.byteLength;
      if (budget <= 0) s.pause();
    });
    const ticker = setInterval(() => {
      budget = 256 * 1024;
      s.resume();
    }, 20);
    const started = Date.now();
    s.write(head);
    s.write(body);
    s.pause();
    const done = await until(() => got >= 16 * MiB || closed, 15_000);
    clearInterval(ticker);
    const took = Date.now() - started;
    s.destroy();
    expect(done).toBe(true);
    expect(closed).toBe(false);
    expect(got).toBeGreaterThanOrEqual(16 * MiB);
    expect(took).toBeGreaterThan(1000);
  });

  it('leaves keep-alive clients that read normally alone, across idle gaps longer than the send timeout', async () => {
    const { head, body } = identityRequest(8 * MiB);
    const c = await rawClient(big.port);
    const cutBefore = big.responseWriter.connectionsCut;
    for (let i = 1; i <= 4; i++) {
      c.socket.write(head);
      c.socket.write(body);
      expect(await until(() => parseResponses(c.received()).length === i, 5000)).toBe(true);
      expect(parseResponses(c.received())[i - 1]?.status).toBe(200);
      await sleep(600); // idle, longer than the 500 ms send timeout
    }
    expect(c.closed()).toBe(false);
    expect(big.responseWriter.connectionsCut).toBe(cutBefore);
    c.socket.destroy();
  });

  describe('a client that pipelines requests and reads none of the responses', () => {
    // A long send timeout: only the per-connection cap (8 MiB) can cut it off quickly.
    let capped: HttpServerHandle;
    beforeAll(async () => {
      capped = await startHttpServer(core, {
        port: 0,
        host: '127.0.0.1',
        maxInputSize: 32 * MiB,
        maxInflightBodyBytes: 256 * MiB,
        sendTimeoutMs: 20_000,
        maxConnectionOutputBytes: 8 * MiB,
      });
    });
    afterAll(async () => {
      await capped.close(1000);
    });

    it('is cut off once its unread responses pass --http-max-connection-output-bytes, long before the send timeout', async () => {
      const { head, body } = identityRequest(3.5 * MiB, 'slow_identity');
      const s = await openSocket(capped.port);
      s.on('error', () => undefined);
      s.pause();
      // Ten pipelined requests: 35 MiB of responses for a client that reads nothing.
      for (let i = 0; i < 10; i++) {
        s.write(head);
        s.write(body);
      }
      const started = Date.now();
      expect(await until(async () => (await connections(capped)) === 0, 10_000)).toBe(true);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(capped.responseWriter.connectionsCut).toBe(1);
      expect(await until(() => capped.responseWriter.unsentBytes === 0, 1000)).toBe(true);
      s.destroy();
      expect(await live(capped.port)).toBe(200);
    });

    it('still sends one response larger than the cap to a client that reads it', async () => {
      const { head, body } = identityRequest(16 * MiB);
      const c = await rawClient(capped.port);
      c.socket.write(head);
      c.socket.write(body);
      expect(await until(() => parseResponses(c.received()).length === 1, 10_000)).toBe(true);
      expect(parseResponses(c.received())[0]?.status).toBe(200);
      expect(c.closed()).toBe(false);
      c.socket.destroy();
    });
  });
});

describe('startServer passes the limits through', () => {
  it('--http-max-inflight-body-bytes refuses, --http-send-timeout-secs cuts a client that does not read', async () => {
    const server = await startTestServer({
      only: ['identity_fp32'],
      httpMaxInputSize: 32 * MiB,
      httpMaxInflightBodyBytes: 20 * MiB,
      httpSendTimeoutSecs: 1,
      httpMaxConnectionOutputBytes: 32 * MiB,
      log: { log_verbose_level: 1 },
    });
    try {
      const port = Number(new URL(server.url).port);
      const refused = await rawClient(port);
      refused.socket.write(indexHead(21 * MiB));
      expect(await until(() => parseResponses(refused.received()).length === 1, 3000)).toBe(true);
      expectBudgetRefusal(parseResponses(refused.received())[0], 20 * MiB);
      refused.socket.destroy();

      // A client that reads nothing until the server has logged the cut (1 s without progress), then
      // everything it can: only what the kernel buffers held, then the close.
      const { head, body } = identityRequest(16 * MiB);
      const s = await openSocket(port);
      s.on('error', () => undefined);
      s.pause();
      s.write(head);
      s.write(body);
      const cut = (): boolean =>
        server.logs.some((l) =>
          l.includes(
            'connection closed: its client took nothing for 1000 ms with 16777378 response bytes waiting (--http-send-timeout-secs)',
          ),
        );
      expect(await until(cut, 10_000)).toBe(true);
      let got = 0;
      let closed = false;
      s.on('data', (d: Buffer) => (got += d.byteLength));
      s.once('close', () => (closed = true));
      s.resume();
      expect(await until(() => closed, 5000)).toBe(true);
      expect(got).toBeLessThan(16 * MiB);
    } finally {
      await server.close();
    }
  });
});

describe('an over-limit body', () => {
  it('is answered first: a client that uploads before reading gets the 400, not a reset', async () => {
    const socket = await openSocket();
    let reply = '';
    let reset = false;
    socket.on('data', (d: Buffer) => (reply += d.toString('latin1')));
    socket.on('error', () => (reset = true));
    const size = 5 * MiB; // over the 4 MiB limit, within what the server drains
    socket.write(indexHead(size));
    // The whole body is written before anything is read, as simple clients do.
    await new Promise<void>((resolve) => socket.write(Buffer.alloc(size, 0x20), () => resolve()));
    await until(() => reply.includes('"}'), 5000);
    socket.destroy();
    expect(reset).toBe(false);
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect(reply).toContain(`request JSON size of ${size} exceeds the maximum allowed value of ${4 * MiB}`);
    expect(await live()).toBe(200);
  });

  it('keeps the connection usable once the rest has been drained', async () => {
    const c = await rawClient();
    const size = 4 * MiB + 1;
    c.socket.write(indexHead(size));
    c.socket.write(Buffer.alloc(size, 0x20));
    c.socket.write('GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await until(() => parseResponses(c.received()).length === 2, 5000)).toBe(true);
    c.socket.destroy();
    expect(parseResponses(c.received()).map((r) => r.status)).toEqual([400, 200]);
  });
});
