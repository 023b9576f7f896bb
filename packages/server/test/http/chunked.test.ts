/** Triton's limit on the number of non-empty chunks in one chunked request body. */
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
});
