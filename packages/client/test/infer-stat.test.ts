/**
 * `TritonClient.inferStat()` (Triton's `ClientInferStat`) against the real embedded server over
 * HTTP and gRPC: successful inferences are counted exactly, failed ones not at all; send + receive
 * fit within the total; the server's execution time falls between send and receive; encoding and
 * decoding time lands in send and receive.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TritonClient } from '../src/client.js';
import { TritonInvalidArgumentError, TritonServerError } from '../src/errors.js';
import type { InferStat } from '../src/infer-stat.js';
import { createGrpcClient } from '../src/grpc/index.js';
import type { InferInput } from '@tritonserver-ts/protocol';
import type { Transport } from '../src/transport.js';
import { reply, startFaultServer } from './fault-server.js';

// Loaded by name so the client package does not depend on the server (the server depends on it).
const serverModule = '@tritonserver-ts/server';
const testingModule = '@tritonserver-ts/server/testing';

interface RunningServer {
  readonly url: string;
  readonly grpcUrl: string;
  close(): Promise<void>;
}

/** An identity model without delay, for large payloads (written here: the testing set has none in FP32). */
const FAST_IDENTITY = `name: "fast_identity"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`;

let repo: string;
let server: RunningServer;
let slowDelayMs: number;

beforeAll(async () => {
  const { startServer } = (await import(serverModule)) as {
    startServer: (options: Record<string, unknown>) => Promise<RunningServer>;
  };
  const { writeTestModelRepository, SLOW_IDENTITY_DELAY_MS } = (await import(testingModule)) as {
    writeTestModelRepository: (dir: string, options: { only: readonly string[] }) => Promise<unknown>;
    SLOW_IDENTITY_DELAY_MS: number;
  };
  slowDelayMs = SLOW_IDENTITY_DELAY_MS;
  repo = await mkdtemp(join(tmpdir(), 'client-inferstat-'));
  await writeTestModelRepository(repo, { only: ['simple', 'slow_identity'] });
  await mkdir(join(repo, 'fast_identity', '1'), { recursive: true });
  await writeFile(join(repo, 'fast_identity', 'config.pbtxt'), FAST_IDENTITY);
  server = await startServer({
    modelRepositories: [repo],
    modelControlMode: 'explicit',
    loadModels: ['simple', 'slow_identity', 'fast_identity'],
    httpPort: 0,
    grpcPort: 0,
    logSink: () => undefined,
  });
});

afterAll(async () => {
  await server?.close();
  if (repo !== undefined) await rm(repo, { recursive: true, force: true });
});

function simpleInputs(): InferInput[] {
  const data = Int32Array.from({ length: 16 }, (_, i) => i);
  return [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data },
  ];
}

function fp32(elements: number): InferInput[] {
  const data = new Float32Array(elements).fill(0.5);
  return [{ name: 'INPUT0', datatype: 'FP32', shape: [1, elements], data }];
}

interface Delta {
  readonly count: number;
  readonly total: bigint;
  readonly send: bigint;
  readonly receive: bigint;
}

function delta(before: InferStat, after: InferStat): Delta {
  return {
    count: after.completedRequestCount - before.completedRequestCount,
    total: after.cumulativeTotalRequestTimeNs - before.cumulativeTotalRequestTimeNs,
    send: after.cumulativeSendTimeNs - before.cumulativeSendTimeNs,
    receive: after.cumulativeReceiveTimeNs - before.cumulativeReceiveTimeNs,
  };
}

const MS = 1_000_000n;

const transports = [
  ['HTTP', () => new TritonClient({ url: server.url })],
  ['gRPC', () => createGrpcClient({ url: server.grpcUrl })],
] as const;

