import { readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { encodeInferRequest } from '@tritonserver-ts/protocol/http';

import { get, post, startTestServer, type TestServer } from '../helpers/server.js';

let srv: TestServer;
const key = `/tritonserver-ts-test-${process.pid}`;
const file = `/dev/shm${key}`;
const key2 = `${key}-small`;
const swapKey = `${key}-swap`;

beforeAll(async () => {
  srv = await startTestServer({ only: ['simple'], allowClientShm: true });
  // 16 INT32 for INPUT0 at 0, 16 INT32 for INPUT1 at 64, room for OUTPUT0 at 128 (offset 16 into the region).
  const region = Buffer.alloc(256);
  for (let i = 0; i < 16; i++) {
    region.writeInt32LE(i, 16 + i * 4);
    region.writeInt32LE(100, 16 + 64 + i * 4);
  }
  writeFileSync(file, region);
  writeFileSync(`/dev/shm${key2}`, Buffer.alloc(64));
});

afterAll(async () => {
  await srv.close();
  rmSync(file, { force: true });
  rmSync(`/dev/shm${key2}`, { force: true });
  rmSync(`/dev/shm${swapKey}`, { force: true });
});

describe('system shared memory', () => {
  it('registers a POSIX shared-memory region and reports its status', async () => {
    const r = await post(
      srv.url,
      '/v2/systemsharedmemory/region/data/register',
      JSON.stringify({ key, offset: 16, byte_size: 240 }),
    );
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
    expect((await get(srv.url, '/v2/systemsharedmemory/region/data/status')).json).toEqual([
      { name: 'data', key, offset: 16, byte_size: 240 },
    ]);
    const again = await post(
      srv.url,
      '/v2/systemsharedmemory/region/data/register',
      JSON.stringify({ key, offset: 0, byte_size: 8 }),
    );
    expect(again.status).toBe(400);
    expect(again.json).toEqual({ error: "shared memory region 'data' already in manager" });
  });

  it('reads inputs from and writes outputs to the region at their offsets', async () => {
    const { body, headerLength } = encodeInferRequest(
      [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], sharedMemory: { region: 'data', byteSize: 64 } },
        {
          name: 'INPUT1',
          datatype: 'INT32',
          shape: [1, 16],
          sharedMemory: { region: 'data', byteSize: 64, offset: 64 },
        },
      ],
      { outputs: [{ name: 'OUTPUT0', sharedMemory: { region: 'data', byteSize: 64, offset: 128 } }] },
    );
    const headers: Record<string, string> = {};
    if (headerLength !== undefined) headers['Inference-Header-Content-Length'] = String(headerLength);
    const r = await post(srv.url, '/v2/models/simple/infer', body, headers);
    expect(r.status).toBe(200);
    const out = (
      r.json as { outputs: { name: string; data?: unknown; parameters: Record<string, unknown> }[] }
    ).outputs[0];
    expect(out?.data).toBeUndefined();
    expect(out?.parameters).toEqual({
      shared_memory_region: 'data',
      shared_memory_byte_size: 64,
      shared_memory_offset: 128,
    });
    const region = readFileSync(file);
    const sums = Array.from({ length: 16 }, (_, i) => region.readInt32LE(16 + 128 + i * 4));
    expect(sums).toEqual(Array.from({ length: 16 }, (_, i) => i + 100));
  });

  it('refuses an output region that is too small and an unknown region', async () => {
    const small = encodeInferRequest(
      [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], sharedMemory: { region: 'data', byteSize: 64 } },
        {
          name: 'INPUT1',
          datatype: 'INT32',
          shape: [1, 16],
          sharedMemory: { region: 'data', byteSize: 64, offset: 64 },
        },
      ],
      { outputs: [{ name: 'OUTPUT0', sharedMemory: { region: 'data', byteSize: 8, offset: 128 } }] },
    );
    const r = await post(srv.url, '/v2/models/simple/infer', small.body);
    expect(r.status).toBe(400);
    expect((r.json as { error: string }).error).toContain("output 'OUTPUT0'");
    const unknown = encodeInferRequest(
      [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], sharedMemory: { region: 'nope', byteSize: 64 } },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16) },
      ],
      { binaryData: false },
    );
    const u = await post(srv.url, '/v2/models/simple/infer', unknown.body);
    expect(u.status).toBe(404);
    expect(u.json).toEqual({ error: "Unable to find shared memory region: 'nope'" });
  });

  it('refuses a region past the end of the object and a missing key', async () => {
    const past = await post(
      srv.url,
      '/v2/systemsharedmemory/region/big/register',
      JSON.stringify({ key: key2, offset: 32, byte_size: 64 }),
    );
    expect(past.status).toBe(400);
    expect(past.json).toEqual({ error: "failed to register shared memory region 'big': invalid args" });
    const sameKey = await post(
      srv.url,
      '/v2/systemsharedmemory/region/other/register',
      JSON.stringify({ key, offset: 0, byte_size: 8 }),
    );
    expect(sameKey.status).toBe(400);
    expect((sameKey.json as { error: string }).error).toBe(
      `registering an active shared memory key, "${key}", under a different name is not currently supported`,
    );
    const cuda = await get(srv.url, '/v2/cudasharedmemory/region/data/status');
    expect(cuda.status).toBe(404);
    expect(cuda.json).toEqual({
      error: "The region named 'data' is registered as system shared memory, not CUDA shared memory",
    });
    const missing = await post(
      srv.url,
      '/v2/systemsharedmemory/region/m/register',
      JSON.stringify({ key: '/no-such-object-xyz', offset: 0, byte_size: 4 }),
    );
    expect(missing.status).toBe(500);
    expect(missing.json).toEqual({ error: "Unable to open shared memory region: '/no-such-object-xyz'" });
  });

  it('opens the object again on each use: one replaced since registration or cut short is refused', async () => {
    const swapFile = `/dev/shm${swapKey}`;
    const make = (): void => {
      const region = Buffer.alloc(192);
      for (let i = 0; i < 16; i++) region.writeInt32LE(i, i * 4);
      writeFileSync(swapFile, region);
    };
    const infer = () => {
      const { body, headerLength } = encodeInferRequest(
        [
          {
            name: 'INPUT0',
            datatype: 'INT32',
            shape: [1, 16],
            sharedMemory: { region: 'swap', byteSize: 64 },
          },
          {
            name: 'INPUT1',
            datatype: 'INT32',
            shape: [1, 16],
            sharedMemory: { region: 'swap', byteSize: 64, offset: 64 },
          },
        ],
        { outputs: [{ name: 'OUTPUT0', sharedMemory: { region: 'swap', byteSize: 64, offset: 128 } }] },
      );
      const headers: Record<string, string> = {};
      if (headerLength !== undefined) headers['Inference-Header-Content-Length'] = String(headerLength);
      return post(srv.url, '/v2/models/simple/infer', body, headers);
    };
    const register = () =>
      post(
        srv.url,
        '/v2/systemsharedmemory/region/swap/register',
        JSON.stringify({ key: swapKey, offset: 0, byte_size: 192 }),
      );
    make();
    expect((await register()).status).toBe(200);
    expect((await infer()).status).toBe(200);
    expect(readFileSync(swapFile).readInt32LE(128 + 15 * 4)).toBe(15);
    // Another object under the same name (unlinked and created again): not the one registered.
    rmSync(swapFile);
    make();
    const replaced = await infer();
    expect(replaced.status).toBe(400);
    expect(replaced.json).toEqual({
      error: `shared memory region 'swap' no longer refers to the object registered with key '${swapKey}'; register it again`,
    });
    expect(readFileSync(swapFile).readInt32LE(128)).toBe(0);
    // Registered again, it is used.
    expect((await post(srv.url, '/v2/systemsharedmemory/region/swap/unregister', undefined)).status).toBe(
      200,
    );
    expect((await register()).status).toBe(200);
    expect((await infer()).status).toBe(200);
    // Cut short below the registered range (INPUT1 at 64..128).
    truncateSync(swapFile, 64);
    const short = await infer();
    expect(short.status).toBe(400);
    expect(short.json).toEqual({ error: "shared memory region 'swap' is shorter than registered" });
    // Gone: Triton's open failure.
    rmSync(swapFile);
    const gone = await infer();
    expect(gone.status).toBe(500);
    expect(gone.json).toEqual({ error: `Unable to open shared memory region: '${swapKey}'` });
    expect((await post(srv.url, '/v2/systemsharedmemory/region/swap/unregister', undefined)).status).toBe(
      200,
    );
  });

  it('unregisters regions, and a status query for an unknown region is 404', async () => {
    expect((await post(srv.url, '/v2/systemsharedmemory/region/data/unregister', undefined)).status).toBe(
      200,
    );
    const status = await get(srv.url, '/v2/systemsharedmemory/region/data/status');
    expect(status.status).toBe(404);
    expect(status.json).toEqual({ error: "Unable to find system shared memory region: 'data'" });
    expect((await get(srv.url, '/v2/systemsharedmemory/status')).json).toEqual([]);
    expect((await post(srv.url, '/v2/systemsharedmemory/unregister', undefined)).status).toBe(200);
  });
});

