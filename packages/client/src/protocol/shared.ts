/**
 * Small pieces shared by the request and response codecs.
 * @packageDocumentation
 */
import { isDatatype, type Datatype } from './datatypes.js';
import { ProtocolError } from './errors.js';
import { INFERENCE_HEADER_CONTENT_LENGTH } from './wire.js';
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
 *   [0, min(2^31 − 1, body length)].
 */
export function parseHeaderLength(
  value: string | number | readonly string[] | null | undefined,
  bodyLength: number,
): number | undefined {
  if (value === undefined || value === null) return undefined;
  const text = (Array.isArray(value) ? (value as readonly string[]).join(',') : String(value)).trim();
  if (!/^\d+$/.test(text) || Number(text) > MAX_INT32) {
    throw new ProtocolError(
      'INVALID_HEADER_LENGTH',
      `Unable to parse ${INFERENCE_HEADER_CONTENT_LENGTH} header value '${text}': expected an integer between 0 and ${MAX_INT32}`,
    );
  }
  const n = Number(text);
  if (n > bodyLength) {
    throw new ProtocolError(
      'INVALID_HEADER_LENGTH',
      `${INFERENCE_HEADER_CONTENT_LENGTH} value ${n} exceeds the body size ${bodyLength}`,
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

/** Reads a required string field. */
export function readString(obj: Record<string, unknown>, key: string, where: string): string {
  const v = obj[key];
  if (typeof v !== 'string')
    throw new ProtocolError('INVALID_FIELD', `missing or invalid '${key}' in ${where}`);
  return v;
}

/** Reads a datatype field. */
export function readDatatype(obj: Record<string, unknown>, where: string): Datatype {
  const v = readString(obj, 'datatype', where);
  if (!isDatatype(v)) throw new ProtocolError('UNKNOWN_DATATYPE', `invalid datatype '${v}' for ${where}`);
  return v;
}

/** Reads a shape field: an array of non-negative safe integers. */
export function readShape(obj: Record<string, unknown>, where: string): number[] {
  const v = obj.shape;
  if (!Array.isArray(v)) throw new ProtocolError('INVALID_FIELD', `missing or invalid 'shape' in ${where}`);
  return v.map((d: unknown) => {
    const n = typeof d === 'bigint' ? Number(d) : d;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
      throw new ProtocolError('INVALID_FIELD', `invalid dimension ${String(d)} in 'shape' of ${where}`);
    }
    return n;
  });
}

/** Reads a non-negative integer parameter (e.g. `binary_data_size`). */
export function readSize(value: unknown, name: string, where: string): number {
  const n = typeof value === 'bigint' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw new ProtocolError('INVALID_FIELD', `invalid '${name}' ${String(value)} for ${where}`);
  }
  return n;
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
  const size = readSize(byteSize, 'shared_memory_byte_size', where);
  const offset = params.shared_memory_offset;
  return offset === undefined
    ? { region, byteSize: size }
    : { region, byteSize: size, offset: readSize(offset, 'shared_memory_offset', where) };
}

/** Writes shared-memory parameters the way the Python client does (offset only when not 0). */
export function writeSharedMemory(params: Parameters, shm: SharedMemoryRef): void {
  params.shared_memory_region = shm.region;
  params.shared_memory_byte_size = shm.byteSize;
  if (shm.offset !== undefined && BigInt(shm.offset) !== 0n) params.shared_memory_offset = shm.offset;
}

/** Concatenates byte chunks into one buffer. */
export function concatBytes(chunks: readonly Uint8Array[], total?: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  return Buffer.concat(chunks, total);
}
