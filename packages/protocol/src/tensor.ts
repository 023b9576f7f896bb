/**
 * The tensor value shared by the client, the codec and the embedded server.
 * @packageDocumentation
 */
import type { BytesList } from './bytes-list.js';
import type { Datatype, TensorData } from './datatypes.js';

/**
 * A named tensor with its datatype, shape and data (row-major, little-endian when serialized).
 *
 * `shape` dims are plain numbers (a tensor larger than 2^53 elements cannot exist in memory).
 * The data's element count must equal the product of `shape`.
 */
export interface Tensor<D extends Datatype = Datatype> {
  readonly name: string;
  readonly datatype: D;
  readonly shape: readonly number[];
  readonly data: TensorData<D>;
}

/** Data of a fixed-size datatype: a typed array. */
export type FixedTensorData = Exclude<TensorData, Uint8Array[]>;

/**
 * Tensor data in the packed form: a typed array, or for `BYTES` a {@link BytesList} (one buffer)
 * instead of one `Uint8Array` per element. The embedded server's tensors are packed; the encoders of
 * this package accept both forms.
 */
export type PackedTensorData = FixedTensorData | BytesList;

/** A tensor whose data is in the packed form ({@link PackedTensorData}). */
export interface PackedTensor {
  readonly name: string;
  readonly datatype: Datatype;
  readonly shape: readonly number[];
  readonly data: PackedTensorData;
}

/** Number of elements a shape holds (1 for a scalar shape `[]`). */
export function elementCount(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}
