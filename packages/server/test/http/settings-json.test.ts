import { describe, expect, it } from 'vitest';

import { cudaShmRegisterFromJson, systemShmRegisterFromJson } from '../../src/http/shared-memory-json.js';

/** The error a converter throws, as `{ kind, message }`. */
function refusal(fn: () => unknown): { kind: string; message: string } {
  try {
    fn();
  } catch (error) {
    const e = error as { kind: string; message: string };
    return { kind: e.kind, message: e.message };
  }
  throw new Error('expected a refusal');
}

describe('HTTP JSON → shared-memory register commands', () => {
  it('reads {key, offset, byte_size} exactly (uint64 beyond 2^53 kept)', () => {
    expect(systemShmRegisterFromJson('r', { key: '/k', offset: 0, byte_size: 2n ** 64n - 1n })).toEqual({
      name: 'r',
      key: '/k',
      offset: 0n,
      byteSize: 2n ** 64n - 1n,
    });
  });

  it('checks the fields in Triton’s order with its messages', () => {
    const bad = (body: unknown): { kind: string; message: string } =>
      refusal(() => systemShmRegisterFromJson('r', body));
    expect(bad([])).toEqual({
      kind: 'INVALID_ARG',
      message: 'Shared memory register request JSON must be an object',
    });
    expect(bad({ offset: 'x' }).message).toBe("Shared memory register request has no 'key' field");
    expect(bad({ key: 1 }).message).toBe('attempt to access JSON non-string as string');
    expect(bad({ key: '/k', byte_size: 1 }).message).toBe(
      "Shared memory register request has no 'offset' field",
    );
    for (const offset of [-1, 1.5, '0', 2n ** 64n]) {
      expect(bad({ key: '/k', offset, byte_size: 1 }).message).toBe(
        'attempt to access JSON non-unsigned-integer as unsigned-integer',
      );
    }
    expect(bad({ key: '/k', offset: 0 }).message).toBe(
      "Shared memory register request has no 'byte_size' field",
    );
  });

  it('CUDA: takes the well-typed fields and refuses nothing (the core refuses every CUDA register)', () => {
    expect(cudaShmRegisterFromJson('g', { raw_handle: { b64: 'AAE=' }, device_id: 0, byte_size: 8 })).toEqual(
      {
        name: 'g',
        rawHandle: Buffer.from([0, 1]),
        deviceId: 0n,
        byteSize: 8n,
      },
    );
    expect(cudaShmRegisterFromJson('g', 'nonsense')).toEqual({ name: 'g' });
  });
});
