/**
 * Issue 26: a body the caller chunk-encoded itself, sent with both `Content-Length` and
 * `Transfer-Encoding: chunked` (what Python `requests` does for Triton's
 * `test_content_encoding_chunked_manually`), is framed by its chunked encoding and answered, as
 * Triton 2.73 answers it: a raw binary body, and the bytes of a gzip stream (`Content-Encoding`)
 * split into chunks. Such a request is served alone: its connection is closed after the answer, and
 * bytes after its chunked body never run as a request. Other parse errors keep node:http's answers.
 */
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { decodeInferResponse } from '@tritonserver-ts/protocol/http';

import { get, startTestServer, type TestServer } from '../helpers/server.js';

let srv: TestServer;
let port: number;

beforeAll(async () => {
  srv = await startTestServer({ only: ['identity_fp32', 'simple'] });
  port = Number(new URL(srv.url).port);
});
afterAll(async () => {
  await srv.close();
});

/** Chunked encoding of `data` in chunks of `size` bytes (hex sizes in upper case, as Triton's test). */
function chunkEncode(data: Uint8Array, size: number): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < data.byteLength; at += size) {
    const piece = data.subarray(at, at + size);
    parts.push(
      Buffer.from(`${piece.byteLength.toString(16).toUpperCase()}\r\n`),
      Buffer.from(piece),
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

interface Exchange {
  /** Every byte the server sent, until it closed the connection (or the wait ended). */
  readonly raw: Buffer;
  /** Whether the server closed the connection. */
  readonly closed: boolean;
}

/** Writes `parts` on one connection (one write each, `gapMs` apart) and collects the answer. */
function exchange(parts: readonly Buffer[], gapMs = 30, waitMs = 3000): Promise<Exchange> {
  return new Promise((resolve) => {
    const received: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => {
      void (async () => {
        for (const part of parts) {
          socket.write(part);
          await new Promise((r) => setTimeout(r, gapMs));
        }
      })();
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ raw: Buffer.concat(received), closed: false });
    }, waitMs);
    socket.on('data', (d: Buffer) => received.push(d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ raw: Buffer.concat(received), closed: true });
    });
  });
}

/** The first response in `raw`: status, headers (lower-case names), body. */
function firstResponse(raw: Buffer): { status: number; headers: Record<string, string>; body: Buffer } {
  const end = raw.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = raw.toString('latin1', 0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0),
    headers,
    body: raw.subarray(end + 4, end + 4 + length),
  };
}

const head = (lines: readonly string[]): Buffer => Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');

