/**
 * Small pieces shared by the request and response codecs.
 * @packageDocumentation
 */
import { isDatatype, type Datatype } from '../datatypes.js';
import { ProtocolError } from '../errors.js';
import { TRITON_JSON } from './triton-json.js';
import type { Parameters } from '../parameters.js';
import type { SharedMemoryRef } from '../shared-memory.js';

const MAX_INT32 = 2 ** 31 - 1;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** UTF-8 bytes of a string. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Decodes UTF-8. */
export function fromUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/**
 * Parses an `Inference-Header-Content-Length` value against a body.
 * @returns `undefined` when the header is absent (the whole body is JSON), else the JSON byte length.
 * @throws ProtocolError `INVALID_HEADER_LENGTH` when the value is not an integer in
 *   [0, min(2^31 − 1, body length)], with Triton's messages ("Unable to parse
 *   Inference-Header-Content-Length, got: …" / "inference header size should be in range (0, N), got: …").
 */
export function parseHeaderLength(
  value: string | number | readonly string[] | null | undefined,
  bodyLength: number,
): number | undefined {
  if (value === undefined || value === null) return undefined;
  const text = (Array.isArray(value) ? (value as readonly string[]).join(',') : String(value)).trim();
  if (!/^-?\d+$/.test(text)) {
    throw new ProtocolError(
      'INVALID_HEADER_LENGTH',
      `Unable to parse Inference-Header-Content-Length, got: ${text}`,
    );
  }
  const n = Number(text);
  if (n < 0 || n > bodyLength || n > MAX_INT32) {
    throw new ProtocolError(
      'INVALID_HEADER_LENGTH',
      `inference header size should be in range (0, ${bodyLength}), got: ${text}`,
    );
  }
  return n;
}

/** True for a plain JSON object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads an optional `parameters` object, checking that every value is a scalar. */
export function readParameters(value: unknown, where: string): Parameters {
  if (value === undefined) return {};
  if (!isObject(value))
    throw new ProtocolError('INVALID_FIELD', `'parameters' of ${where} must be an object`);
  for (const [k, v] of Object.entries(value)) {
    const t = typeof v;
    if (t !== 'string' && t !== 'number' && t !== 'bigint' && t !== 'boolean') {
      throw new ProtocolError(
        'INVALID_FIELD',
        `parameter '${k}' of ${where} must be a string, number or boolean`,
      );
    }
  }
  return value as Parameters;
}

/** True when `obj` is a JSON object that has the member `key` (TritonJson's `Find`). */
export function hasMember(obj: unknown, key: string): obj is Record<string, unknown> {
  return isObject(obj) && Object.hasOwn(obj, key);
}

/** Triton's `RETURN_MSG_IF_ERR(…, "Unable to parse '<what>'")` around a TritonJson message. */
export function unableToParse(what: string, detail: string): ProtocolError {
  return new ProtocolError('INVALID_FIELD', `Unable to parse '${what}': ${detail}`);
}

/**
 * Reads a required string member as TritonJson's `MemberAsString` does, with Triton's wording:
 * "Unable to parse 'name': attempt to access non-existing object member 'name'" / "…: attempt to
 * access JSON non-string as string".
 */
export function readString(obj: unknown, key: string): string {
  if (!hasMember(obj, key)) throw unableToParse(key, TRITON_JSON.missing(key));
  const v = obj[key];
  if (typeof v !== 'string') throw unableToParse(key, TRITON_JSON.notString);
  return v;
}

/**
 * A JSON value as TritonJson's `AsUInt` reads it: an integer in [0, 2^64 − 1], exact (`bigint` when
 * beyond 2^53 − 1); `undefined` for anything else.
 */
export function asUInt64(value: unknown): number | bigint | undefined {
  if (typeof value === 'bigint') {
    if (value < 0n || value > 0xffff_ffff_ffff_ffffn) return undefined;
    return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
  }
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  return undefined;
}

/** Reads a uint64 as Triton does ("Unable to parse '<what>': attempt to access JSON non-unsigned-integer as unsigned-integer"). */
export function readUInt64(value: unknown, what: string): number | bigint {
  const n = asUInt64(value);
  if (n === undefined) throw unableToParse(what, TRITON_JSON.notUInt);
  return n;
}

/** Reads a datatype field ("invalid datatype for input X" for an unknown one, as Triton says). */
export function readDatatype(obj: Record<string, unknown>, side: 'input' | 'output', name: string): Datatype {
  const v = readString(obj, 'datatype');
  if (!isDatatype(v)) throw new ProtocolError('UNKNOWN_DATATYPE', `invalid datatype for ${side} ${name}`);
  return v;
}

