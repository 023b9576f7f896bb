/**
 * Issue 23, item 4: error messages echo what the client sent (model names, request ids, input
 * names). A 100 KB one used to come back in full; over gRPC its 87 KB `grpc-message` trailer is an
 * HPACK error for grpc-js (one header field over 64 KiB), which silently kills the connection: the
 * call and every later call on the channel hung. Now each echoed string keeps its first 256
 * characters (`core/echo.ts`) and every message is capped at 4096 UTF-8 bytes at both edges. The server
 * runs in its own process (`test/helpers/memory-server.ts`) so a wedged connection cannot take the
 * test runner with it; every gRPC call has a deadline, so a regression fails instead of hanging.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { TritonClient, TritonServerError } from '@tritonserver-ts/client';
import { createGrpcClient } from '@tritonserver-ts/client/grpc';
import type { ModelStreamInferResponse } from '@tritonserver-ts/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ECHO_MAX_CHARACTERS, ERROR_MESSAGE_MAX_BYTES } from '../../src/common/echo.js';
import { GrpcTestClient, SIMPLE_A, SIMPLE_B, int32Bytes } from '../grpc/helpers.js';
import type { MemoryServerOptions } from '../helpers/memory-server.js';

const fixture = fileURLToPath(new URL('../helpers/memory-server.ts', import.meta.url));
const LONG = 100_000;
/** What a 100,000-character string becomes in a message. */
const echoed = (c: string): string =>
  `${c.repeat(ECHO_MAX_CHARACTERS)}...[truncated ${LONG - ECHO_MAX_CHARACTERS} characters]`;
const long = (c: string): string => c.repeat(LONG);

let server: ChildProcess;
let port: number;
let grpcPort: number;
let raw: GrpcTestClient;

