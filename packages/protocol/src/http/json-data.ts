/**
 * The JSON `data` form of tensors (the non-binary KServe v2 encoding).
 *
 * Encoding is flat row-major. Decoding accepts flat or nested arrays. BOOL is `true`/`false`; BYTES
 * are UTF-8 strings; FP16 and BF16 cannot travel as JSON (Triton refuses them; so do we, with
 * Triton's wording: "receiving FP16 data via JSON is not supported. Please use the binary data
 * format for input X" for inputs, "sending FP16 data via JSON is not supported. Please use the
 * binary data format for output" for outputs). INT64/UINT64 are written as exact integer literals and read exactly when the
 * JSON was parsed with `parseJson` (large values arrive as `bigint`).
 * @packageDocumentation
 */
import { BytesList } from '../bytes-list.js';
import { bytesToStrings } from '../bytes.js';
import type { Datatype, TensorData } from '../datatypes.js';
import { ProtocolError } from '../errors.js';
import { TRITON_JSON } from './triton-json.js';

/** A JSON tensor element: number, bigint (64-bit integers out of the safe range), boolean or string. */
export type JsonElement = number | bigint | boolean | string;

/** Which side of an inference a tensor is on: a request `input` or a response `output`. */
export type TensorSide = 'input' | 'output';

function refuseHalf(datatype: Datatype, side: TensorSide, name: string): never {
  const message =
    side === 'input'
      ? `receiving ${datatype} data via JSON is not supported. Please use the binary data format for input ${name}`
      : `sending ${datatype} data via JSON is not supported. Please use the binary data format for output`;
  throw new ProtocolError('DATATYPE_NOT_JSON', message);
}

function bigintToJson(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

/**
 * Converts tensor data to a flat JSON `data` array. Throws {@link ProtocolError}
 * `DATATYPE_NOT_JSON` for FP16/BF16 and `INVALID_BYTES_ELEMENT` for BYTES that are not UTF-8.
 * @param side - whether the tensor is a request input or a response output (for the message).
 * @param name - the tensor name (for the message).
 */
export function tensorDataToJson(
  datatype: Datatype,
  data: TensorData | BytesList,
  side: TensorSide = 'input',
  name = '',
): JsonElement[] {
  switch (datatype) {
    case 'FP16':
    case 'BF16':
      return refuseHalf(datatype, side, name);
    case 'BOOL':
      return Array.from(data as Uint8Array, (v) => v !== 0);
    case 'BYTES':
      return bytesToStrings(data as Uint8Array[] | BytesList, { fatal: true });
    case 'INT64':
    case 'UINT64':
      return Array.from(data as BigInt64Array, bigintToJson);
    default:
      return Array.from(data as Float32Array);
  }
}

/** Triton's limit on the nesting of a tensor's JSON `data` (`HTTP_MAX_JSON_NESTING_DEPTH`). */
export const MAX_JSON_DATA_DEPTH = 100;

const DEPTH_MESSAGE = `JSON nesting depth exceeds maximum allowed limit (${MAX_JSON_DATA_DEPTH})`;
const SHAPE_MESSAGE = "Shape does not match true shape of 'data' field";
/** Triton 2.73's message when `data` holds fewer elements than the shape (known after the walk). */
const SHORT_DATA_MESSAGE = "Failed to parse 'data' field: shape does not match true shape";
const DATA = "Unable to parse 'data'";

/**
 * Visits the leaves (non-array elements) of nested `data` arrays in row-major order without
 * recursion (an attacker controls the depth), the way Triton's walk does: an array nested deeper
 * than {@link MAX_JSON_DATA_DEPTH} levels fails when the walk reaches it, so whichever problem comes
 * first in document order is the one reported.
 */
function walkLeaves(data: readonly unknown[], visit: (leaf: unknown) => void): void {
  const arrays: (readonly unknown[])[] = [data];
  const indices: number[] = [0];
  while (arrays.length > 0) {
    const top = arrays.length - 1;
    const array = arrays[top] as readonly unknown[];
    const index = indices[top] as number;
    if (index === array.length) {
      arrays.pop();
      indices.pop();
      continue;
    }
    indices[top] = index + 1;
    const item = array[index];
    if (Array.isArray(item)) {
      if (arrays.length >= MAX_JSON_DATA_DEPTH) throw new ProtocolError('INVALID_VALUE', DEPTH_MESSAGE);
      arrays.push(item as readonly unknown[]);
      indices.push(0);
    } else {
      visit(item);
    }
  }
}

const UINT64_MAX = 0xffff_ffff_ffff_ffffn;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A JSON value as TritonJson's `AsUInt` sees it: an integer in [0, 2^64 − 1]. */
function asUInt(v: unknown): number | bigint | undefined {
  if (typeof v === 'bigint') return v >= 0n && v <= UINT64_MAX ? v : undefined;
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 2 ** 64) {
    return v === 2 ** 64 ? undefined : v;
  }
  return undefined;
}