/** Reads a response's shape: an array of non-negative safe integers ("Unable to parse 'shape': …" otherwise). */
export function readShape(obj: Record<string, unknown>): number[] {
  if (!hasMember(obj, 'shape')) throw unableToParse('shape', TRITON_JSON.missing('shape'));
  const v = obj.shape;
  if (!Array.isArray(v)) throw unableToParse('shape', TRITON_JSON.notArray);
  return v.map((d: unknown) => {
    const n = asUInt64(d);
    if (typeof n !== 'number') throw unableToParse('shape', TRITON_JSON.notUInt);
    return n;
  });
}

/**
 * Reads a non-negative integer parameter, up to 2^64 − 1 as Triton's uint64 fields allow
 * ("Unable to parse 'binary_data_size'" otherwise). Values beyond 2^53 come back as (inexact)
 * numbers: they exceed any body or region, which the caller's range checks then report.
 */
export function readSize(value: unknown, name: string): number {
  if (typeof value === 'bigint' && value >= 0n && value <= 0xffff_ffff_ffff_ffffn) return Number(value);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ProtocolError('INVALID_FIELD', `Unable to parse '${name}'`);
  }
  return value;
}

const INT64_MAX = 0x7fff_ffff_ffff_ffffn;

/** An input's shape as Triton's HTTP front end reads it. */
interface InputShape {
  /** The dims (a dim beyond 2^53 − 1 is not exact; such a shape is always refused later). */
  readonly dims: number[];
  /** The dims as sent, exact (for messages). */
  readonly exact: readonly (number | bigint)[];
  /** The element count, or `undefined` when it exceeds int64 (or a dim does). */
  readonly count: bigint | undefined;
}

/**
 * Reads an input's `shape` as Triton does: every dim a uint64 ("Unable to parse 'shape': attempt to
 * access JSON non-unsigned-integer as unsigned-integer" for a negative or fractional one). The
 * element count is computed exactly; what an overflow means is decided by the caller (Triton reports
 * it where the count is needed).
 */
export function readInputShape(obj: Record<string, unknown>): InputShape {
  if (!hasMember(obj, 'shape')) throw unableToParse('shape', TRITON_JSON.missing('shape'));
  const v = obj.shape;
  if (!Array.isArray(v)) throw unableToParse('shape', TRITON_JSON.notArray);
  let count: bigint | undefined = 1n;
  const exact = v.map((d: unknown) => {
    const n = asUInt64(d);
    if (n === undefined) throw unableToParse('shape', TRITON_JSON.notUInt);
    const big = BigInt(n);
    if (count !== undefined) count = big > INT64_MAX ? undefined : count * big;
    return n;
  });
  const dims = exact.map(Number);
  // A zero dim makes the count 0 whatever the other dims are.
  if (dims.includes(0)) count = 0n;
  else if (count !== undefined && count > INT64_MAX) count = undefined;
  return { dims, exact, count };
}

/**
 * Reads shared-memory parameters as Triton's `CheckSharedMemoryData` does: a `shared_memory_region`
 * string makes the tensor a shared-memory one; `shared_memory_offset` and `shared_memory_byte_size`
 * are uint64 and default to 0. Values are exact (`bigint` beyond 2^53 − 1) so that the region
 * checks can report them as Triton does.
 */
export function readSharedMemory(params: unknown): SharedMemoryRef | undefined {
  if (!isObject(params)) return undefined;
  let region: string | undefined;
  if (Object.hasOwn(params, 'shared_memory_region')) {
    const v = params.shared_memory_region;
    if (typeof v !== 'string') throw unableToParse('shared_memory_region', TRITON_JSON.notString);
    region = v;
  }
  const offset = Object.hasOwn(params, 'shared_memory_offset')
    ? readUInt64(params.shared_memory_offset, 'shared_memory_offset')
    : 0;
  const byteSize = Object.hasOwn(params, 'shared_memory_byte_size')
    ? readUInt64(params.shared_memory_byte_size, 'shared_memory_byte_size')
    : 0;
  if (region === undefined) return undefined;
  return offset === 0 ? { region, byteSize } : { region, byteSize, offset };
}

/** Writes shared-memory parameters the way the Python client does (offset only when not 0). */
export function writeSharedMemory(params: Parameters, shm: SharedMemoryRef): void {
  params.shared_memory_region = shm.region;
  params.shared_memory_byte_size = shm.byteSize;
  if (shm.offset !== undefined && shm.offset !== 0 && shm.offset !== 0n)
    params.shared_memory_offset = shm.offset;
}

/** Concatenates byte chunks into one buffer. */
export function concatBytes(chunks: readonly Uint8Array[], total?: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  return Buffer.concat(chunks, total);
}
