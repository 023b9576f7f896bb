/**
 * Issue 23, item 2: a BYTES tensor costs memory in proportion to its bytes, not an object or a string
 * per element. Measured on a server in its own process (`test/helpers/memory-server.ts`, HTTP and
 * gRPC): its RSS read from /proc while several 8 MiB requests of empty elements (the worst ratio of
 * elements to bytes) run at once on each wire (gRPC `raw_input_contents` and `bytes_contents`, HTTP
 * binary and HTTP JSON), and the event loop's health (an HTTP `/v2/health/live` answered promptly
 * during the attack).
 *
 * - `identity_bytes` (identity backend) takes the buffer as it is: every request is answered in
 *   full (its output's size checked) and the server's memory grows by a few times the bytes in flight.
 * - `identity_string` (onnxruntime) needs a JavaScript string per element: that conversion is
 *   counted against the request's limits before it is made, so at the default limits these requests
 *   are refused (400 / INVALID_ARGUMENT over the per-request limit, UNAVAILABLE while the in-flight
 *   budget is taken) or answered, and memory stays bounded either way.
 *
 * Before the fix one such gRPC request took the server from ~180 MiB to ~2.1 GB (+3.8 GB for
 * `bytes_contents`), for 14-58 s, with the health check waiting up to 16 s.
 */
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import { connect as netConnect } from 'node:net';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { encodeModelInferRequest } from '@tritonserver-ts/protocol/grpc';

import {
  MiB,
  startMemoryChild,
  watchMemoryChild as watch,
  type MemoryChild as Child,
} from '../helpers/memory-child.js';
import type { MemoryServerOptions } from '../helpers/memory-server.js';

/** The BYTES identity models: the identity backend's (buffers), onnxruntime's (strings). */
const BUFFERS = 'identity_bytes';
const STRINGS = 'identity_string';
/** Requests sent at once on each wire. */
const CONCURRENT = Number(process.env.BYTES_MEMORY_CONCURRENT ?? 4);
const REQUEST_BYTES = 8 * MiB;

let child: Child | undefined;
const sessions: ClientHttp2Session[] = [];

afterEach(() => {
  for (const s of sessions.splice(0)) s.destroy();
});

async function stopChild(): Promise<void> {
  const c = child;
  child = undefined;
  await c?.stop();
}

async function startChild(options: MemoryServerOptions): Promise<Child> {
  child = await startMemoryChild(options);
  return child;
}

/** Appends the varint of `n` to `out`. */
function varint(out: number[], n: number): void {
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
}

/** A length-delimited protobuf field: tag, length, bytes. */
function field(number: number, bytes: Uint8Array): Buffer {
  const head: number[] = [];
  varint(head, (number << 3) | 2);
  varint(head, bytes.byteLength);
  return Buffer.concat([Buffer.from(head), bytes]);
}

/**
 * A `ModelInferRequest` for the BYTES identity model with `n` empty elements, as `bytes_contents`
 * (written by hand: 2 bytes per element, which protobuf-es would build as `n` objects here first).
 */
function bytesContentsRequest(model: string, n: number): Buffer {
  const shape: number[] = [];
  varint(shape, 1);
  varint(shape, n);
  // InferTensorContents.bytes_contents (field 8): tag 0x42, length 0, per element.
  const contents = Buffer.alloc(2 * n);
  for (let i = 0; i < n; i++) contents[2 * i] = 0x42;
  const input = Buffer.concat([
    field(1, Buffer.from('INPUT0')),
    field(2, Buffer.from('BYTES')),
    field(3, Uint8Array.from(shape)),
    field(5, contents),
  ]);
  return Buffer.concat([field(1, Buffer.from(model)), field(5, input)]);
}

/** A `ModelInferRequest` with `n` empty elements in `raw_input_contents` (4 zero bytes each). */
function rawContentsRequest(model: string, n: number): Buffer {
  return encodeModelInferRequest({
    modelName: model,
    inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1n, BigInt(n)] }],
    rawInputContents: [new Uint8Array(4 * n)],
  });
}

/** A gRPC message: the 5-byte prefix (not compressed, length) and the bytes. */
function frame(message: Uint8Array): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.byteLength, 1);
  return Buffer.concat([head, message]);
}