describe('a body with both Content-Length and Transfer-Encoding: chunked', () => {
  it('Triton’s test_content_encoding_chunked_manually: a raw binary body in one chunk is answered', async () => {
    const input = Float32Array.from([0, 1, 2, 3, 4, 5, 6, 7]);
    const body = chunkEncode(new Uint8Array(input.buffer), 1 << 20);
    const { raw, closed } = await exchange([
      head([
        'POST /v2/models/identity_fp32/infer HTTP/1.1',
        'Host: localhost:8000',
        'Inference-Header-Content-Length: 0',
        `Content-Length: ${body.byteLength}`,
        'Transfer-Encoding: chunked',
      ]),
      body,
    ]);
    const r = firstResponse(raw);
    expect(r.status).toBe(200);
    const decoded = decodeInferResponse(new Uint8Array(r.body), r.headers['inference-header-content-length']);
    expect(Array.from(decoded.outputs[0]?.data as Float32Array)).toEqual(Array.from(input));
    // Served alone: the connection is closed after the answer.
    expect(r.headers.connection).toBe('close');
    expect(closed).toBe(true);
  });

  it('the bytes of a gzip stream in chunks (Content-Encoding: gzip) are decoded', async () => {
    const json = JSON.stringify({
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Array<number>(16).fill(1) },
      ],
    });
    const body = chunkEncode(gzipSync(json), 7);
    // Content-Length before Transfer-Encoding this time (node:http names the other header first).
    const { raw } = await exchange([
      head([
        'POST /v2/models/simple/infer HTTP/1.1',
        'Host: x',
        'Content-Type: application/json',
        'Content-Encoding: gzip',
        'Transfer-Encoding: chunked',
        `Content-Length: ${body.byteLength}`,
      ]),
      body,
    ]);
    const r = firstResponse(raw);
    expect(r.status).toBe(200);
    const out = JSON.parse(r.body.toString()) as { outputs: { name: string; data: number[] }[] };
    expect(out.outputs.find((o) => o.name === 'OUTPUT0')?.data).toEqual(
      Array.from({ length: 16 }, (_, i) => i + 1),
    );
  });

  it('is answered after an earlier request on the same keep-alive connection', async () => {
    const body = chunkEncode(Buffer.from('{}'), 1);
    const { raw, closed } = await exchange(
      [
        head(['GET /v2/health/live HTTP/1.1', 'Host: x']),
        Buffer.concat([
          head([
            'POST /v2/repository/index HTTP/1.1',
            'Host: x',
            `Content-Length: ${body.byteLength}`,
            'Transfer-Encoding: chunked',
          ]),
          body,
        ]),
      ],
      200,
    );
    const text = raw.toString('latin1');
    expect(text.startsWith('HTTP/1.1 200 OK')).toBe(true);
    const second = firstResponse(raw.subarray(text.indexOf('HTTP/1.1', 8)));
    expect(second.status).toBe(200);
    expect(JSON.parse(second.body.toString())).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'simple' })]),
    );
    expect(closed).toBe(true);
  });

  it('bytes after the chunked body never run as a request (a proxy may have framed them by Content-Length)', async () => {
    const settings = async (): Promise<unknown> => (await get(srv.url, '/v2/logging')).json;
    const before = await settings();
    const change = '{"log_verbose_level":3}';
    const smuggled = Buffer.concat([
      head(['POST /v2/logging HTTP/1.1', 'Host: x', 'Connection: close', `Content-Length: ${change.length}`]),
      Buffer.from(change),
    ]);
    const body = Buffer.concat([chunkEncode(Buffer.from('{}'), 2), smuggled]);
    const { raw, closed } = await exchange([
      Buffer.concat([
        head([
          'POST /v2/repository/index HTTP/1.1',
          'Host: x',
          `Content-Length: ${body.byteLength}`,
          'Transfer-Encoding: chunked',
        ]),
        body,
      ]),
    ]);
    expect(firstResponse(raw).status).toBe(200);
    expect(raw.toString('latin1').match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(closed).toBe(true);
    expect(await settings()).toEqual(before);
    // The same change as a request of its own does change the settings.
    expect((await exchange([smuggled])).raw.toString('latin1')).toMatch(/^HTTP\/1\.1 200/);
    expect(await settings()).not.toEqual(before);
  });
});

describe('other requests node:http cannot parse keep its answers', () => {
  it.each([
    [
      'an HTTP/1.0 request with both framings',
      'HTTP/1.1 400 Bad Request',
      ['POST /v2/repository/index HTTP/1.0', 'Host: x', 'Content-Length: 7', 'Transfer-Encoding: chunked'],
    ],
    [
      'a transfer coding that is not chunked',
      'HTTP/1.1 400 Bad Request',
      ['POST /v2/repository/index HTTP/1.1', 'Host: x', 'Transfer-Encoding: gzip'],
    ],
    [
      'two different Content-Length values',
      'HTTP/1.1 400 Bad Request',
      ['POST /v2/repository/index HTTP/1.1', 'Host: x', 'Content-Length: 2', 'Content-Length: 3'],
    ],
    [
      'headers over the size limit',
      'HTTP/1.1 431 Request Header Fields Too Large',
      ['GET /v2/health/live HTTP/1.1', 'Host: x', `X-Big: ${'a'.repeat(20_000)}`],
    ],
  ])('%s: %s, connection closed', async (_, statusLine, lines) => {
    const { raw, closed } = await exchange([
      Buffer.concat([head(lines), Buffer.from('2\r\n{}\r\n0\r\n\r\n')]),
    ]);
    expect(raw.toString('latin1').split('\r\n')[0]).toBe(statusLine);
    expect(closed).toBe(true);
  });
});
