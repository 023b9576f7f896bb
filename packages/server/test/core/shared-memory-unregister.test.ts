/**
 * Unregistering system shared memory while inferences use it, as Triton's
 * `qa/L0_shared_memory` `TestSharedMemoryUnregister` checks it, on the real server over HTTP and gRPC
 * (`slow_shm`: identity FP32 [4], 400 ms per execution): the unregister succeeds at once, the
 * regions stay listed while a request that refers to them runs (a request sent meanwhile may still
 * use them), each request reads its input and writes its output, and the regions are gone once the
 * last one is answered, without a second unregister. Without a request in flight, unregister
 * removes them at once.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { encodeInferRequest } from '@tritonserver-ts/protocol/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { GrpcTestClient } from '../grpc/helpers.js';
import { post, startTestServer, type TestServer } from '../helpers/server.js';

const DELAY_MS = 400;
const key = `/tritonserver-ts-unregister-${process.pid}`;
const outKey = `${key}-out`;
const file = `/dev/shm${key}`;
const outFile = `/dev/shm${outKey}`;

let server: TestServer;
let client: GrpcTestClient;

beforeAll(async () => {
  server = await startTestServer({
    grpcPort: 0,
    allowClientShm: true,
    fill: async (root) => {
      await mkdir(join(root, 'slow_shm', '1'), { recursive: true });
      await writeFile(
        join(root, 'slow_shm', 'config.pbtxt'),
        `name: "slow_shm"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
instance_group [ { kind: KIND_CPU count: 2 } ]
parameters { key: "execute_delay_ms" value: { string_value: "${DELAY_MS}" } }
`,
      );
    },
  });
  client = new GrpcTestClient(server.running.grpcUrl);
}, 60_000);

afterAll(async () => {
  client.close();
  await server.close();
  rmSync(file, { force: true });
  rmSync(outFile, { force: true });
});

/** Fresh objects: the input [1, 2, 3, 4] (region `in`), 16 zero bytes (region `out`). */
async function registerRegions(): Promise<void> {
  const bytes = Buffer.alloc(16);
  new Float32Array(bytes.buffer, bytes.byteOffset, 4).set([1, 2, 3, 4]);
  writeFileSync(file, bytes);
  writeFileSync(outFile, Buffer.alloc(16));
  for (const [name, k] of [
    ['in', key],
    ['out', outKey],
  ] as const) {
    const r = await post(
      server.url,
      `/v2/systemsharedmemory/region/${name}/register`,
      JSON.stringify({ key: k, offset: 0, byte_size: 16 }),
    );
    expect(r.status).toBe(200);
  }
}

async function listed(): Promise<string[]> {
  const r = await fetch(`${server.url}/v2/systemsharedmemory/status`);
  return ((await r.json()) as { name: string }[]).map((s) => s.name).sort();
}

async function unregisterAll(): Promise<number> {
  return (await post(server.url, '/v2/systemsharedmemory/unregister', '')).status;
}

function output(): number[] {
  const b = readFileSync(outFile);
  return [...new Float32Array(b.buffer, b.byteOffset, 4)];
}

/** An HTTP request reading INPUT0 from `in` and writing OUTPUT0 to `out`. */
function httpInfer(): Promise<{ status: number; json?: unknown }> {
  const { body, headerLength } = encodeInferRequest(
    [{ name: 'INPUT0', datatype: 'FP32', shape: [4], sharedMemory: { region: 'in', byteSize: 16 } }],
    { outputs: [{ name: 'OUTPUT0', sharedMemory: { region: 'out', byteSize: 16 } }] },
  );
  const headers: Record<string, string> = {};
  if (headerLength !== undefined) headers['Inference-Header-Content-Length'] = String(headerLength);
  return post(server.url, '/v2/models/slow_shm/infer', body, headers);
}

/** The same over gRPC. */
function grpcInfer(): Promise<unknown> {
  const shm = (region: string): Record<string, object> => ({
    shared_memory_region: { parameterChoice: { case: 'stringParam', value: region } },
    shared_memory_byte_size: { parameterChoice: { case: 'int64Param', value: 16n } },
  });
  return client.call('ModelInfer', {
    modelName: 'slow_shm',
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4n], parameters: shm('in') }],
    outputs: [{ name: 'OUTPUT0', parameters: shm('out') }],
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('unregister during inference (TestSharedMemoryUnregister)', () => {
  for (const [wire, infer] of [
    ['HTTP', httpInfer],
    ['gRPC', grpcInfer],
  ] as const) {
    it(`${wire}, one request: unregister succeeds, the regions stay until it is answered, then go`, async () => {
      await registerRegions();
      const pending = infer();
      await sleep(DELAY_MS / 4);
      expect(await unregisterAll()).toBe(200);
      // Still listed: the request in flight uses them.
      expect(await listed()).toEqual(['in', 'out']);
      const result = await pending;
      if (wire === 'HTTP') expect((result as { status: number }).status).toBe(200);
      expect(output()).toEqual([1, 2, 3, 4]);
      expect(await listed()).toEqual([]);
    });

    it(`${wire}, two requests: one sent after the unregister still uses the regions; they go after the last`, async () => {
      await registerRegions();
      const first = infer();
      await sleep(DELAY_MS / 4);
      expect(await unregisterAll()).toBe(200);
      await sleep(DELAY_MS / 4);
      const second = infer();
      await first;
      // The second request is still running: the regions stay.
      expect(await listed()).toEqual(['in', 'out']);
      const result = await second;
      if (wire === 'HTTP') expect((result as { status: number }).status).toBe(200);
      expect(await listed()).toEqual([]);
    });
  }

  it('after the inference, unregister removes the regions at once; a later request fails cleanly (404 region not found)', async () => {
    await registerRegions();
    expect((await httpInfer()).status).toBe(200);
    expect(await listed()).toEqual(['in', 'out']);
    expect(await unregisterAll()).toBe(200);
    expect(await listed()).toEqual([]);
    const late = await httpInfer();
    expect(late.status).toBe(404);
    expect(late.json).toEqual({ error: "Unable to find shared memory region: 'in'" });
  });

  it('a region unregistered by name while in use can not be registered again under that name until released', async () => {
    await registerRegions();
    const pending = httpInfer();
    await sleep(DELAY_MS / 4);
    expect((await post(server.url, '/v2/systemsharedmemory/region/out/unregister', '')).status).toBe(200);
    const again = await post(
      server.url,
      '/v2/systemsharedmemory/region/out/register',
      JSON.stringify({ key: outKey, offset: 0, byte_size: 16 }),
    );
    expect(again.status).toBe(400);
    expect(again.json).toEqual({ error: "shared memory region 'out' already in manager" });
    expect((await pending).status).toBe(200);
    expect(await listed()).toEqual(['in']);
    expect(await unregisterAll()).toBe(200);
  });
});
