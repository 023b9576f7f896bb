/**
 * The gRPC stream API on decoupled models, against the real embedded server and its Python backend
 * (`/usr/bin/python3`): N responses per request with `final`, `enableEmptyFinalResponse`,
 * `inferAll` (every response of one request until final), the async iterable, the Python-style
 * startStream / asyncStreamInfer / stopStream, and cancellation of a stream mid-request.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TritonAbortError, TritonServerError } from '../../src/errors.js';
import { createGrpcClient, type GrpcTransport, type StreamResponse } from '../../src/grpc/index.js';
import type { TritonClient } from '../../src/client.js';
import type { InferInput } from '@tritonserver-ts/protocol';

// Loaded by name so the client package does not depend on the server (the server depends on it).
const serverModule = '@tritonserver-ts/server';
const testingModule = '@tritonserver-ts/server/testing';

let repo: string;
let server: { readonly grpcUrl: string; close(): Promise<void> };
let client: TritonClient & { readonly transport: GrpcTransport };

beforeAll(async () => {
  const { startServer } = (await import(serverModule)) as {
    startServer: (options: Record<string, unknown>) => Promise<typeof server>;
  };
  const { decoupledPythonModel, writePythonModels } = (await import(testingModule)) as {
    decoupledPythonModel: (name?: string, options?: { responseDelaySeconds?: number }) => unknown;
    writePythonModels: (repository: string, models: readonly unknown[]) => Promise<void>;
  };
  repo = await mkdtemp(join(tmpdir(), 'client-decoupled-'));
  // `py_slow`: IN = n → n responses OUT = i, one every 100 ms, then the final flag.
  await writePythonModels(repo, [
    decoupledPythonModel(),
    decoupledPythonModel('py_slow', { responseDelaySeconds: 0.1 }),
  ]);
  server = await startServer({
    modelRepositories: [repo],
    httpPort: 0,
    grpcPort: 0,
    python: { interpreter: '/usr/bin/python3' },
    logSink: () => undefined,
  });
  client = createGrpcClient({ url: server.grpcUrl });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await server?.close();
  if (repo !== undefined) await rm(repo, { recursive: true, force: true });
});

const n = (value: number): InferInput[] => [
  { name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.of(value) },
];
const outs = (responses: readonly StreamResponse[]): (number | undefined)[] =>
  responses.map((r) => (r.empty ? undefined : r.result?.asTypedArray('OUT', 'INT32')[0]));

describe('decoupled models over the gRPC stream API', () => {
  it('inferAll: n = 3 gives three responses and the empty final one, flagged', async () => {
    const stream = client.transport.openStream();
    const responses = await stream.inferAll('py_decoupled', n(3), { requestId: 'three' });
    stream.end();
    expect(responses.map((r) => [r.id, r.final, r.empty])).toEqual([
      ['three', false, false],
      ['three', false, false],
      ['three', false, false],
      ['three', true, true],
    ]);
    expect(outs(responses)).toEqual([0, 1, 2, undefined]);
    // The raw parameter, as the Python client's get_response().parameters["triton_final_response"].
    expect(responses[0]?.result?.parameters.triton_final_response).toBe(false);
    expect(responses[3]?.result?.parameters.triton_final_response).toBe(true);
    expect(responses[3]?.result?.modelName).toBe('py_decoupled');
  });

  it('inferAll: n = 0 is the final flag alone; n = -1 the model’s error, final', async () => {
    const stream = client.transport.openStream();
    const [zero, negative] = await Promise.all([
      stream.inferAll('py_decoupled', n(0)),
      stream.inferAll('py_decoupled', n(-1)),
    ]);
    stream.end();
    expect(zero?.map((r) => [r.final, r.empty, r.error])).toEqual([[true, true, undefined]]);
    expect(negative).toHaveLength(1);
    expect(negative?.[0]?.final).toBe(true);
    expect(negative?.[0]?.error).toBeInstanceOf(TritonServerError);
    expect(negative?.[0]?.error?.message).toBe('n must be >= 0');
  });

  it('the async iterable: responses of two requests, empty final response on request only', async () => {
    const responses: StreamResponse[] = [];
    for await (const r of client.transport.streamInfer([
      { modelName: 'py_slow', inputs: n(2), options: { requestId: 'a', enableEmptyFinalResponse: true } },
      { modelName: 'py_slow', inputs: n(2), options: { requestId: 'b' } },
    ])) {
      responses.push(r);
    }
    const of = (id: string) => responses.filter((r) => r.id === id);
    expect(of('a').map((r) => r.final)).toEqual([false, false, true]);
    expect(outs(of('a'))).toEqual([0, 1, undefined]);
    // Without enableEmptyFinalResponse the end of b is only seen when the stream ends.
    expect(of('b').map((r) => r.final)).toEqual([false, false]);
    expect(outs(of('b'))).toEqual([0, 1]);
    // The two requests ran side by side: b's first response came before a's last.
    expect(responses.findIndex((r) => r.id === 'b')).toBeLessThan(
      responses.map((r) => r.id).lastIndexOf('a'),
    );
  });

  it('startStream / asyncStreamInfer / stopStream: every response reaches the callback', async () => {
    const seen: [string, number | undefined, boolean][] = [];
    client.transport.startStream((result, error, response) => {
      expect(error).toBeUndefined();
      seen.push([
        response?.id ?? '',
        response?.empty === true ? undefined : result?.asTypedArray('OUT', 'INT32')[0],
        response?.final ?? false,
      ]);
    });
    client.transport.asyncStreamInfer('py_decoupled', n(2), {
      requestId: 'p',
      enableEmptyFinalResponse: true,
    });
    await client.transport.stopStream();
    expect(seen).toEqual([
      ['p', 0, false],
      ['p', 1, false],
      ['p', undefined, true],
    ]);
  });

  it('cancelling the stream mid-request rejects inferAll with TritonAbortError; nothing more arrives', async () => {
    const controller = new AbortController();
    const stream = client.transport.openStream({ signal: controller.signal });
    // 30 responses, one every 100 ms: 3 s in all. The abort must end inferAll well before that.
    const pending = stream.inferAll('py_slow', n(30), { requestId: 'long' });
    let abortedAt = 0;
    setTimeout(() => {
      abortedAt = Date.now();
      controller.abort();
    }, 250);
    await expect(pending).rejects.toBeInstanceOf(TritonAbortError);
    expect(abortedAt).toBeGreaterThan(0);
    // Promptly, not after the remaining 2.75 s (a generous bound for a loaded machine).
    expect(Date.now() - abortedAt).toBeLessThan(2_000);
    await expect(stream.next()).rejects.toBeInstanceOf(TritonAbortError);
    // The server serves a new stream at once.
    const again = client.transport.openStream();
    const responses = await again.inferAll('py_decoupled', n(1));
    again.end();
    expect(outs(responses)).toEqual([0, undefined]);
  });

  it('the README example (examples/decoupled-stream.ts) runs as shown', async () => {
    const example = fileURLToPath(new URL('../../examples/decoupled-stream.ts', import.meta.url));
    const out = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', example, server.grpcUrl, 'py_decoupled'],
        { cwd: fileURLToPath(new URL('../..', import.meta.url)), timeout: 30_000 },
        (error, stdout, stderr) =>
          error === null ? resolve(stdout) : reject(new Error(`${error.message}\n${stderr}`)),
      );
    });
    expect(out.trim().split('\n')).toEqual([
      'three 0 final false',
      'three 1 final false',
      'three 2 final false',
      'three (empty) final true',
      'negative error n must be >= 0 final true',
    ]);
  });
});
