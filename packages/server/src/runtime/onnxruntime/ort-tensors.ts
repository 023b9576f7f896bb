/**
 * Protocol tensors ⇄ onnxruntime-node tensors.
 *
 * | protocol | ORT | data |
 * | --- | --- | --- |
 * | BOOL | bool | Uint8Array (0/1) |
 * | INT8…INT64, UINT8…UINT64 | int8…uint64 | same typed array (64-bit as BigInt64Array / BigUint64Array) |
 * | FP16 | float16 | Uint16Array of raw half bits |
 * | FP32 / FP64 | float32 / float64 | Float32Array / Float64Array |
 * | BYTES | string | `BytesList` ⇄ `string[]` (UTF-8; elements must be valid UTF-8) |
 * | BF16 | — | not supported by onnxruntime-node (use the identity backend) |
 *
 * BYTES are the one datatype converted element by element: onnxruntime-node takes and gives string
 * tensors as one JavaScript string per element (and copies each into a `std::string`), so an
 * execution of n string elements costs some tens of bytes per element on top of the bytes, in the
 * thread that runs the session, for as long as it runs. Everywhere else a BYTES tensor is one buffer.
 *
 * FP16 on Node 24+: where the global `Float16Array` exists, onnxruntime-common stores a float16
 * tensor's data as a `Float16Array` view, but onnxruntime-node's native binding reads a
 * `Float16Array` as empty (N-API has no float16 typed-array kind: "not enough space: expected 4,
 * got 0"). The server keeps FP16 as raw half bits in a `Uint16Array` both ways, on every Node.
 * @packageDocumentation
 */
import { BytesList, type Datatype, type PackedTensor } from '@tritonserver-ts/protocol';
import ort from 'onnxruntime-node';

import { BackendError } from '../errors.js';

/** Protocol datatype → ORT tensor type. */
export const DATATYPE_TO_ORT: Readonly<Partial<Record<Datatype, ort.Tensor.Type>>> = {
  BOOL: 'bool',
  UINT8: 'uint8',
  UINT16: 'uint16',
  UINT32: 'uint32',
  UINT64: 'uint64',
  INT8: 'int8',
  INT16: 'int16',
  INT32: 'int32',
  INT64: 'int64',
  FP16: 'float16',
  FP32: 'float32',
  FP64: 'float64',
  BYTES: 'string',
};

/** ORT tensor type → protocol datatype. */
export const ORT_TO_DATATYPE: Readonly<Record<string, Datatype>> = Object.fromEntries(
  Object.entries(DATATYPE_TO_ORT).map(([k, v]) => [v, k as Datatype]),
);

/**
 * Builds an ORT tensor from a protocol tensor, with `shape` (which may differ from the tensor's
 * own shape for reshaped inputs).
 * @throws BackendError `INVALID_EXECUTION_INPUT` for BF16 or non-UTF-8 BYTES
 */
export function toOrtTensor(tensor: PackedTensor, shape: readonly number[]): ort.Tensor {
  const type = DATATYPE_TO_ORT[tensor.datatype];
  if (type === undefined) {
    throw new BackendError(
      'INVALID_EXECUTION_INPUT',
      `datatype ${tensor.datatype} of input '${tensor.name}' is not supported by the onnxruntime backend`,
    );
  }
  if (tensor.datatype === 'BYTES') {
    const elements = tensor.data as BytesList;
    const bad = elements.firstInvalidUtf8();
    if (bad >= 0) {
      throw new BackendError(
        'INVALID_EXECUTION_INPUT',
        `element ${bad} of BYTES input '${tensor.name}' is not valid UTF-8 (the onnxruntime backend passes BYTES as strings)`,
      );
    }
    return new ort.Tensor('string', elements.toStrings(), [...shape]);
  }
  const ortTensor = new ort.Tensor(type, tensor.data as ort.Tensor.DataTypeMap[typeof type], [...shape]);
  if (tensor.datatype === 'FP16' && !(ortTensor.data instanceof Uint16Array)) {
    // The native binding reads `data`: give it the half bits as a Uint16Array (see the header).
    Object.defineProperty(ortTensor, 'data', { value: halfBits(tensor.data as ArrayBufferView) });
  }
  return ortTensor;
}

/** The same bytes as a Uint16Array of half bits (a Float16Array view on Node 24+, or as given). */
function halfBits(data: ArrayBufferView): Uint16Array {
  return data instanceof Uint16Array
    ? data
    : new Uint16Array(data.buffer, data.byteOffset, data.byteLength / 2);
}

/**
 * Converts an ORT output to a protocol tensor.
 * @throws BackendError `EXECUTION_FAILED` for ORT types the protocol cannot carry
 */
export function fromOrtTensor(name: string, value: ort.Tensor): PackedTensor {
  const datatype = ORT_TO_DATATYPE[value.type];
  if (datatype === undefined) {
    throw new BackendError(
      'EXECUTION_FAILED',
      `output '${name}' has ONNX type '${value.type}' that has no protocol datatype`,
    );
  }
  const shape = value.dims.map(Number);
  if (datatype === 'BYTES') {
    return { name, datatype, shape, data: BytesList.from(value.data as string[]) };
  }
  if (datatype === 'FP16') return { name, datatype, shape, data: halfBits(value.data as ArrayBufferView) };
  return { name, datatype, shape, data: value.data as PackedTensor['data'] };
}
