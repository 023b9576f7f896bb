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
import { bytesToStrings } from './bytes.js';
import type { Datatype, TensorData } from './datatypes.js';
import { ProtocolError } from './errors.js';
import { stringifyJson } from './json.js';

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
  data: TensorData,
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
      return bytesToStrings(data as Uint8Array[], { fatal: true });
    case 'INT64':
    case 'UINT64':
      return Array.from(data as BigInt64Array, bigintToJson);
    default:
      return Array.from(data as Float32Array);
  }
}

/** Triton's limit on the nesting of a tensor's JSON `data` (`HTTP_MAX_JSON_NESTING_DEPTH`). */
export const MAX_JSON_DATA_DEPTH = 100;

/**
 * Row-major flattening of nested `data` arrays without recursion (an attacker controls the depth),
 * refusing nesting deeper than {@link MAX_JSON_DATA_DEPTH} with Triton's message.
 */
function flatten(data: readonly unknown[]): unknown[] {
  if (!data.some(Array.isArray)) return data as unknown[];
  const out: unknown[] = [];
  const stack: { array: readonly unknown[]; index: number }[] = [{ array: data, index: 0 }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as { array: readonly unknown[]; index: number };
    if (top.index === top.array.length) {
      stack.pop();
      continue;
    }
    const item = top.array[top.index++];
    if (Array.isArray(item)) {
      if (stack.length >= MAX_JSON_DATA_DEPTH) {
        throw new ProtocolError(
          'INVALID_VALUE',
          `JSON nesting depth exceeds maximum allowed limit (${MAX_JSON_DATA_DEPTH})`,
        );
      }
      stack.push({ array: item as readonly unknown[], index: 0 });
    } else {
      out.push(item);
    }
  }
  return out;
}

/** A value as error messages show it: JSON (bigints exact, never a throw), at most 100 characters. */
function describeValue(value: unknown): string {
  const text = typeof value === 'bigint' ? value.toString() : stringifyJson(value);
  return text.length > 100 ? `${text.slice(0, 97)}...` : text;
}

function typeError(what: string, datatype: Datatype, index: number, value: unknown): ProtocolError {
  return new ProtocolError(
    'INVALID_VALUE',
    `Unable to parse 'data': element ${index} of ${what} (${describeValue(value)}) is not a valid ${datatype} value`,
  );
}

const INT_RANGES: Partial<Record<Datatype, readonly [number, number]>> = {
  INT8: [-128, 127],
  INT16: [-32768, 32767],
  INT32: [-2147483648, 2147483647],
  UINT8: [0, 255],
  UINT16: [0, 65535],
  UINT32: [0, 4294967295],
};

/**
 * Converts a JSON `data` array (flat or nested) to typed tensor data, checking every element's type
 * and range and the element count. Throws {@link ProtocolError} (`DATATYPE_NOT_JSON`,
 * `INVALID_VALUE`, `ELEMENT_COUNT_MISMATCH`) with Triton's wording where Triton has one
 * ("Unable to parse 'data': Shape does not match true shape of 'data' field").
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
  if (datatype === 'FP16' || datatype === 'BF16') refuseHalf(datatype, side, name);
  const what = `${side} '${name}'`;
  if (!Array.isArray(json)) {
    throw new ProtocolError('INVALID_VALUE', `Unable to parse 'data': 'data' of ${what} must be an array`);
  }
  const flat = flatten(json);
  if (expectedCount !== undefined && flat.length !== expectedCount) {
    throw new ProtocolError(
      'ELEMENT_COUNT_MISMATCH',
      "Unable to parse 'data': Shape does not match true shape of 'data' field",
    );
  }
  const n = flat.length;
  switch (datatype) {
    case 'BOOL': {
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        const v = flat[i];
        if (typeof v !== 'boolean') throw typeError(what, datatype, i, v);
        out[i] = v ? 1 : 0;
      }
      return out as TensorData<D>;
    }
    case 'BYTES': {
      const encoder = new TextEncoder();
      return flat.map((v, i) => {
        if (typeof v !== 'string') throw typeError(what, datatype, i, v);
        return encoder.encode(v);
      }) as TensorData<D>;
    }
    case 'INT64':
    case 'UINT64': {
      const out = datatype === 'INT64' ? new BigInt64Array(n) : new BigUint64Array(n);
      const [min, max] = datatype === 'INT64' ? [-(2n ** 63n), 2n ** 63n - 1n] : [0n, 2n ** 64n - 1n];
      for (let i = 0; i < n; i++) {
        const v = flat[i];
        let b: bigint;
        if (typeof v === 'bigint') b = v;
        else if (typeof v === 'number' && Number.isInteger(v)) b = BigInt(v);
        else throw typeError(what, datatype, i, v);
        if (b < min || b > max) throw typeError(what, datatype, i, v);
        out[i] = b;
      }
      return out as TensorData<D>;
    }
    case 'FP32':
    case 'FP64': {
      const out = datatype === 'FP32' ? new Float32Array(n) : new Float64Array(n);
      for (let i = 0; i < n; i++) {
        const v = flat[i];
        if (typeof v === 'number') out[i] = v;
        else if (typeof v === 'bigint') out[i] = Number(v);
        else throw typeError(what, datatype, i, v);
      }
      return out as TensorData<D>;
    }
    default: {
      const [min, max] = INT_RANGES[datatype] as readonly [number, number];
      const out = new (
        {
          INT8: Int8Array,
          INT16: Int16Array,
          INT32: Int32Array,
          UINT8: Uint8Array,
          UINT16: Uint16Array,
          UINT32: Uint32Array,
        } as const
      )[datatype as 'INT8'](n);
      for (let i = 0; i < n; i++) {
        const v = flat[i];
        if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
          throw typeError(what, datatype, i, v);
        }
        out[i] = v;
      }
      return out as unknown as TensorData<D>;
    }
  }
}