/** A JSON value as TritonJson's `AsInt` sees it: an integer in [−2^63, 2^63 − 1]. */
function asInt(v: unknown): number | bigint | undefined {
  if (typeof v === 'bigint') return v >= INT64_MIN && v <= INT64_MAX ? v : undefined;
  if (typeof v === 'number' && Number.isInteger(v) && v >= -(2 ** 63) && v < 2 ** 63) return v;
  return undefined;
}

type Converter = (v: unknown) => number | bigint;

function converterFor(datatype: Exclude<Datatype, 'BYTES' | 'FP16' | 'BF16'>): Converter {
  const fail = (message: string): never => {
    throw new ProtocolError('INVALID_VALUE', `${DATA}: ${message}`);
  };
  switch (datatype) {
    case 'BOOL':
      return (v) => (typeof v === 'boolean' ? (v ? 1 : 0) : fail(TRITON_JSON.notBool));
    case 'FP32':
    case 'FP64':
      return (v) =>
        typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : fail(TRITON_JSON.notNumber);
    case 'UINT64':
      return (v) => {
        const n = asUInt(v);
        return n === undefined ? fail(TRITON_JSON.notUInt) : BigInt(n);
      };
    case 'INT64':
      return (v) => {
        const n = asInt(v);
        return n === undefined ? fail(TRITON_JSON.notInt) : BigInt(n);
      };
    // Narrower integers: as Triton, the 64-bit value is cast (no range check); storing a number in
    // the typed array performs the same modular cast, a bigint is cut to 32 bits first.
    case 'UINT8':
    case 'UINT16':
    case 'UINT32':
      return (v) => {
        const n = asUInt(v);
        if (n === undefined) return fail(TRITON_JSON.notUInt);
        return typeof n === 'bigint' ? Number(BigInt.asUintN(32, n)) : n;
      };
    default:
      return (v) => {
        const n = asInt(v);
        if (n === undefined) return fail(TRITON_JSON.notInt);
        return typeof n === 'bigint' ? Number(BigInt.asIntN(32, n)) : n;
      };
  }
}

/**
 * The strings of a BYTES `data` array (flat or nested), in document order; a non-string leaf is
 * refused with Triton's message ("Unable to parse JSON bytes array: attempt to access JSON non-string
 * as string"). The strings are the parsed document's own (no copy).
 */
function jsonStrings(json: readonly unknown[], nested: boolean): readonly string[] {
  const notString = (): ProtocolError =>
    new ProtocolError('INVALID_VALUE', `Unable to parse JSON bytes array: ${TRITON_JSON.notString}`);
  if (!nested) {
    for (const v of json) if (typeof v !== 'string') throw notString();
    return json as readonly string[];
  }
  const out: string[] = [];
  walkLeaves(json, (v) => {
    if (typeof v !== 'string') throw notString();
    out.push(v);
  });
  return out;
}

/**
 * A BYTES JSON `data` array (flat or nested) packed into a {@link BytesList}: the strings' UTF-8
 * bytes in one buffer, without an object per element. Checks and messages as
 * {@link tensorDataFromJson} for BYTES (the element count is left to the model's checks).
 * @throws ProtocolError `INVALID_VALUE`
 */
export function bytesListFromJson(json: unknown): BytesList {
  if (!Array.isArray(json)) {
    throw new ProtocolError('INVALID_VALUE', `${DATA}: ${TRITON_JSON.notArray}`);
  }
  return BytesList.from(jsonStrings(json, json.some(Array.isArray)));
}

const TYPED_ARRAYS = {
  BOOL: Uint8Array,
  UINT8: Uint8Array,
  UINT16: Uint16Array,
  UINT32: Uint32Array,
  UINT64: BigUint64Array,
  INT8: Int8Array,
  INT16: Int16Array,
  INT32: Int32Array,
  INT64: BigInt64Array,
  FP32: Float32Array,
  FP64: Float64Array,
} as const;