describe('--client-shm-max-regions', () => {
  it('refuses registrations past the cap (400) until a region is unregistered', async () => {
    const capped = await startTestServer({
      only: ['simple'],
      allowClientShm: true,
      sharedMemoryMaxRegions: 2,
    });
    const keys = [0, 1, 2].map((i) => `${key}-cap${i}`);
    for (const k of keys) writeFileSync(`/dev/shm${k}`, Buffer.alloc(64));
    try {
      const register = (name: string, k: string) =>
        post(
          capped.url,
          `/v2/systemsharedmemory/region/${name}/register`,
          JSON.stringify({ key: k, offset: 0, byte_size: 64 }),
        );
      expect((await register('a', keys[0] as string)).status).toBe(200);
      expect((await register('b', keys[1] as string)).status).toBe(200);
      const refused = await register('c', keys[2] as string);
      expect(refused.status).toBe(400);
      expect(refused.json).toEqual({
        error:
          "failed to register shared memory region 'c': 2 regions are registered, the most this server allows (--client-shm-max-regions)",
      });
      expect((await post(capped.url, '/v2/systemsharedmemory/region/a/unregister', undefined)).status).toBe(
        200,
      );
      expect((await register('c', keys[2] as string)).status).toBe(200);
      expect(
        ((await get(capped.url, '/v2/systemsharedmemory/status')).json as { name: string }[]).map(
          (r) => r.name,
        ),
      ).toEqual(['b', 'c']);
    } finally {
      await capped.close();
      for (const k of keys) rmSync(`/dev/shm${k}`, { force: true });
    }
  });
});
