/** 64-bit integers in request JSON get Triton's messages, not parse failures. */
import { rmSync, writeFileSync } from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { post, startTestServer, type TestServer } from '../helpers/server.js';

let srv: TestServer;
const key = `/tritonserver-ts-int64-${process.pid}`;

beforeAll(async () => {
  srv = await startTestServer({ only: ['identity_fp32'], allowClientShm: true });
  writeFileSync(`/dev/shm${key}`, Buffer.alloc(64));
  writeFileSync(`/dev/shm${key}-2`, Buffer.alloc(64));
  const r = await post(
    srv.url,
    '/v2/systemsharedmemory/region/r/register',
    JSON.stringify({ key, offset: 0, byte_size: 64 }),
  );
  expect(r.status).toBe(200);
});
afterAll(async () => {
  await srv.close();
  rmSync(`/dev/shm${key}`, { force: true });
  rmSync(`/dev/shm${key}-2`, { force: true });
});

const infer = (input: string) =>
  post(
    srv.url,
    '/v2/models/identity_fp32/infer',
    `{"inputs":[{"name":"INPUT0","datatype":"FP32",${input}}]}`,
  );

describe('64-bit integers in requests', () => {
  it('an element count that overflows int64', async () => {
    const r = await infer('"shape":[4294967296,4294967296],"data":[1]');
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      error:
        "input 'INPUT0' with shape [4294967296,4294967296] causes total element count to exceed maximum size of 9223372036854775807",
    });
  });

  it('a negative dimension (Triton reads shape dims as uint64; it answers 500, we 400)', async () => {
    const r = await infer('"shape":[-1,1],"data":[1]');
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      error: "Unable to parse 'shape': attempt to access JSON non-unsigned-integer as unsigned-integer",
    });
  });

  it('shared-memory offsets and sizes near 2^64', async () => {
    const offset = await infer(
      '"shape":[1,1],"parameters":{"shared_memory_region":"r","shared_memory_byte_size":4,"shared_memory_offset":18446744073709551615}',
    );
    expect(offset.status).toBe(400);
    expect(offset.json).toEqual({ error: "Invalid offset for shared memory region: 'r'" });
    const size = await infer(
      '"shape":[1,1],"parameters":{"shared_memory_region":"r","shared_memory_byte_size":18446744073709551615}',
    );
    expect(size.status).toBe(400);
    expect(size.json).toEqual({ error: "Invalid offset + byte size for shared memory region: 'r'" });
    const register = await post(
      srv.url,
      '/v2/systemsharedmemory/region/r2/register',
      `{"key":"${key}-2","offset":18446744073709551615,"byte_size":4}`,
    );
    expect(register.status).toBe(400);
    expect(register.json).toEqual({ error: "failed to register shared memory region 'r2': invalid args" });
  });

  it('a repository index whose ready is not a boolean gets Triton 2.73’s wording', async () => {
    for (const ready of ['"yes"', '1', 'null', '[true]']) {
      const r = await post(srv.url, '/v2/repository/index', `{"ready":${ready}}`);
      expect(r.status, ready).toBe(400);
      expect(r.json, ready).toEqual({ error: "Invalid value for 'ready': expected a boolean" });
    }
    expect((await post(srv.url, '/v2/repository/index', '{"ready":true}')).status).toBe(200);
  });
});
