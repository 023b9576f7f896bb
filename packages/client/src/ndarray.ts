/**
 * A read-only n-dimensional view over flat row-major tensor data.
 * @packageDocumentation
 */
import type { Datatype, TensorData } from '@tritonserver-ts/protocol';
import { TritonInvalidArgumentError } from './errors.js';

/** Row-major strides (in elements) of a shape. */
export function rowMajorStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let stride = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = stride;
    stride *= shape[i] as number;
  }
  return strides;
}

/** Element type of a datatype's data. */
export type ElementOf<D extends Datatype> = D extends 'BYTES'
  ? Uint8Array
  : D extends 'INT64' | 'UINT64'
    ? bigint
    : number;

/** An ndarray-style view: `get(i, j, …)` with bounds checks, `shape`, `strides`, `size`, flat `data`. */
export class NdArrayView<D extends Datatype = Datatype> {
  readonly datatype: D;
  readonly shape: readonly number[];
  /** Strides in elements, row-major. */
  readonly strides: readonly number[];
  /** Number of elements. */
  readonly size: number;
  /** The flat data (shared, not copied). */
  readonly data: TensorData<D>;

  constructor(datatype: D, shape: readonly number[], data: TensorData<D>) {
    this.datatype = datatype;
    this.shape = shape;
    this.strides = rowMajorStrides(shape);
    this.size = data.length;
    this.data = data;
  }

  /** Number of dimensions. */
  get ndim(): number {
    return this.shape.length;
  }

  /** Flat index of a multi-index; throws `TritonInvalidArgumentError` when out of bounds. */
  offset(...indices: number[]): number {
    if (indices.length !== this.shape.length) {
      throw new TritonInvalidArgumentError(`expected ${this.shape.length} indices, got ${indices.length}`);
    }
    let flat = 0;
    for (let i = 0; i < indices.length; i++) {
      const index = indices[i] as number;
      const dim = this.shape[i] as number;
      if (!Number.isInteger(index) || index < 0 || index >= dim) {
        throw new TritonInvalidArgumentError(
          `index ${index} is out of bounds for dimension ${i} of size ${dim}`,
        );
      }
      flat += index * (this.strides[i] as number);
    }
    return flat;
  }

  /** The element at a multi-index (FP16/BF16: the raw bits; BOOL: 0/1). */
  get(...indices: number[]): ElementOf<D> {
    return (this.data as ArrayLike<unknown>)[this.offset(...indices)] as ElementOf<D>;
  }

  /** Nested arrays, like numpy's `tolist()`. */
  toNested(): unknown[] {
    const data = this.data as ArrayLike<unknown>;
    const build = (dim: number, base: number): unknown[] => {
      const n = this.shape[dim] as number;
      const stride = this.strides[dim] as number;
      const out = new Array<unknown>(n);
      for (let i = 0; i < n; i++) {
        out[i] = dim === this.shape.length - 1 ? data[base + i] : build(dim + 1, base + i * stride);
      }
      return out;
    };
    return this.shape.length === 0 ? [data[0]] : build(0, 0);
  }
}