/** One unary `ModelInfer` on its own HTTP/2 session: the grpc-status and the response's size. */
function grpcInfer(c: Child, message: Buffer): Promise<{ code: number; detail: string; bytes: number }> {
  const s = http2Connect(`http://127.0.0.1:${c.grpcPort}`);
  s.on('error', () => undefined);
  sessions.push(s);
  return new Promise((resolve) => {
    const stream = s.request({
      ':method': 'POST',
      ':path': '/inference.GRPCInferenceService/ModelInfer',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    let bytes = 0;
    let done = false;
    const finish = (h: Record<string, unknown>): void => {
      if (done || h['grpc-status'] === undefined) return;
      done = true;
      resolve({
        code: Number(h['grpc-status']),
        detail: decodeURIComponent(typeof h['grpc-message'] === 'string' ? h['grpc-message'] : ''),
        bytes,
      });
      s.close();
    };
    stream.on('data', (d: Buffer) => (bytes += d.byteLength));
    stream.on('response', finish);
    stream.on('trailers', finish);
    stream.on('error', () => undefined);
    stream.on('close', () => {
      if (!done) resolve({ code: -1, detail: `closed (rst ${stream.rstCode})`, bytes });
    });
    stream.end(frame(message));
  });
}

/** One HTTP request on its own connection: the status and the body's size. */
function httpInfer(c: Child, head: string, body: Buffer): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(c.port, '127.0.0.1', () => {
      socket.write(Buffer.concat([Buffer.from(head), body]));
    });
    let got = Buffer.alloc(0);
    const parts: Buffer[] = [];
    socket.on('data', (d: Buffer) => parts.push(d));
    socket.once('error', reject);
    socket.once('close', () => {
      got = Buffer.concat(parts);
      const text = got.subarray(0, Math.min(got.byteLength, 4096)).toString('latin1');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const headerEnd = text.indexOf('\r\n\r\n');
      resolve({ status, bytes: headerEnd < 0 ? 0 : got.byteLength - headerEnd - 4 });
    });
  });
}

function httpHead(model: string, bytes: number, headerLength?: number): string {
  return (
    `POST /v2/models/${model}/infer HTTP/1.1\r\nHost: x\r\nConnection: close\r\n` +
    (headerLength !== undefined ? `Inference-Header-Content-Length: ${headerLength}\r\n` : '') +
    `Content-Length: ${bytes}\r\n\r\n`
  );
}

/** An HTTP binary request: the JSON header and `n` empty elements (4 zero bytes each). */
function httpBinaryRequest(model: string, n: number): { head: string; body: Buffer } {
  const json = Buffer.from(
    JSON.stringify({
      inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, n], parameters: { binary_data_size: 4 * n } }],
      outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }],
    }),
  );
  const body = Buffer.concat([json, Buffer.alloc(4 * n)]);
  return { head: httpHead(model, body.byteLength, json.byteLength), body };
}

/** An HTTP JSON request of `n` empty strings (3 bytes each), answered as JSON too. */
function httpJsonRequest(model: string, n: number): { head: string; body: Buffer } {
  const prefix = `{"inputs":[{"name":"INPUT0","datatype":"BYTES","shape":[1,${n}],"data":[`;
  const suffix = `]}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":false}}]}`;
  const data = Buffer.alloc(3 * n - 1, '"",');
  const body = Buffer.concat([Buffer.from(prefix), data, Buffer.from(suffix)]);
  return { head: httpHead(model, body.byteLength), body };
}

const mb = (bytes: number): number => Math.round(bytes / MiB);

/** Runs `attack` (several requests at once) while watching the child; logs and returns the numbers. */
async function measure<T>(
  c: Child,
  label: string,
  attack: () => Promise<T[]>,
): Promise<{ results: T[]; growth: number; worstHealthMs: number }> {
  const base = c.rss();
  const stop = watch(c);
  const started = performance.now();
  const results = await attack();
  const ms = performance.now() - started;
  const during = await stop();
  const growth = during.peakRss - base;
  const statuses = results.map((r) => (r as { status?: number }).status).join(',');
  console.info(
    `issue 23 item 2, ${label}: ${CONCURRENT} × ${mb(REQUEST_BYTES)} MiB of empty BYTES elements in ${ms.toFixed(0)} ms: ` +
      `RSS ${mb(base)} → peak ${mb(during.peakRss)} MiB (+${mb(growth)}); worst health ${during.worstHealthMs.toFixed(0)} ms; statuses ${statuses}`,
  );
  return { results, growth, worstHealthMs: during.worstHealthMs };
}

