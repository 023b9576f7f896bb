/**
 * System shared memory over gRPC: register / status / unregister, and an inference whose inputs are
 * read from and outputs written to a real POSIX shared-memory object (/dev/shm), with the
 * shared-memory parameters of tritonserver's gRPC requests (int64 offset and byte size).
 */
import { closeSync, ftruncateSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

import type {
  InferParameter,
  ModelInferResponse,
  SystemSharedMemoryStatusResponse,
} from '@tritonserver-ts/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { TestServer } from '../helpers/server.js';
import { GrpcStatus, GrpcTestClient, grpcError, startGrpcTestServer } from './helpers.js';

let server: TestServer & { grpcTarget: string };
let client: GrpcTestClient;
const key = `/tritonserver-ts-grpc-test-${process.pid}`;
const file = `/dev/shm${key}`;

beforeAll(async () => {
  server = await startGrpcTestServer({ only: ['simple'], allowClientShm: true });
  client = new GrpcTestClient(server.grpcTarget);
  // INPUT0 = 0..15 at 0, INPUT1 = 100 × 16 at 64, outputs at 128 and 192.
  const region = Buffer.alloc(256);
  for (let i = 0; i < 16; i++) {
    region.writeInt32LE(i, i * 4);
    region.writeInt32LE(100, 64 + i * 4);
  }
  writeFileSync(file, region);
});

afterAll(async () => {
  client.close();
  await server.close();
  rmSync(file, { force: true });
});

const str = (value: string): object => ({ parameterChoice: { case: 'stringParam', value } });
const int = (value: number): object => ({ parameterChoice: { case: 'int64Param', value: BigInt(value) } });
const shm = (offset: number): Record<string, object> => ({
  shared_memory_region: str('data'),
  shared_memory_byte_size: int(64),
  ...(offset !== 0 ? { shared_memory_offset: int(offset) } : {}),
});

describe('system shared memory over gRPC', () => {
  it('registers a region and reports it', async () => {
    await client.call('SystemSharedMemoryRegister', { name: 'data', key, offset: 0n, byteSize: 256n });
    const s = await client.call<SystemSharedMemoryStatusResponse>('SystemSharedMemoryStatus', {
      name: 'data',
    });
    expect(Object.keys(s.regions)).toEqual(['data']);
    expect(s.regions.data?.key).toBe(key);
    expect(s.regions.data?.byteSize).toBe(256n);
    const again = await grpcError(
      client.call('SystemSharedMemoryRegister', { name: 'data', key, offset: 0n, byteSize: 8n }),
    );
    expect(again.code).toBe(GrpcStatus.ALREADY_EXISTS);
    expect(again.details).toBe("shared memory region 'data' already in manager");
  });

  it('reads inputs from the region and writes outputs into it; raw entries stay empty', async () => {
    const r = await client.call<ModelInferResponse>('ModelInfer', {
      modelName: 'simple',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1n, 16n], parameters: shm(0) },
        { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n], parameters: shm(64) },
      ],
      outputs: [
        { name: 'OUTPUT0', parameters: shm(128) },
        { name: 'OUTPUT1', parameters: shm(192) },
      ],
    });
    expect(r.rawOutputContents.map((b) => b.byteLength)).toEqual([0, 0]);
    const p = (o: { parameters: Record<string, InferParameter> } | undefined): unknown =>
      Object.fromEntries(Object.entries(o?.parameters ?? {}).map(([k, v]) => [k, v.parameterChoice.value]));
    expect(p(r.outputs[0])).toEqual({
      shared_memory_region: 'data',
      shared_memory_byte_size: 64n,
      shared_memory_offset: 128n,
    });
    const region = readFileSync(file);
    const out0 = Array.from({ length: 16 }, (_, i) => region.readInt32LE(128 + i * 4));
    const out1 = Array.from({ length: 16 }, (_, i) => region.readInt32LE(192 + i * 4));
    expect(out0).toEqual(Array.from({ length: 16 }, (_, i) => i + 100));
    expect(out1).toEqual(Array.from({ length: 16 }, (_, i) => i - 100));
  });

  it('refuses contents for an input in shared memory', async () => {
    const e = await grpcError(
      client.call('ModelInfer', {
        modelName: 'simple',
        inputs: [
          {
            name: 'INPUT0',
            datatype: 'INT32',
            shape: [1n, 16n],
            parameters: shm(0),
            contents: { intContents: [1] },
          },
          { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n], parameters: shm(64) },
        ],
      }),
    );
    expect(e.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(e.details).toBe(
      "unexpected 'content' provided when using shared memory for input tensor 'INPUT0' for model 'simple'",
    );
  });

  it('refuses a shared-memory input over the limit before reading it, on ModelInfer and on a stream', async () => {
    // A sparse 1 GiB object: nothing is allocated unless it is read.
    const bigKey = `${key}-big`;
    const fd = openSync(`/dev/shm${bigKey}`, 'w', 0o600);
    ftruncateSync(fd, 2 ** 30);
    closeSync(fd);
    try {
      await client.call('SystemSharedMemoryRegister', {
        name: 'big',
        key: bigKey,
        offset: 0n,
        byteSize: 2n ** 30n,
      });
      const request = {
        modelName: 'simple',
        inputs: [
          {
            name: 'INPUT0',
            datatype: 'INT32',
            shape: [1n, 16n],
            parameters: { shared_memory_region: str('big'), shared_memory_byte_size: int(2 ** 30) },
          },
          { name: 'INPUT1', datatype: 'INT32', shape: [1n, 16n], parameters: shm(64) },
        ],
      };
      // The in-flight budget (256 MiB by default) is below the gRPC message limit: it bounds one request.
      const message = `Request size of ${2 ** 30 + 64} including shared memory inputs exceeds the maximum allowed value of ${256 * 2 ** 20}. Use --http-max-inflight-body-bytes to increase the limit.`;
      const e = await grpcError(client.call('ModelInfer', request));
      expect(e.code).toBe(GrpcStatus.INVALID_ARGUMENT);
      expect(e.details).toBe(message);
      const { stream, answers, done } = client.collectingStream();
      stream.write({ ...request, id: 'big' });
      stream.end();
      await done;
      expect(answers.map((a) => [a.errorMessage, a.inferResponse?.id])).toEqual([[message, 'big']]);
    } finally {
      await client.call('SystemSharedMemoryUnregister', { name: 'big' });
      rmSync(`/dev/shm${bigKey}`, { force: true });
    }
  });

  it('unregisters (an empty name: every region); CUDA register is refused on this host', async () => {
    await client.call('SystemSharedMemoryUnregister', {});
    const s = await client.call<SystemSharedMemoryStatusResponse>('SystemSharedMemoryStatus', {});
    expect(s.regions).toEqual({});
    const cuda = await grpcError(
      client.call('CudaSharedMemoryRegister', {
        name: 'g',
        rawHandle: new Uint8Array(64),
        deviceId: 0n,
        byteSize: 8n,
      }),
    );
    expect(cuda.details).toBe("failed to register CUDA shared memory region: 'g', GPUs not supported");
  });
});
