/** Triton's limit on the number of non-empty chunks in one chunked request body. */
import { connect } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { decodeInferResponse } from '@tritonserver-ts/protocol/http';

import { startTestServer, type TestServer } from '../helpers/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ only: ['simple', 'identity_fp32'] });
});
afterAll(async () => {
  await srv.close();
});

/** Sends `{` + `count` one-byte chunks + `}` as a chunked body; resolves with the raw reply. */
function chunkedIndexRequest(count: number): Promise<{ reply: string; closed: boolean }> {
  const { port } = new URL(srv.url);
  const parts = ['1\r\n{\r\n'];
  for (let i = 0; i < count; i++) parts.push('1\r\n \r\n');
  parts.push('1\r\n}\r\n0\r\n\r\n');
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write('POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
      socket.write(parts.join(''));
    });
    let reply = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ reply, closed: false });
    }, 10_000);
    socket.on('data', (d: Buffer) => {
      reply += d.toString('latin1');
      // A complete answer (the index is a JSON array, an error a JSON object): done.
      if (/\r\n\r\n[[{].*[\]}]$/s.test(reply)) setTimeout(() => socket.destroy(), 100);
    });
    socket.on('error', () => undefined);
    socket.on('close', (hadError) => {
      clearTimeout(timer);
      resolve({ reply, closed: !hadError });
    });
  });
}

describe('chunked request bodies', () => {
  it('accept a few thousand chunks', async () => {
    const { reply } = await chunkedIndexRequest(5000);
    expect(reply).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('refuse more than 65,536 non-empty chunks with Triton’s message and close the connection', async () => {
    const { reply } = await chunkedIndexRequest(70_000);
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect(reply).toContain(
      'Chunked request body exceeds maximum of 65536 non-empty chunks. Send fewer or larger HTTP chunks.',
    );
    expect(reply.toLowerCase()).toContain('connection: close');
    expect((await fetch(`${srv.url}/v2/health/live`)).status).toBe(200);
  });

  it('keep every byte of chunks of any size (small ones are copied into blocks, large ones kept)', async () => {
    // 300,000 FP32 values (1.2 MB) in chunks of 1 byte to 100 KiB, crossing the 64 KiB blocks.
    const input = Float32Array.from({ length: 300_000 }, (_, i) => i * 0.5 - 7);
    const bytes = Buffer.from(input.buffer);
    const sizes = [1, 3, 65_535, 7, 65_536, 1, 100_000, 40_000, 65_537, 2, 30_001];
    const parts: Buffer[] = [];
    for (let at = 0, k = 0; at < bytes.byteLength; k++) {
      const piece = bytes.subarray(at, at + (sizes[k % sizes.length] as number));
      parts.push(Buffer.from(`${piece.byteLength.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
      at += piece.byteLength;
    }
    parts.push(Buffer.from('0\r\n\r\n'));
    const { port } = new URL(srv.url);
    const raw = await new Promise<Buffer>((resolve) => {
      const received: Buffer[] = [];
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          'POST /v2/models/identity_fp32/infer HTTP/1.1\r\nHost: x\r\nInference-Header-Content-Length: 0\r\n' +
            'Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n',
        );
        for (const p of parts) socket.write(p);
      });
      socket.on('data', (d: Buffer) => received.push(d));
      socket.on('close', () => resolve(Buffer.concat(received)));
    });
    const end = raw.indexOf('\r\n\r\n');
    const head = raw.toString('latin1', 0, end);
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    const headerLength = /inference-header-content-length: (\d+)/i.exec(head)?.[1];
    const decoded = decodeInferResponse(new Uint8Array(raw.subarray(end + 4)), headerLength);
    expect(decoded.outputs[0]?.shape).toEqual([1, input.length]);
    const out = decoded.outputs[0]?.data as Float32Array;
    expect(Buffer.from(out.buffer, out.byteOffset, out.byteLength).equals(bytes)).toBe(true);
  });
});