/** One request on a wire: whether it was answered with the whole output, or how it was refused. */
interface Outcome {
  /** 200 / gRPC OK. */
  readonly ok: boolean;
  /** HTTP status, or gRPC status code. */
  readonly status: number;
  readonly bytes: number;
}

interface Wire {
  readonly name: string;
  /** Elements in 8 MiB of empty elements on this wire. */
  readonly elements: number;
  send(c: Child, model: string, n: number): () => Promise<Outcome>;
}

const WIRES: readonly Wire[] = [
  {
    name: 'gRPC raw_input_contents',
    elements: REQUEST_BYTES / 4,
    send: (c, model, n) => {
      const message = rawContentsRequest(model, n);
      return async () => {
        const r = await grpcInfer(c, message);
        return { ok: r.code === 0, status: r.code, bytes: r.bytes };
      };
    },
  },
  {
    name: 'gRPC bytes_contents',
    elements: REQUEST_BYTES / 2,
    send: (c, model, n) => {
      const message = bytesContentsRequest(model, n);
      return async () => {
        const r = await grpcInfer(c, message);
        return { ok: r.code === 0, status: r.code, bytes: r.bytes };
      };
    },
  },
  {
    name: 'HTTP binary',
    elements: REQUEST_BYTES / 4,
    send: (c, model, n) => {
      const { head, body } = httpBinaryRequest(model, n);
      return async () => {
        const r = await httpInfer(c, head, body);
        return { ok: r.status === 200, status: r.status, bytes: r.bytes };
      };
    },
  },
  {
    name: 'HTTP JSON',
    elements: Math.floor(REQUEST_BYTES / 3),
    send: (c, model, n) => {
      const { head, body } = httpJsonRequest(model, n);
      return async () => {
        const r = await httpInfer(c, head, body);
        return { ok: r.status === 200, status: r.status, bytes: r.bytes };
      };
    },
  },
];

/** HTTP 400 / 503, gRPC INVALID_ARGUMENT (3) / UNAVAILABLE (14): refused by the limits. */
const REFUSED = new Set([400, 503, 3, 14]);

describe('BYTES tensors in a server process cost O(bytes) (issue 23, item 2)', () => {
  let c: Child;

  beforeAll(async () => {
    c = await startChild({ models: [BUFFERS, STRINGS], http: {}, grpc: {} });
  }, 30_000);

  afterAll(stopChild);

  it.each(WIRES)(
    '$name: 8 MiB requests of empty elements, several at once',
    async (wire) => {
      const n = wire.elements;
      // The identity backend takes the buffer: every request is answered with its whole output.
      const buffers = wire.send(c, BUFFERS, n);
      const served = await measure(c, `${wire.name}, ${BUFFERS}`, () =>
        Promise.all(Array.from({ length: CONCURRENT }, buffers)),
      );
      for (const r of served.results) {
        expect(r.status).toBe(wire.name.startsWith('gRPC') ? 0 : 200);
        // 4 bytes per element in a binary answer, `"",` in a JSON one.
        expect(r.bytes).toBeGreaterThan(wire.name === 'HTTP JSON' ? 3 * n : 4 * n);
      }
      // Four 8 MiB requests (and their answers) in flight: a few times their bytes (measured +0.1
      // to +0.25 GiB, the most for JSON, parsed in the decoder's worker), not 190 times (+1.9 GiB
      // for one such request before).
      expect(served.growth).toBeLessThan(384 * MiB);
      expect(served.worstHealthMs).toBeLessThan(1000);

      // onnxruntime's strings are counted before they are made: answered or refused, memory bounded.
      const strings = wire.send(c, STRINGS, n);
      const bounded = await measure(c, `${wire.name}, ${STRINGS}`, () =>
        Promise.all(Array.from({ length: CONCURRENT }, strings)),
      );
      for (const r of bounded.results) {
        if (r.ok) expect(r.bytes).toBeGreaterThan(wire.name === 'HTTP JSON' ? 3 * n : 4 * n);
        else expect(REFUSED.has(r.status), `status ${r.status}`).toBe(true);
      }
      expect(bounded.growth).toBeLessThan(512 * MiB);
      expect(bounded.worstHealthMs).toBeLessThan(1000);
    },
    60_000,
  );
});
