/**
 * Small pieces shared by the request and response codecs.
 * @packageDocumentation
 */
import { isDatatype, type Datatype } from './datatypes.js';
import { ProtocolError } from './errors.js';
import type { Parameters } from './wire.js';

/** A tensor placed in a registered shared-memory region instead of the body. */
export interface SharedMemoryRef {
  /** Registered region name (`shared_memory_region`). */
  readonly region: string;
  /** Bytes used in the region (`shared_memory_byte_size`). */
  readonly byteSize: number | bigint;
  /** Offset into the region (`shared_memory_offset`); sent only when not 0. */
  readonly offset?: number | bigint;
}

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

/** Reads a required string field ("Unable to parse 'name'" otherwise, as Triton says). */
export function readString(obj: Record<string, unknown>, key: string): string {
  const v = obj[key];
  if (typeof v !== 'string') throw new ProtocolError('INVALID_FIELD', `Unable to parse '${key}'`);
  return v;
}

/** Reads a datatype field ("invalid datatype for input X" for an unknown one, as Triton says). */
export function readDatatype(obj: Record<string, unknown>, side: 'input' | 'output', name: string): Datatype {
  const v = readString(obj, 'datatype');
  if (!isDatatype(v)) throw new ProtocolError('UNKNOWN_DATATYPE', `invalid datatype for ${side} ${name}`);
  return v;
}

/** Reads a shape field: an array of non-negative safe integers ("Unable to parse 'shape'" otherwise). */
export function readShape(obj: Record<string, unknown>): number[] {
  const v = obj.shape;
  if (!Array.isArray(v)) throw new ProtocolError('INVALID_FIELD', "Unable to parse 'shape'");
  return v.map((d: unknown) => {
    const n = typeof d === 'bigint' ? Number(d) : d;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
      throw new ProtocolError('INVALID_FIELD', "Unable to parse 'shape'");
    }
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

/**
 * Reads an input's shape as Triton does (int64 dims): a negative dim is kept for the model checks to
 * refuse; an element count that overflows int64 is refused with Triton's message.
 */
export function readInputShape(obj: Record<string, unknown>, name: string, datatype: string): number[] {
  const v = obj.shape;
  if (!Array.isArray(v)) throw new ProtocolError('INVALID_FIELD', "Unable to parse 'shape'");
  let count = 1n;
  const dims = v.map((d: unknown) => {
    const big =
      typeof d === 'bigint' ? d : typeof d === 'number' && Number.isInteger(d) ? BigInt(d) : undefined;
    if (big === undefined || big > INT64_MAX || big < -INT64_MAX - 1n) {
      throw new ProtocolError('INVALID_FIELD', "Unable to parse 'shape'");
    }
    count *= big < 0n ? -big : big;
    return Number(big);
  });
  if (count > INT64_MAX) {
    throw new ProtocolError('INVALID_VALUE', `input '${name}' has too many elements of datatype ${datatype}`);
  }
  return dims;
}

/** Reads shared-memory parameters; both region and byte size or neither. */
export function readSharedMemory(params: Parameters, where: string): SharedMemoryRef | undefined {
  const region = params.shared_memory_region;
  const byteSize = params.shared_memory_byte_size;
  if (region === undefined && byteSize === undefined) return undefined;
  if (typeof region !== 'string' || byteSize === undefined) {
    throw new ProtocolError(
      'INVALID_FIELD',
      `${where} must specify both 'shared_memory_region' and 'shared_memory_byte_size'`,
    );
  }
  const size = readSize(byteSize, 'shared_memory_byte_size');
  const offset = params.shared_memory_offset;
  return offset === undefined
    ? { region, byteSize: size }
    : { region, byteSize: size, offset: readSize(offset, 'shared_memory_offset') };
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
