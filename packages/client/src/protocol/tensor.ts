/**
 * The tensor value shared by the client, the codec and the embedded server.
 * @packageDocumentation
 */
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

/** Number of elements a shape holds (1 for a scalar shape `[]`). */
export function elementCount(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}
