/**
 * Calls that end early: a deadline shorter than the inference, a cancelled stream, a client that
 * disconnects with a stream open. The server stays live, nothing stays counted in flight (the
 * shutdown finishes at once), and with `--log-verbose=1` every call leaves one log line.
 */
import { connect } from 'node:http2';

import {
  ModelInferRequestSchema,
  encodeMessage,
  type ServerLiveResponse,
} from '@tritonserver-ts/protocol/grpc';
import { Metadata } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { TestServer } from '../helpers/server.js';
import { GrpcStatus, GrpcTestClient, grpcError, startGrpcTestServer } from './helpers.js';

let server: TestServer & { grpcTarget: string };

const slow = {
  modelName: 'slow_identity',
  inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n, 2n], contents: { fp32Contents: [1, 2] } }],
};

beforeAll(async () => {
  server = await startGrpcTestServer({
    only: ['slow_identity'],
    log: { log_verbose_level: 1 },
    exitTimeoutSecs: 10,
  });
});

afterAll(async () => {
  await server.close();
});

describe('calls that end early', () => {
  it('a deadline shorter than the inference: DEADLINE_EXCEEDED for the client, the server stays live', async () => {
    const client = new GrpcTestClient(server.grpcTarget);
    const fn = client.inference.ModelInfer as (...args: unknown[]) => unknown;
    const e = await new Promise<{ code?: number }>((resolve) => {
      fn.call(
        client.inference,
        slow,
        new Metadata(),
        { deadline: Date.now() + 5 },
        (error: { code?: number }) => resolve(error),
      );
    });
    expect(e.code).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    expect((await client.call<ServerLiveResponse>('ServerLive', {})).live).toBe(true);
    client.close();
  });

  it('a cancelled stream and a client gone with its stream open leave nothing in flight', async () => {
    const a = new GrpcTestClient(server.grpcTarget);
    const cancelled = a.stream();
    cancelled.on('data', () => undefined);
    const status = new Promise<number | undefined>((resolve) =>
      cancelled.on('error', (err: { code?: number }) => resolve(err.code)),
    );
    for (let i = 0; i < 4; i++) cancelled.write({ ...slow, id: String(i) });
    cancelled.cancel();
    expect(await status).toBe(GrpcStatus.CANCELLED);

    // An abrupt disconnect: a raw HTTP/2 connection with a stream open (one answer read, a second
    // request in flight) is destroyed. (grpc-js's Client.close() would let open calls run on.)
    const session = connect(`http://${server.grpcTarget}`);
    const raw = session.request({
      ':method': 'POST',
      ':path': '/inference.GRPCInferenceService/ModelStreamInfer',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    const frame = (id: string): Buffer => {
      const body = Buffer.from(encodeMessage(ModelInferRequestSchema, { ...slow, id }));
      const head = Buffer.alloc(5);
      head.writeUInt32BE(body.byteLength, 1);
      return Buffer.concat([head, body]);
    };
    const firstAnswer = new Promise<void>((resolve) => raw.once('data', () => resolve()));
    raw.on('error', () => undefined);
    session.on('error', () => undefined);
    raw.write(frame('x'));
    await firstAnswer;
    raw.write(frame('y'));
    session.destroy();
    a.close();

    const c = new GrpcTestClient(server.grpcTarget);
    expect((await c.call<ServerLiveResponse>('ServerLive', {})).live).toBe(true);
    const e = await grpcError(c.call('ModelInfer', { modelName: 'nope' }));
    expect(e.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    c.close();
  });

  it('logs one line per call with --log-verbose=1', () => {
    const lines = server.logs.filter((l) => l.includes('"grpc":'));
    expect(lines.some((l) => l.includes('"grpc":"ServerLive","status":"OK"'))).toBe(true);
    expect(lines.some((l) => l.includes('"grpc":"ModelInfer","status":"INVALID_ARG"'))).toBe(true);
  });

  it('afterwards the shutdown has nothing to wait for', async () => {
    // Give the server a moment to see the abandoned stream's connection go.
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    expect(await server.running.close()).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
