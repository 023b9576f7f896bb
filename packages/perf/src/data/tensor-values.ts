/**
 * One batch-1 tensor of `--input-data` (or of `validation_data`): values from JSON, base64 or raw
 * file bytes, or generated (zero / seeded random), held as little-endian bytes (fixed-size types)
 * or as BYTES elements, and joined into the typed data of a request.
 * @packageDocumentation
 */
import {
  DATATYPE_BYTE_SIZE,
  deserializeBytesTensor,
  float32ArrayToBf16,
  float32ArrayToFp16,
  type Datatype,
  type FixedSizeDatatype,
  type TensorData,
} from '@tritonserver-ts/client';

import { PerfError } from '../errors.js';

/** One tensor of one data entry, without the batch dimension. */
export type Batch1Tensor =
  | { readonly kind: 'fixed'; readonly shape: readonly number[]; readonly bytes: Uint8Array }
  | { readonly kind: 'bytes'; readonly shape: readonly number[]; readonly elements: readonly Uint8Array[] };

/** Values without a shape yet (the caller decides the shape). */
export type TensorValuesOnly =
  | { readonly kind: 'fixed'; readonly bytes: Uint8Array }
  | { readonly kind: 'bytes'; readonly elements: readonly Uint8Array[] };

function dataError(message: string): PerfError {
  return new PerfError('INPUT_DATA', message);
}

/** Elements of a fully defined shape; -1 when a dim is variable. */
export function elementsOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) {
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

/** `[2,3]` as perf_analyzer prints shapes. */
export function shapeText(shape: readonly number[]): string {
  return `[${shape.join(',')}]`;
}

/** Number of elements held. */
export function valueCount(datatype: Datatype, values: TensorValuesOnly): number {
  return values.kind === 'bytes'
    ? values.elements.length
    : values.bytes.byteLength / DATATYPE_BYTE_SIZE[datatype as FixedSizeDatatype];
}

const INT_RANGES: Partial<Record<Datatype, readonly [number, number]>> = {
  INT8: [-128, 127],
  INT16: [-32768, 32767],
  INT32: [-2147483648, 2147483647],
  UINT8: [0, 255],
  UINT16: [0, 65535],
  UINT32: [0, 4294967295],
};

function flatten(values: readonly unknown[], out: unknown[] = []): unknown[] {
  for (const v of values) {
    if (Array.isArray(v)) flatten(v, out);
    else out.push(v);
  }
  return out;
}

function bytesOf(array: ArrayBufferView): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

/**
 * Explicit JSON values (perf_analyzer's `"INPUT": [...]` or `"content": [...]`), flattened in
 * row-major order: numbers (BOOL also `true`/`false`; 64-bit integers also decimal strings) or, for
 * BYTES, strings.
 * @param where - for messages, e.g. `input 'INPUT0' (stream 0, step 2)`
 */
export function fromJsonValues(
  datatype: Datatype,
  values: readonly unknown[],
  where: string,
): TensorValuesOnly {
  const flat = flatten(values);
  const bad = (index: number): never => {
    throw dataError(
      `${where}: element ${index} (${JSON.stringify(flat[index])}) is not a valid ${datatype} value`,
    );
  };
  switch (datatype) {
    case 'BYTES': {
      const encoder = new TextEncoder();
      return {
        kind: 'bytes',
        elements: flat.map((v, i) => {
          if (typeof v === 'string') return encoder.encode(v);
          if (typeof v === 'number' || typeof v === 'boolean') return encoder.encode(String(v));
          return bad(i);
        }),
      };
    }
    case 'BOOL':
      return {
        kind: 'fixed',
        bytes: Uint8Array.from(flat, (v, i) =>
          v === true || v === 1 ? 1 : v === false || v === 0 ? 0 : bad(i),
        ),
      };
    case 'INT64':
    case 'UINT64': {
      const out = datatype === 'INT64' ? new BigInt64Array(flat.length) : new BigUint64Array(flat.length);
      const [min, max] = datatype === 'INT64' ? [-(2n ** 63n), 2n ** 63n - 1n] : [0n, 2n ** 64n - 1n];
      flat.forEach((v, i) => {
        let b: bigint;
        if (typeof v === 'number' && Number.isInteger(v)) b = BigInt(v);
        else if (typeof v === 'string' && /^[+-]?\d+$/.test(v.trim())) b = BigInt(v.trim());
        else return bad(i);
        if (b < min || b > max) bad(i);
        out[i] = b;
        return undefined;
      });
      return { kind: 'fixed', bytes: bytesOf(out) };
    }
    case 'FP16':
    case 'BF16':
    case 'FP32':
    case 'FP64': {
      const numbers = flat.map((v, i) => (typeof v === 'number' ? v : bad(i)));
      const typed =
        datatype === 'FP16'
          ? float32ArrayToFp16(numbers)
          : datatype === 'BF16'
            ? float32ArrayToBf16(numbers)
            : datatype === 'FP32'
              ? Float32Array.from(numbers)
              : Float64Array.from(numbers);
      return { kind: 'fixed', bytes: bytesOf(typed) };
    }
    default: {
      const [min, max] = INT_RANGES[datatype] as readonly [number, number];
      const numbers = flat.map((v, i) =>
        typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : bad(i),
      );
      const typed =
        datatype === 'INT8'
          ? Int8Array.from(numbers)
          : datatype === 'INT16'
            ? Int16Array.from(numbers)
            : datatype === 'INT32'
              ? Int32Array.from(numbers)
              : datatype === 'UINT8'
                ? Uint8Array.from(numbers)
                : datatype === 'UINT16'
                  ? Uint16Array.from(numbers)
                  : Uint32Array.from(numbers);
      return { kind: 'fixed', bytes: bytesOf(typed) };
    }
  }
}

/**
 * Raw bytes (a `b64` field, or a file of a data directory): little-endian row-major values, or for
 * BYTES the serialized form (a 4-byte little-endian length before each element).
 */
export function fromRawBytes(datatype: Datatype, bytes: Uint8Array, where: string): TensorValuesOnly {
  if (datatype !== 'BYTES') {
    const size = DATATYPE_BYTE_SIZE[datatype];
    if (bytes.byteLength % size !== 0) {
      throw dataError(`${where}: ${bytes.byteLength} bytes is not a whole number of ${datatype} values`);
    }
    return { kind: 'fixed', bytes };
  }
  try {
    return { kind: 'bytes', elements: deserializeBytesTensor(bytes, undefined, where) };
  } catch (error) {
    throw dataError(error instanceof Error ? error.message : String(error));
  }
}

/** Decodes a `b64` string (perf_analyzer's base64, standard alphabet). */
export function decodeBase64(text: string, where: string): Uint8Array {
  const clean = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean)) throw dataError(`${where}: the b64 value is not valid base64`);
  const buffer = Buffer.from(clean, 'base64');
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

