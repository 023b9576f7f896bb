/**
 * The HTTP wire's shared-memory converters: `POST v2/{system,cuda}sharedmemory/region/{name}/register`
 * JSON bodies as the core's typed register commands, read the way Triton's HTTP front end reads them
 * (its field order, TritonJson's wording for a value of the wrong type).
 * @packageDocumentation
 */
import { invalidArg } from '../common/errors.js';
import type { RegisterCudaSharedMemory, RegisterSystemSharedMemory } from '../core/shared-memory.js';

const UINT64_MAX = 0xffff_ffff_ffff_ffffn;

/** A JSON uint64 (the codec gives `bigint` beyond 2^53 − 1), exact. */
function uint64(value: unknown): bigint {
  if (typeof value === 'bigint' && value >= 0n && value <= UINT64_MAX) return value;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalidArg('attempt to access JSON non-unsigned-integer as unsigned-integer');
  }
  return BigInt(value);
}

function asObject(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalidArg('Shared memory register request JSON must be an object');
  }
  return body as Record<string, unknown>;
}

/**
 * `{key, offset, byte_size}` → {@link RegisterSystemSharedMemory}: all three required, read in
 * Triton's order — key (string), offset (uint64), byte_size (uint64) — each checked as it is read
 * (protocol.md §6.5).
 * @throws ServerError INVALID_ARG with Triton's messages.
 */
export function systemShmRegisterFromJson(name: string, body: unknown): RegisterSystemSharedMemory {
  const fields = asObject(body);
  const field = (key: string): unknown => {
    if (!Object.hasOwn(fields, key)) {
      throw invalidArg(`Shared memory register request has no '${key}' field`);
    }
    return fields[key];
  };
  const key = field('key');
  if (typeof key !== 'string') throw invalidArg('attempt to access JSON non-string as string');
  const offset = uint64(field('offset'));
  const byteSize = uint64(field('byte_size'));
  return { name, key, offset, byteSize };
}

/**
 * `{raw_handle: {b64}, device_id, byte_size}` → {@link RegisterCudaSharedMemory}. Nothing is refused
 * here: every CUDA registration fails in the core (no GPU), whatever the body holds, so the fields
 * are taken only when they have the right type.
 */
export function cudaShmRegisterFromJson(name: string, body: unknown): RegisterCudaSharedMemory {
  const fields =
    body !== null && typeof body === 'object' && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : {};
  const handle = fields.raw_handle as { b64?: unknown } | null | undefined;
  const b64 = typeof handle === 'object' && handle !== null ? handle.b64 : undefined;
  const deviceId = fields.device_id;
  const byteSize = fields.byte_size;
  return {
    name,
    ...(typeof b64 === 'string' ? { rawHandle: Buffer.from(b64, 'base64') } : {}),
    ...(typeof deviceId === 'number' && Number.isSafeInteger(deviceId) ? { deviceId: BigInt(deviceId) } : {}),
    ...(typeof byteSize === 'number' && Number.isSafeInteger(byteSize) && byteSize >= 0
      ? { byteSize: BigInt(byteSize) }
      : typeof byteSize === 'bigint'
        ? { byteSize }
        : {}),
  };
}
