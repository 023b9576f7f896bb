/**
 * Raw (binary tensor extension) layout of tensor data: little-endian, row-major, no padding; BOOL one
 * byte per element; BYTES length-prefixed (see `bytes.ts`). Fixed-size data is converted without
 * touching individual elements: encoding returns a byte view of the typed array, decoding returns a
 * typed-array view of the bytes when they are suitably aligned and copies them once otherwise.
 * @packageDocumentation
 */
import { endianness } from 'node:os';
import { BytesList } from './bytes-list.js';
import { deserializeBytesTensor, serializeByteTensor, type BytesElement } from './bytes.js';
import { DATATYPE_BYTE_SIZE, type Datatype, type FixedSizeDatatype, type TensorData } from './datatypes.js';
import { ProtocolError } from './errors.js';

if (endianness() !== 'LE') {
  throw new Error('@tritonserver-ts/protocol requires a little-endian host');
}

type TypedArrayConstructor = new (buffer: ArrayBufferLike, byteOffset: number, length: number) => TensorData;

const CONSTRUCTORS: Readonly<Record<FixedSizeDatatype, TypedArrayConstructor>> = {
  BOOL: Uint8Array,
  UINT8: Uint8Array,
  UINT16: Uint16Array,
  UINT32: Uint32Array,
  UINT64: BigUint64Array,
  INT8: Int8Array,
  INT16: Int16Array,
  INT32: Int32Array,
  INT64: BigInt64Array,
  FP16: Uint16Array,
  FP32: Float32Array,
  FP64: Float64Array,
  BF16: Uint16Array,
};

/**
 * The raw wire bytes of tensor data. For fixed-size datatypes this is a zero-copy view of the typed
 * array's memory; for `BYTES` it is the length-prefixed layout (a {@link BytesList}'s own memory, or
 * built from `Uint8Array`s or strings).
 */
export function tensorDataToBytes(
  datatype: Datatype,
  data: TensorData | BytesList | readonly BytesElement[],
): Uint8Array {
  if (BytesList.isBytesList(data)) return data.serialized;
  if (datatype === 'BYTES' || Array.isArray(data))
    return serializeByteTensor(data as readonly BytesElement[]);
  const typed = data as Exclude<TensorData, Uint8Array[]>;
  return new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
}

/**
 * Interprets raw wire bytes as tensor data of `datatype`.
 *
 * Fixed-size datatypes: returns a view over `bytes` when its offset is a multiple of the element
 * size (zero-copy; the result shares memory with `bytes`), otherwise an aligned copy. `BYTES`: the
 * elements are views into `bytes`.
 * @param expectedCount - element count from the shape; a mismatch throws `BINARY_SIZE_MISMATCH`
 *   (or `ELEMENT_COUNT_MISMATCH` for BYTES).
 * @param what - names the tensor in error messages, e.g. `input 'INPUT0'`.
 */
export function tensorDataFromBytes<D extends Datatype>(
  datatype: D,
  bytes: Uint8Array,
  expectedCount?: number,
  what = 'tensor',
): TensorData<D> {
  const type: Datatype = datatype;
  if (type === 'BYTES') return deserializeBytesTensor(bytes, expectedCount, what) as TensorData<D>;
  const size = DATATYPE_BYTE_SIZE[type];
  if (
    expectedCount !== undefined ? bytes.byteLength !== expectedCount * size : bytes.byteLength % size !== 0
  ) {
    const expected = expectedCount === undefined ? `a multiple of ${size}` : String(expectedCount * size);
    throw new ProtocolError(
      'BINARY_SIZE_MISMATCH',
      `unexpected size ${bytes.byteLength} for ${what}: expected ${expected} bytes of ${datatype}`,
    );
  }
  const Ctor = CONSTRUCTORS[type];
  // `new Uint8Array(view)` copies into a fresh buffer (offset 0); `Buffer#slice` would not copy.
  const aligned = bytes.byteOffset % size === 0 ? bytes : new Uint8Array(bytes);
  return new Ctor(aligned.buffer, aligned.byteOffset, aligned.byteLength / size) as TensorData<D>;
}
