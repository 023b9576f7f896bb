/**
 * A server that answers with a `grpc-message` over 64 KiB (Triton echoes a model name of any
 * length; so did the embedded server before issue 23). What Node's HTTP/2 does with that header field
 * depends on the Node version, and both are tested (`NODE_RESETS`, found by asking node:http2 itself):
 * - Node 20: an HPACK error ends the connection without a word, and grpc-js waits forever on that call
 *   and on every later call of the channel. The transport's stall watch notices (a probe on a quiet
 *   channel goes unanswered), fails the call with a typed error and moves to a new connection.
 * - Node 22 and 24: the stream is reset as a protocol error and the connection closed at once; the
 *   client maps grpc-js's "Received RST_STREAM … Protocol error" to the same typed error.
 *
 * FAKE SERVER: an in-process `node:http2` server, used ONLY because the real servers of this project
 * no longer send such a trailer (the embedded server caps its messages); everything else is tested
 * against the real embedded server.
 */
import { once } from 'node:events';
import { connect, createServer, type Http2Server, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TritonProtocolError } from '../../src/errors.js';
import { createGrpcClient } from '../../src/grpc/index.js';
import { serviceDefinition } from '@tritonserver-ts/protocol/grpc';

const HUGE = 'x'.repeat(90_000);

/** A gRPC message: the 5-byte prefix and the bytes. */
function frame(message: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.byteLength, 1);
  return Buffer.concat([head, message]);
}

function answer(stream: ServerHttp2Stream, message: Buffer): void {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(frame(message));
}

let fake: Http2Server;
let url: string;
/** Connections the fake accepted, and the `ServerLive` calls it answered. */
let connections = 0;
let lives = 0;
/** Whether this Node's HTTP/2 resets the stream (22+) rather than dropping the connection silently (20). */
let NODE_RESETS = false;

/** Asks node:http2 directly what it does with the fake's huge trailer: a stream error, or silence. */
async function nodeResetsHugeTrailer(): Promise<boolean> {
  const session = connect(`http://${url}`);
  session.on('error', () => undefined);
  try {
    const request = session.request({ ':path': '/probe/Huge', 'content-type': 'application/grpc' });
    request.end();
    return await new Promise<boolean>((resolve) => {
      request.on('error', () => resolve(true));
      request.on('response', () => resolve(false));
      setTimeout(() => resolve(false), 2000);
    });
  } finally {
    session.destroy();
  }
}

beforeAll(async () => {
  // Node refuses to send a header block over 64 KiB unless told otherwise; Triton's gRPC C++ sends it.
  fake = createServer({ maxSendHeaderBlockLength: 1 << 20 });
  fake.on('connection', () => connections++);
  fake.on('sessionError', () => undefined); // the client's GOAWAY (COMPRESSION_ERROR)
  fake.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    stream.resume();
    const path = String(headers[':path']);
    const method = path.slice(path.lastIndexOf('/') + 1);
    if (method === 'ServerLive') {
      lives++;
      answer(stream, Buffer.from(serviceDefinition.ServerLive.responseSerialize({ live: true })));
    } else if (method === 'ModelReady') {
      // Healthy but slow: answers after 1.5 s.
      const timer = setTimeout(
        () => answer(stream, Buffer.from(serviceDefinition.ModelReady.responseSerialize({ ready: true }))),
        1500,
      );
      stream.on('close', () => clearTimeout(timer));
    } else {
      // Trailers-only, as a gRPC server answers an error: an 87 KiB header block.
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '3', 'grpc-message': HUGE },
        { endStream: true },
      );
    }
  });
  fake.listen(0, '127.0.0.1');
  await once(fake, 'listening');
  url = `127.0.0.1:${(fake.address() as AddressInfo).port}`;
  NODE_RESETS = await nodeResetsHugeTrailer();
});

afterAll(async () => {
  await new Promise((resolve) => fake.close(resolve));
});

describe('a grpc-message over 64 KiB (fake server)', () => {
  it('fails the call with TritonProtocolError (default probe), and the next call on the client works', async () => {
    const before = connections;
    const client = createGrpcClient({ url, maxRetries: 0, timeoutMs: 0 });
    try {
      expect(await client.isServerLive()).toBe(true);
      expect(connections).toBe(before + 1);
      const started = performance.now();
      const error = await client.getModelMetadata('m').catch((e: unknown) => e);
      const ms = performance.now() - started;
      expect(error).toBeInstanceOf(TritonProtocolError);
      if (NODE_RESETS) {
        expect((error as Error).message).toMatch(
          /^ModelMetadata on 127\.0\.0\.1:\d+: the server's HTTP\/2 response broke the protocol .*Received RST_STREAM/,
        );
        expect(ms).toBeLessThan(2000);
      } else {
        expect((error as Error).message).toMatch(
          /^ModelMetadata on 127\.0\.0\.1:\d+: no answer, and the connection did not answer a probe within 8000 ms/,
        );
        // Default probe: after 2 s of quiet, 8 s for the answer.
        expect(ms).toBeGreaterThan(9900);
        expect(ms).toBeLessThan(16_000);
      }
      // The same client goes on, over a new connection.
      expect(await client.isServerLive()).toBe(true);
      expect(connections).toBe(before + 2);
    } finally {
      await client.close();
    }
  }, 30_000);

  it('with a short probe the failure comes sooner; calls started after the loss fail the same way', async () => {
    const client = createGrpcClient({
      url,
      maxRetries: 0,
      timeoutMs: 0,
      stallProbe: { afterMs: 200, timeoutMs: 300 },
    });
    try {
      expect(await client.isServerLive()).toBe(true);
      const first = client.getModelMetadata('m').catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 100));
      const later = client.isServerReady().catch((e: unknown) => e);
      const started = performance.now();
      expect(await first).toBeInstanceOf(TritonProtocolError);
      expect(await later).toBeInstanceOf(TritonProtocolError);
      expect(performance.now() - started).toBeLessThan(2000);
      expect(await client.isServerLive()).toBe(true);
      // It happens again, and is survived again.
      await expect(client.getModelMetadata('m')).rejects.toBeInstanceOf(TritonProtocolError);
      expect(await client.isServerLive()).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('a slow call on a healthy connection is probed, answered, and left to finish', async () => {
    const client = createGrpcClient({ url, maxRetries: 0, stallProbe: { afterMs: 200, timeoutMs: 1000 } });
    try {
      const before = { lives, connections };
      expect(await client.isModelReady('slow')).toBe(true);
      // Probed (the call was quiet for 1.5 s) and kept: no new connection.
      expect(lives - before.lives).toBeGreaterThanOrEqual(2);
      expect(connections - before.connections).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('without the probe (stallProbe: false) the call never ends on Node 20 (grpc-js does not see the dead connection); on 22+ it fails at once', async () => {
    const client = createGrpcClient({ url, maxRetries: 0, timeoutMs: 0, stallProbe: false });
    try {
      expect(await client.isServerLive()).toBe(true);
      const settled = await Promise.race([
        client.getModelMetadata('m').then(
          () => 'answered',
          (e: unknown) =>
            e instanceof TritonProtocolError ? 'failed: protocol error' : `failed: ${String(e)}`,
        ),
        new Promise((r) => setTimeout(() => r('still waiting'), 3000)),
      ]);
      expect(settled).toBe(NODE_RESETS ? 'failed: protocol error' : 'still waiting');
    } finally {
      await client.close();
    }
  });
});