describe.each(transports)('inferStat over %s', (_name, makeClient) => {
  it('starts at zero and counts exactly the successful inferences, with send + receive within total', async () => {
    const client = makeClient();
    try {
      expect(client.inferStat()).toEqual({
        completedRequestCount: 0,
        cumulativeTotalRequestTimeNs: 0n,
        cumulativeSendTimeNs: 0n,
        cumulativeReceiveTimeNs: 0n,
      });
      // Wall time measured around each call: the client's total cannot exceed it.
      let outside = 0n;
      const n = 6;
      for (let i = 0; i < n; i++) {
        const t0 = process.hrtime.bigint();
        const result = await client.infer('simple', simpleInputs());
        outside += process.hrtime.bigint() - t0;
        expect(result.asTypedArray('OUTPUT0', 'INT32')[3]).toBe(6);
      }
      const d = delta(
        {
          completedRequestCount: 0,
          cumulativeTotalRequestTimeNs: 0n,
          cumulativeSendTimeNs: 0n,
          cumulativeReceiveTimeNs: 0n,
        },
        client.inferStat(),
      );
      expect(d.count).toBe(n);
      expect(d.send).toBeGreaterThan(0n);
      expect(d.receive).toBeGreaterThan(0n);
      expect(d.send + d.receive).toBeLessThanOrEqual(d.total);
      expect(d.total).toBeLessThanOrEqual(outside);
      // The rest is the wait for the server (at least its handling of the request).
      expect(d.total - d.send - d.receive).toBeGreaterThan(0n);

      // Concurrent inferences are each counted once.
      const before = client.inferStat();
      await Promise.all(Array.from({ length: 8 }, () => client.infer('simple', simpleInputs())));
      const c = delta(before, client.inferStat());
      expect(c.count).toBe(8);
      expect(c.send + c.receive).toBeLessThanOrEqual(c.total);
    } finally {
      await client.close();
    }
  });

  it('does not count failed inferences (server error, refused input, timeout)', async () => {
    const client = makeClient();
    try {
      await client.infer('simple', simpleInputs());
      const before = client.inferStat();
      // The server refuses it (unknown model).
      await expect(client.infer('no_such_model', simpleInputs())).rejects.toBeInstanceOf(TritonServerError);
      // The server refuses it (wrong shape).
      await expect(
        client.infer('simple', [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 3], data: new Int32Array(3) },
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 3], data: new Int32Array(3) },
        ]),
      ).rejects.toBeInstanceOf(TritonServerError);
      // The client refuses it before sending (data does not match the shape).
      await expect(
        client.infer('simple', [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Int32Array(3) },
        ]),
      ).rejects.toBeInstanceOf(TritonInvalidArgumentError);
      // The call times out while the server executes.
      await expect(client.infer('slow_identity', fp32(4), { timeoutMs: 10 })).rejects.toThrow();
      expect(client.inferStat()).toEqual(before);
      await client.infer('simple', simpleInputs());
      expect(client.inferStat().completedRequestCount).toBe(before.completedRequestCount + 1);
    } finally {
      await client.close();
    }
  });

  it('puts the server execution between send and receive, and encoding and decoding in them', async () => {
    const client = makeClient();
    try {
      // slow_identity executes for SLOW_IDENTITY_DELAY_MS per request (one instance, sequential calls).
      let before = client.inferStat();
      const n = 3;
      for (let i = 0; i < n; i++) await client.infer('slow_identity', fp32(4));
      const slow = delta(before, client.inferStat());
      expect(slow.count).toBe(n);
      const executed = BigInt(n * slowDelayMs) * MS;
      expect(slow.total).toBeGreaterThanOrEqual(executed);
      expect(slow.total - slow.send - slow.receive).toBeGreaterThanOrEqual(executed);
      // Neither send nor receive includes the execution (each well below one delay per request).
      expect(slow.send / BigInt(n)).toBeLessThan(BigInt(slowDelayMs) * MS);
      expect(slow.receive / BigInt(n)).toBeLessThan(BigInt(slowDelayMs) * MS);

      // A 4 MiB tensor each way: encoding it (send) and decoding it (receive) take longer than for
      // a 16-element one (averages over 3 requests each; the gap is 1000x in bytes).
      before = client.inferStat();
      for (let i = 0; i < 3; i++) await client.infer('fast_identity', fp32(16));
      const small = delta(before, client.inferStat());
      before = client.inferStat();
      for (let i = 0; i < 3; i++) {
        const result = await client.infer('fast_identity', fp32(1 << 20));
        expect(result.asTypedArray('OUTPUT0', 'FP32').length).toBe(1 << 20);
      }
      const large = delta(before, client.inferStat());
      expect(small.count).toBe(3);
      expect(large.count).toBe(3);
      expect(large.send).toBeGreaterThan(small.send);
      expect(large.receive).toBeGreaterThan(small.receive);
      expect(large.send + large.receive).toBeLessThanOrEqual(large.total);
    } finally {
      await client.close();
    }
  });
});

describe('inferStat with a custom transport', () => {
  it('counts the inferences of a transport that stamps nothing, with total time only', async () => {
    const http = new TritonClient({ url: server.url });
    // A real transport behind a wrapper that hides the timer from it.
    const inner = http.transport;
    const wrapper = new Proxy(inner, {
      get(target, key, receiver) {
        if (key === 'infer') {
          return (call: Parameters<Transport['infer']>[0], ctx: Parameters<Transport['infer']>[1]) =>
            target.infer(call, { ...ctx, timer: undefined });
        }
        const value: unknown = Reflect.get(target, key, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const client = new TritonClient({ transport: wrapper });
    try {
      await client.infer('simple', simpleInputs());
      await client.infer('simple', simpleInputs());
      const stat = client.inferStat();
      expect(stat.completedRequestCount).toBe(2);
      expect(stat.cumulativeTotalRequestTimeNs).toBeGreaterThan(0n);
      expect(stat.cumulativeSendTimeNs).toBe(0n);
      expect(stat.cumulativeReceiveTimeNs).toBe(0n);
      // The other client on the same server is untouched: statistics are per client.
      expect(http.inferStat().completedRequestCount).toBe(0);
    } finally {
      await client.close();
    }
  });
});

describe('inferStat of a retried inference', () => {
  it('counts it once, its send time starting with the last attempt (not the backoff)', async () => {
    // In-process fault server: a scripted 503 then a success, which the embedded server cannot
    // be made to answer on demand.
    const ok = JSON.stringify({ model_name: 'm', model_version: '1', outputs: [] });
    const faults = await startFaultServer(reply(503, '{"error":"busy"}'), reply(200, ok));
    // Backoff of 100..200 ms before the second attempt.
    const client = new TritonClient({ url: faults.url, retryDelayMs: 200, maxRetryDelayMs: 200 });
    try {
      const input = { name: 'X', datatype: 'FP32' as const, shape: [1], data: [1] };
      expect((await client.infer('m', [input], { retry: true })).modelName).toBe('m');
      expect(faults.requests).toHaveLength(2);
      const stat = client.inferStat();
      expect(stat.completedRequestCount).toBe(1);
      expect(stat.cumulativeTotalRequestTimeNs).toBeGreaterThanOrEqual(100n * MS);
      expect(stat.cumulativeSendTimeNs).toBeLessThan(50n * MS);
      expect(stat.cumulativeSendTimeNs + stat.cumulativeReceiveTimeNs).toBeLessThanOrEqual(
        stat.cumulativeTotalRequestTimeNs,
      );
    } finally {
      await client.close();
      await faults.close();
    }
  });
});
