/**
 * Tensors crossing between the main thread and an onnxruntime worker thread (`ort-worker.ts`).
 * @internal
 * @packageDocumentation
 */
import { BytesList, type Datatype, type FixedTensorData, type PackedTensor } from '@tritonserver-ts/protocol';

/**
 * A tensor as it crosses between the threads: its data is always a typed array, so that its buffer
 * can be transferred (a `BytesList` would not survive structured cloning). BYTES travel as their
 * serialized layout with the element count.
 */
export interface WorkerTensor {
  readonly name: string;
  readonly datatype: Datatype;
  readonly shape: readonly number[];
  /** The data; for BYTES the serialized layout (a `Uint8Array`) of {@link WorkerTensor.count} elements. */
  readonly data: FixedTensorData;
  readonly count?: number;
}

/** `tensor` for the other thread; `data` replaces its bytes (e.g. a copy in a buffer to transfer). */
export function toWorkerTensor(tensor: PackedTensor, data?: FixedTensorData): WorkerTensor {
  const { name, datatype, shape } = tensor;
  if (BytesList.isBytesList(tensor.data)) {
    return { name, datatype, shape, data: data ?? tensor.data.serialized, count: tensor.data.length };
  }
  return { name, datatype, shape, data: data ?? tensor.data };
}

/** The tensor a {@link WorkerTensor} carries. */
export function fromWorkerTensor(tensor: WorkerTensor): PackedTensor {
  const { name, datatype, shape, data, count } = tensor;
  if (count === undefined) return { name, datatype, shape, data };
  return { name, datatype, shape, data: BytesList.fromSerialized(data as Uint8Array, count, `'${name}'`) };
}