/** A small seeded PRNG (mulberry32): deterministic data for a given `--seed`. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STRING_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** Upper bound (exclusive) of random integers: small non-negative values every integer type holds. */
export const RANDOM_INT_LIMIT = 100;

/**
 * Generated data for `--input-data zero|random`: zeros; or seeded random values — integers in
 * [0, {@link RANDOM_INT_LIMIT}), floats in [0, 1), booleans 0/1 — and for BYTES `stringData` in
 * every element, else random alphanumeric strings of `stringLength`.
 */
export function generateValues(
  datatype: Datatype,
  count: number,
  mode: 'zero' | 'random',
  random: () => number,
  strings: { readonly stringLength: number; readonly stringData: string | undefined },
): TensorValuesOnly {
  if (datatype === 'BYTES') {
    const encoder = new TextEncoder();
    if (strings.stringData !== undefined) {
      const one = encoder.encode(strings.stringData);
      return { kind: 'bytes', elements: Array.from({ length: count }, () => one) };
    }
    if (mode === 'zero') {
      // perf_analyzer generates strings even for zero data; a zero-filled string of the length.
      const one = new Uint8Array(strings.stringLength);
      return { kind: 'bytes', elements: Array.from({ length: count }, () => one) };
    }
    return {
      kind: 'bytes',
      elements: Array.from({ length: count }, () => {
        let s = '';
        for (let i = 0; i < strings.stringLength; i++) {
          s += STRING_CHARS[Math.floor(random() * STRING_CHARS.length)];
        }
        return encoder.encode(s);
      }),
    };
  }
  const size = DATATYPE_BYTE_SIZE[datatype];
  if (mode === 'zero') return { kind: 'fixed', bytes: new Uint8Array(count * size) };
  switch (datatype) {
    case 'FP16':
    case 'BF16':
    case 'FP32':
    case 'FP64': {
      const values = Float64Array.from({ length: count }, () => random());
      const typed =
        datatype === 'FP16'
          ? float32ArrayToFp16(values)
          : datatype === 'BF16'
            ? float32ArrayToBf16(values)
            : datatype === 'FP32'
              ? Float32Array.from(values)
              : values;
      return { kind: 'fixed', bytes: bytesOf(typed) };
    }
    case 'BOOL':
      return { kind: 'fixed', bytes: Uint8Array.from({ length: count }, () => (random() < 0.5 ? 0 : 1)) };
    default: {
      const ints = Array.from({ length: count }, () => Math.floor(random() * RANDOM_INT_LIMIT));
      return fromJsonValues(datatype, ints, 'random data');
    }
  }
}

/** Joins batch-1 values (all of one datatype) into the typed data of one request. */
export function joinTensorData(datatype: Datatype, parts: readonly TensorValuesOnly[]): TensorData {
  if (datatype === 'BYTES') {
    return parts.flatMap((p) => (p.kind === 'bytes' ? p.elements : []));
  }
  let total = 0;
  for (const p of parts) if (p.kind === 'fixed') total += p.bytes.byteLength;
  const buffer = new ArrayBuffer(total);
  const joined = new Uint8Array(buffer);
  let offset = 0;
  for (const p of parts) {
    if (p.kind !== 'fixed') continue;
    joined.set(p.bytes, offset);
    offset += p.bytes.byteLength;
  }
  const count = total / DATATYPE_BYTE_SIZE[datatype];
  switch (datatype) {
    case 'BOOL':
    case 'UINT8':
      return joined;
    case 'INT8':
      return new Int8Array(buffer, 0, count);
    case 'INT16':
      return new Int16Array(buffer, 0, count);
    case 'UINT16':
    case 'FP16':
    case 'BF16':
      return new Uint16Array(buffer, 0, count);
    case 'INT32':
      return new Int32Array(buffer, 0, count);
    case 'UINT32':
      return new Uint32Array(buffer, 0, count);
    case 'INT64':
      return new BigInt64Array(buffer, 0, count);
    case 'UINT64':
      return new BigUint64Array(buffer, 0, count);
    case 'FP32':
      return new Float32Array(buffer, 0, count);
    case 'FP64':
      return new Float64Array(buffer, 0, count);
  }
}