/**
 * Converts a JSON `data` array (flat or nested) to typed tensor data the way Triton's HTTP front end
 * reads it (`ReadDataFromJson`, `JsonBytesArrayByteSize`): one walk in document order, without
 * recursion, in which the first problem met is the one reported, with Triton's messages:
 * - `data` not an array: "Unable to parse 'data': attempt to access JSON non-array as array";
 * - FP16/BF16: "receiving FP16 data via JSON is not supported. Please use the binary data format for
 *   input X";
 * - an array nested more than 100 levels deep: "Unable to parse 'data': JSON nesting depth exceeds
 *   maximum allowed limit (100)" (BYTES: without the prefix);
 * - more elements than `expectedCount` (met at the first one too many): "Unable to parse 'data':
 *   Shape does not match true shape of 'data' field"; fewer (after the walk), as Triton 2.73 words
 *   it: "Failed to parse 'data' field: shape does not match true shape";
 * - an element of the wrong JSON type: "Unable to parse 'data': " + TritonJson's message (BOOL needs
 *   `true`/`false`, unsigned types a non-negative integer, signed types an integer, FP32/FP64 a
 *   number); BYTES: "Unable to parse JSON bytes array: attempt to access JSON non-string as string".
 * Integers are cast to narrower types as Triton's C++ casts do (INT8 300 becomes 44), not refused.
 * For BYTES the element count is not checked here (Triton checks it against the model later).
 * Throws {@link ProtocolError} (`DATATYPE_NOT_JSON`, `INVALID_VALUE`, `ELEMENT_COUNT_MISMATCH`).
 * @param name - the tensor name (for messages).
 * @param side - whether the tensor is a request input or a response output (for messages).
 */
export function tensorDataFromJson<D extends Datatype>(
  datatype: D,
  json: unknown,
  expectedCount?: number,
  name = '',
  side: TensorSide = 'input',
): TensorData<D> {
  if (!Array.isArray(json)) {
    throw new ProtocolError('INVALID_VALUE', `${DATA}: ${TRITON_JSON.notArray}`);
  }
  const type: Datatype = datatype;
  if (type === 'FP16' || type === 'BF16') refuseHalf(type, side, name);
  const nested = json.some(Array.isArray);

  if (type === 'BYTES') {
    const encoder = new TextEncoder();
    const strings = jsonStrings(json, nested);
    // A response's element count is the sender's promise; a request's is checked by the model.
    if (side === 'output' && expectedCount !== undefined && strings.length !== expectedCount) {
      throw new ProtocolError('ELEMENT_COUNT_MISMATCH', `${DATA}: ${SHAPE_MESSAGE}`);
    }
    return strings.map((v) => encoder.encode(v)) as TensorData<D>;
  }

  const fixed = type;
  const convert = converterFor(fixed);
  const shapeMismatch = (): ProtocolError =>
    new ProtocolError('ELEMENT_COUNT_MISMATCH', `${DATA}: ${SHAPE_MESSAGE}`);
  let values: (number | bigint)[] | undefined;
  let out: { [i: number]: number | bigint; length: number } & object;
  let count = 0;
  if (nested) {
    // The leaf count is known only after the walk: collect, then copy into the typed array.
    values = [];
    out = values;
  } else {
    const capacity = expectedCount === undefined ? json.length : Math.min(expectedCount, json.length);
    out = new TYPED_ARRAYS[fixed](capacity);
  }
  const visit = (v: unknown): void => {
    if (expectedCount !== undefined && count >= expectedCount) throw shapeMismatch();
    out[count++] = convert(v);
  };
  try {
    if (nested) walkLeaves(json, visit);
    else for (const v of json as unknown[]) visit(v);
  } catch (error) {
    if (error instanceof ProtocolError && error.message === DEPTH_MESSAGE) {
      throw new ProtocolError('INVALID_VALUE', `${DATA}: ${DEPTH_MESSAGE}`);
    }
    throw error;
  }
  if (expectedCount !== undefined && count !== expectedCount) {
    throw new ProtocolError('ELEMENT_COUNT_MISMATCH', SHORT_DATA_MESSAGE);
  }
  if (values === undefined) return out as unknown as TensorData<D>;
  const typed = new TYPED_ARRAYS[fixed](values.length);
  for (let i = 0; i < values.length; i++) typed[i] = values[i] as never;
  return typed as unknown as TensorData<D>;
}