beforeAll(async () => {
  const options: MemoryServerOptions = { models: ['simple'], http: {}, grpc: {} };
  server = fork(fixture, [JSON.stringify(options)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  ({ port, grpcPort } = await new Promise<{ port: number; grpcPort: number }>((resolve, reject) => {
    server.once('message', (m: { port: number; grpcPort: number }) => resolve(m));
    server.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  }));
  raw = new GrpcTestClient(`127.0.0.1:${grpcPort}`);
}, 60_000);

afterAll(async () => {
  raw?.close();
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.send('close');
  const timer = setTimeout(() => server.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
});

/** A unary call on the raw grpc-js client with a 5 s deadline. */
function call<T>(rpc: string, request: object): Promise<T> {
  const fn = raw.inference[rpc] as (
    r: object,
    m: Metadata,
    o: object,
    cb: (e: ServiceError | null, v: T) => void,
  ) => void;
  return new Promise((resolve, reject) =>
    fn.call(raw.inference, request, new Metadata(), { deadline: Date.now() + 5000 }, (e, v) =>
      e !== null ? reject(e) : resolve(v),
    ),
  );
}

async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (error) {
    return error as ServiceError;
  }
  throw new Error('the call succeeded');
}

function simple(extra: Record<string, unknown> = {}, names: [string, string] = ['INPUT0', 'INPUT1']): object {
  return {
    modelName: 'simple',
    inputs: names.map((name) => ({ name, datatype: 'INT32', shape: [1n, 16n] })),
    rawInputContents: [int32Bytes(SIMPLE_A), int32Bytes(SIMPLE_B)],
    ...extra,
  };
}

/** The next calls on the same channel work: the connection was not wedged. */
async function channelWorks(): Promise<void> {
  const ok = await call<{ outputs: unknown[] }>('ModelInfer', simple());
  expect(ok.outputs).toHaveLength(2);
  expect(await call<{ live: boolean }>('ServerLive', {})).toMatchObject({ live: true });
}

const httpJson = async (path: string, body: unknown): Promise<{ status: number; error: string }> => {
  const r = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', body: JSON.stringify(body) });
  return { status: r.status, error: ((await r.json()) as { error: string }).error };
};
const jsonInputs = (names: [string, string] = ['INPUT0', 'INPUT1']): object[] =>
  names.map((name) => ({ name, datatype: 'INT32', shape: [1, 16], data: SIMPLE_A }));

describe('gRPC (raw grpc-js): a 100 KB client string is echoed truncated, the channel keeps working', () => {
  it('model name: INVALID_ARGUMENT with the name cut to 256 characters', async () => {
    const e = await failure(call('ModelInfer', simple({ modelName: long('m') })));
    expect(e.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(e.details).toBe(`Request for unknown model: '${echoed('m')}' is not found`);
    const meta = await failure(call('ModelMetadata', { name: long('m') }));
    expect(meta.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(meta.details).toBe(`Request for unknown model: '${echoed('m')}' is not found`);
    await channelWorks();
  });

  it('request id and input name: INVALID_ARGUMENT with both cut', async () => {
    const e = await failure(call('ModelInfer', simple({ id: long('r') }, [long('i'), 'INPUT1'])));
    expect(e.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(e.details).toBe(
      `[request id: ${echoed('r')}] unexpected inference input '${echoed('i')}' for model 'simple'`,
    );
    await channelWorks();
  });

  it('a message still too long after the echoes is capped at 4096 bytes', async () => {
    // 40 inputs with 256-character names: the message lists them all.
    const names = Array.from({ length: 40 }, (_, i) => `${i}`.padEnd(256, 'x'));
    const e = await failure(
      call('ModelInfer', {
        modelName: 'simple',
        inputs: names.map((name) => ({ name, datatype: 'INT32', shape: [1n, 16n] })),
        rawInputContents: names.map(() => int32Bytes(SIMPLE_A)),
      }),
    );
    expect(e.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(Buffer.byteLength(e.details)).toBeLessThanOrEqual(ERROR_MESSAGE_MAX_BYTES);
    expect(e.details).toMatch(/^expected 2 inputs but got 40 inputs for model 'simple'/);
    expect(e.details).toMatch(/\.\.\.\[truncated \d+ characters\]$/);
    await channelWorks();
  });

  it('ModelStreamInfer: the in-band error_message is cut the same way and the stream goes on', async () => {
    const { stream, answers, done } = raw.collectingStream();
    stream.write(simple({ modelName: long('m'), id: 'bad' }));
    stream.write(simple({ id: 'good' }));
    stream.end();
    await done;
    const byId = new Map(answers.map((a: ModelStreamInferResponse) => [a.inferResponse?.id, a]));
    expect(byId.get('bad')?.errorMessage).toBe(`Request for unknown model: '${echoed('m')}' is not found`);
    expect(byId.get('good')?.errorMessage).toBe('');
    expect(byId.get('good')?.inferResponse?.rawOutputContents).toHaveLength(2);
    await channelWorks();
  });
});

describe("the project's client over gRPC and HTTP", () => {
  it('gRPC: INVALID_ARG with the name cut, and the client goes on', async () => {
    const client = createGrpcClient({ url: `127.0.0.1:${grpcPort}` });
    try {
      const inputs = [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Int32Array.from(SIMPLE_A) },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Int32Array.from(SIMPLE_B) },
      ] as const;
      const error = await client.infer(long('m'), inputs, { timeoutMs: 5000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TritonServerError);
      expect((error as TritonServerError).reason).toBe('INVALID_ARG');
      expect((error as TritonServerError).message).toBe(
        `Request for unknown model: '${echoed('m')}' is not found`,
      );
      const ok = await client.infer('simple', inputs, { timeoutMs: 5000 });
      expect(Array.from(ok.asTypedArray('OUTPUT0', 'INT32'))).toEqual(
        SIMPLE_A.map((a, i) => a + (SIMPLE_B[i] ?? 0)),
      );
    } finally {
      await client.close();
    }
  });

  it('HTTP: request id and input name cut in the 400 body; a model name as long as the URL allows too', async () => {
    const r = await httpJson('/v2/models/simple/infer', {
      id: long('r'),
      inputs: jsonInputs([long('i'), 'INPUT1']),
    });
    expect(r.status).toBe(400);
    expect(r.error).toBe(
      `[request id: ${echoed('r')}] unexpected inference input '${echoed('i')}' for model 'simple'`,
    );
    // The request line must fit Node's 16 KiB header limit: a 12,000-character name.
    const name = 'm'.repeat(12_000);
    const m = await httpJson(`/v2/models/${name}/infer`, { inputs: jsonInputs() });
    expect(m.status).toBe(400);
    expect(m.error).toBe(
      `Request for unknown model: '${'m'.repeat(256)}...[truncated ${12_000 - 256} characters]' is not found`,
    );
    const client = new TritonClient({ url: `127.0.0.1:${port}` });
    try {
      expect(await client.isServerLive()).toBe(true);
    } finally {
      await client.close();
    }
  });
});
