/**
 * Large HTTP infer bodies sent as parts (issue 11): the JSON header and views on the input data,
 * with an explicit content-length, instead of one joined copy. Round trips against the real
 * embedded server (an FP32 identity model) below, at and over the threshold, 1 MB, and compressed.
 * What goes on the wire (content-length, no chunking, the body bytes, a retry re-sending the whole
 * body) is checked on the in-process recording server, since a real server does not echo requests.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TritonClient } from '../src/client.js';
import { PARTS_MIN_TAIL_BYTES } from '../src/http/http-transport.js';
import { encodeInferRequest } from '@tritonserver-ts/protocol/http';
import { type InferInput } from '@tritonserver-ts/protocol';
import { reply, reset, startFaultServer, type FaultHandler } from './fault-server.js';

// Loaded by name so the client package does not depend on the server (the server depends on it).
const serverModule = '@tritonserver-ts/server';

interface RunningServer {
  readonly url: string;
  close(): Promise<void>;
}

/** An FP32 identity model without delay (the testing set has none in FP32 of any length). */
const FAST_IDENTITY = `name: "fast_identity"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`;

let repo: string;
let server: RunningServer;
let client: TritonClient;

beforeAll(async () => {
  const { startServer } = (await import(serverModule)) as {
    startServer: (options: Record<string, unknown>) => Promise<RunningServer>;
  };
  repo = await mkdtemp(join(tmpdir(), 'client-parts-'));
  await mkdir(join(repo, 'fast_identity', '1'), { recursive: true });
  await writeFile(join(repo, 'fast_identity', 'config.pbtxt'), FAST_IDENTITY);
  server = await startServer({
    modelRepositories: [repo],
    modelControlMode: 'explicit',
    loadModels: ['fast_identity'],
    httpPort: 0,
    grpcPort: 0,
    logSink: () => undefined,
  });
  client = new TritonClient({ url: server.url });
});

afterAll(async () => {
  await client?.close();
  await server?.close();
  if (repo !== undefined) await rm(repo, { recursive: true, force: true });
});

/** Distinct values, so a misplaced or missing byte shows. */
function image(elements: number, seed = 1): Float32Array {
  return Float32Array.from({ length: elements }, (_, i) => Math.sin(i * 0.37 + seed) * 1000 + i);
}

function inputOf(data: Float32Array): InferInput[] {
  return [{ name: 'INPUT0', datatype: 'FP32', shape: [1, data.length], data }];
}

function sameBytes(a: Float32Array, b: Float32Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  );
}

describe('large binary inputs over HTTP, against the embedded server', () => {
  it('returns a 1 MB FP32 tensor byte for byte (sent as parts)', async () => {
    const data = image(256 * 1024);
    const copy = data.slice();
    const result = await client.infer('fast_identity', inputOf(data));
    const out = result.asTypedArray('OUTPUT0', 'FP32');
    expect(out.length).toBe(data.length);
    expect(sameBytes(out, copy)).toBe(true);
    expect(result.output('OUTPUT0').shape).toEqual([1, data.length]);
  });

  it('works just under, at and just over the threshold, and for many requests in flight', async () => {
    const sizes = [PARTS_MIN_TAIL_BYTES / 4 - 1, PARTS_MIN_TAIL_BYTES / 4, PARTS_MIN_TAIL_BYTES / 4 + 1];
    for (const elements of sizes) {
      const data = image(elements, elements);
      const out = (await client.infer('fast_identity', inputOf(data))).asTypedArray('OUTPUT0', 'FP32');
      expect(sameBytes(out, data)).toBe(true);
    }
    // Concurrent large requests on several pooled connections do not mix their parts.
    const many = Array.from({ length: 8 }, (_, i) => image(100_000 + i * 1000, i));
    const results = await Promise.all(many.map((d) => client.infer('fast_identity', inputOf(d))));
    results.forEach((r, i) =>
      expect(sameBytes(r.asTypedArray('OUTPUT0', 'FP32'), many[i] as Float32Array)).toBe(true),
    );
  });

  it.each(['gzip', 'deflate'] as const)(
    'still compresses a large request with %s (one buffer)',
    async (algorithm) => {
      const data = image(200_000);
      const out = (
        await client.infer('fast_identity', inputOf(data), { requestCompression: algorithm })
      ).asTypedArray('OUTPUT0', 'FP32');
      expect(sameBytes(out, data)).toBe(true);
    },
  );
});

describe('what a parts body puts on the wire (recording server)', () => {
  const okResponse: FaultHandler = reply(
    200,
    '{"model_name":"fast_identity","model_version":"1","outputs":[]}',
    { 'content-type': 'application/json' },
  );

  it('sends content-length and no transfer-encoding, with the bytes of the joined body', async () => {
    const recorder = await startFaultServer(okResponse);
    const c = new TritonClient({ url: recorder.url, maxRetries: 0 });
    try {
      const inputs = inputOf(image(300_000));
      await c.infer('fast_identity', inputs);
      const expected = encodeInferRequest(inputs);
      const seen = recorder.requests[0];
      expect(seen?.headers['content-length']).toBe(String(expected.body.byteLength));
      expect(seen?.headers['transfer-encoding']).toBeUndefined();
      expect(seen?.headers['inference-header-content-length']).toBe(String(expected.headerLength));
      expect(seen?.body.equals(Buffer.from(expected.body))).toBe(true);
    } finally {
      await c.close();
      await recorder.close();
    }
  });

  it('re-sends the whole body when a retried infer is retried after a dropped connection', async () => {
    const recorder = await startFaultServer(reset, okResponse);
    const c = new TritonClient({ url: recorder.url, maxRetries: 2, retryDelayMs: 1, maxRetryDelayMs: 2 });
    try {
      const inputs = inputOf(image(300_000, 3));
      await c.infer('fast_identity', inputs, { retry: true });
      const expected = Buffer.from(encodeInferRequest(inputs).body);
      expect(recorder.requests).toHaveLength(2);
      for (const seen of recorder.requests) {
        expect(seen.headers['content-length']).toBe(String(expected.byteLength));
        expect(seen.body.equals(expected)).toBe(true);
      }
    } finally {
      await c.close();
      await recorder.close();
    }
  });
});
