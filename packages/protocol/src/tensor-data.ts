/**
 * Building typed tensor data from plain JavaScript values, and checking data against a datatype.
 * @packageDocumentation
 */
import { stringsToBytes } from './bytes.js';
import type { Datatype, TensorData } from './datatypes.js';
import { ProtocolError } from './errors.js';
import { float32ArrayToBf16, float32ArrayToFp16 } from './fp16.js';
import { elementCount, type Tensor } from './tensor.js';

/** Plain values accepted by {@link toTensorData}: numbers, bigints, booleans or strings (BYTES). */
export type PlainValues =
  ArrayLike<number> | ArrayLike<bigint> | ArrayLike<boolean> | readonly (string | Uint8Array)[];

/** Values accepted wherever tensor data is given: the typed form or plain values. */
export type TensorValues<D extends Datatype = Datatype> = TensorData<D> | PlainValues;

function isTypedFor(datatype: Datatype, data: unknown): boolean {
  switch (datatype) {
    case 'BOOL':
    case 'UINT8':
      return data instanceof Uint8Array;
    case 'UINT16':
    case 'FP16':
    case 'BF16':
      return data instanceof Uint16Array;
    case 'UINT32':
      return data instanceof Uint32Array;
    case 'UINT64':
      return data instanceof BigUint64Array;
    case 'INT8':
      return data instanceof Int8Array;
    case 'INT16':
      return data instanceof Int16Array;
    case 'INT32':
      return data instanceof Int32Array;
    case 'INT64':
      return data instanceof BigInt64Array;
    case 'FP32':
      return data instanceof Float32Array;
    case 'FP64':
      return data instanceof Float64Array;
    case 'BYTES':
      return Array.isArray(data) && data.every((e) => e instanceof Uint8Array);
  }
}

function toBigInts(values: ArrayLike<unknown>): bigint[] {
  return Array.from(values, (v) => (typeof v === 'bigint' ? v : BigInt(v as number)));
}

/**
 * Converts plain values to the typed data of `datatype` (typed data of the right kind is returned as
 * is). FP16/BF16 accept float values (converted; BF16 truncates like the Python client) or raw bits
 * as a `Uint16Array`. BOOL accepts booleans or 0/1. BYTES accepts strings (UTF-8) or `Uint8Array`s.
 * Throws {@link ProtocolError} `INVALID_VALUE` on values the datatype cannot hold.
 */
export function toTensorData<D extends Datatype>(datatype: D, values: TensorValues<D>): TensorData<D> {
  if (isTypedFor(datatype, values)) return values as TensorData<D>;
  try {
    switch (datatype) {
      case 'BYTES':
        return (values as readonly (string | Uint8Array)[]).map((v) =>
          typeof v === 'string' ? (stringsToBytes([v])[0] as Uint8Array) : v,
        ) as TensorData<D>;
      case 'BOOL':
        return Uint8Array.from(values as ArrayLike<unknown>, (v) => (v ? 1 : 0)) as TensorData<D>;
      case 'FP16':
        return float32ArrayToFp16(values as ArrayLike<number>) as TensorData<D>;
      case 'BF16':
        return float32ArrayToBf16(values as ArrayLike<number>) as TensorData<D>;
      case 'INT64':
        return BigInt64Array.from(toBigInts(values as ArrayLike<unknown>)) as TensorData<D>;
      case 'UINT64':
        return BigUint64Array.from(toBigInts(values as ArrayLike<unknown>)) as TensorData<D>;
      case 'UINT8':
        return Uint8Array.from(values as ArrayLike<number>) as TensorData<D>;
      case 'UINT16':
        return Uint16Array.from(values as ArrayLike<number>) as TensorData<D>;
      case 'UINT32':
        return Uint32Array.from(values as ArrayLike<number>) as TensorData<D>;
      case 'INT8':
        return Int8Array.from(values as ArrayLike<number>) as TensorData<D>;
      case 'INT16':
        return Int16Array.from(values as ArrayLike<number>) as TensorData<D>;
      case 'INT32':
        return Int32Array.from(values as ArrayLike<number>) as TensorData<D>;
      case 'FP32':
        return Float32Array.from(values as ArrayLike<number>) as TensorData<D>;
      case 'FP64':
        return Float64Array.from(values as ArrayLike<number>) as TensorData<D>;
    }
  } catch (cause) {
    throw new ProtocolError('INVALID_VALUE', `values cannot be converted to ${datatype}`, { cause });
  }
  throw new ProtocolError('UNKNOWN_DATATYPE', `unknown datatype '${String(datatype)}'`);
}

/**
 * Builds a {@link Tensor} from plain or typed values and checks that the element count matches the
 * shape (`ELEMENT_COUNT_MISMATCH` otherwise).
 */
export function createTensor<D extends Datatype>(
  name: string,
  datatype: D,
  shape: readonly number[],
  values: TensorValues<D>,
): Tensor<D> {
  const data = toTensorData(datatype, values);
  const expected = elementCount(shape);
  if (data.length !== expected) {
    throw new ProtocolError(
      'ELEMENT_COUNT_MISMATCH',
      `tensor '${name}' has ${data.length} elements but shape [${shape.join(',')}] expects ${expected}`,
    );
  }
  return { name, datatype, shape: [...shape], data };
}

/**
 * The data of an input to send, as a typed array whose element count matches its shape: what both
 * wires' request encoders put on the wire (HTTP binary tail or JSON `data`, gRPC raw or typed
 * contents). Call it only for an input that is not in shared memory.
 * @throws ProtocolError `INVALID_VALUE` when the input has no data, `ELEMENT_COUNT_MISMATCH` when
 *   the element count differs from the shape's
 */
export function inputTensorData<D extends Datatype>(input: {
  readonly name: string;
  readonly datatype: D;
  readonly shape: readonly number[];
  readonly data?: TensorValues<D>;
}): TensorData<D> {
  if (input.data === undefined) {
    throw new ProtocolError(
      'INVALID_VALUE',
      `input '${input.name}' has neither data nor a shared-memory region`,
    );
  }
  const data = toTensorData(input.datatype, input.data);
  const expected = elementCount(input.shape);
  if (data.length !== expected) {
    throw new ProtocolError(
      'ELEMENT_COUNT_MISMATCH',
      `input '${input.name}' has ${data.length} elements but shape [${input.shape.join(',')}] expects ${expected}`,
    );
  }
  return data;
}
