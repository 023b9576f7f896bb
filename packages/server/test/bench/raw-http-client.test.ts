/**
 * The bench's raw-socket load generator client (bench/raw-http-client.ts) against the real embedded
 * server and against a plain node:http server for replies the embedded server does not make
 * (split writes, `Connection: close`, no `Content-Length`).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { RawHttpConnection, encodeInferPost } from '../../bench/raw-http-client.js';
import { buildTensorsInferBody } from '../../bench/load.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let srv: TestServer;
let plain: http.Server;
let plainPort: number;
beforeAll(async () => {
  srv = await startTestServer({ only: ['simple'] });
  plain = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/split') {
        // The reply's body arrives in three writes, the header in its own.
        res.writeHead(200, { 'Content-Length': '12' });
        res.write('abcd');
        setTimeout(() => res.write('efgh'), 10);
        setTimeout(() => res.end('ijkl'), 20);
      } else if (req.url === '/close') {
        res.writeHead(503, { 'Content-Length': '2', Connection: 'close' });
        res.end('no');
      } else {
        res.writeHead(200, { 'Transfer-Encoding': 'chunked' });
        res.end('chunked');
      }
    });
  });
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  plainPort = (plain.address() as AddressInfo).port;
});
afterAll(async () => {
  await srv.close();
  await new Promise((resolve) => plain.close(resolve));
});

const post = (path: string): readonly Buffer[] => encodeInferPost(plainPort, path, Buffer.from('x'), 1);

describe('bench raw HTTP client', () => {
  it('runs binary infer requests on one keep-alive connection against the real server', async () => {
    const { port } = new URL(srv.url);
    const data = (values: number[]): Uint8Array => new Uint8Array(Int32Array.from(values).buffer);
    const body = buildTensorsInferBody(
      [
        {
          name: 'INPUT0',
          datatype: 'INT32',
          shape: [1, 16],
          data: data(Array.from({ length: 16 }, (_, i) => i)),
        },
        {
          name: 'INPUT1',
          datatype: 'INT32',
          shape: [1, 16],
          data: data(Array.from({ length: 16 }, () => 1)),
        },
      ],
      ['OUTPUT0'],
    );
    const parts = encodeInferPost(Number(port), '/v2/models/simple/infer', body.body, body.headerLength);
    const connection = new RawHttpConnection(Number(port));
    try {
      for (let i = 0; i < 20; i++) {
        const reply = await connection.request(parts);
        expect(reply.status).toBe(200);
        // JSON header plus 16 INT32 values.
        expect(reply.bodyBytes).toBeGreaterThan(64);
      }
      const missing = encodeInferPost(Number(port), '/v2/models/nope/infer', body.body, body.headerLength);
      expect((await connection.request(missing)).status).toBe(400);
    } finally {
      connection.close();
    }
  });

  it('frames a body that arrives in several pieces, and reopens a connection the server closed', async () => {
    const connection = new RawHttpConnection(plainPort);
    try {
      expect(await connection.request(post('/split'))).toEqual({ status: 200, bodyBytes: 12 });
      expect(await connection.request(post('/close'))).toEqual({ status: 503, bodyBytes: 2 });
      expect(await connection.request(post('/split'))).toEqual({ status: 200, bodyBytes: 12 });
    } finally {
      connection.close();
    }
  });

  it('fails a request whose reply has no Content-Length, and refuses a second request in flight', async () => {
    const connection = new RawHttpConnection(plainPort);
    try {
      await expect(connection.request(post('/chunked'))).rejects.toThrow(/without Content-Length/);
      const first = connection.request(post('/split'));
      await expect(connection.request(post('/split'))).rejects.toThrow(/one request at a time/);
      expect((await first).status).toBe(200);
    } finally {
      connection.close();
    }
  });
});
