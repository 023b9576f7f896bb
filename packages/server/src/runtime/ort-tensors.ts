/**
 * Protocol tensors ⇄ onnxruntime-node tensors.
 *
 * | protocol | ORT | data |
 * | --- | --- | --- |
 * | BOOL | bool | Uint8Array (0/1) |
 * | INT8…INT64, UINT8…UINT64 | int8…uint64 | same typed array (64-bit as BigInt64Array / BigUint64Array) |
 * | FP16 | float16 | Uint16Array of raw half bits |
 * | FP32 / FP64 | float32 / float64 | Float32Array / Float64Array |
 * | BYTES | string | `Uint8Array[]` ⇄ `string[]` (UTF-8; elements must be valid UTF-8) |
 * | BF16 | — | not supported by onnxruntime-node (use the identity backend) |
 * @packageDocumentation
 */
import type { Datatype, Tensor } from '@tritonserver-ts/client/protocol';
import ort from 'onnxruntime-node';

import { BackendError } from './errors.js';

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

const utf8 = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

/**
 * Builds an ORT tensor from a protocol tensor, with `shape` (which may differ from the tensor's
 * own shape for reshaped inputs).
 * @throws BackendError `INVALID_EXECUTION_INPUT` for BF16 or non-UTF-8 BYTES
 */
export function toOrtTensor(tensor: Tensor, shape: readonly number[]): ort.Tensor {
  const type = DATATYPE_TO_ORT[tensor.datatype];
  if (type === undefined) {
    throw new BackendError(
      'INVALID_EXECUTION_INPUT',
      `datatype ${tensor.datatype} of input '${tensor.name}' is not supported by the onnxruntime backend`,
    );
  }
  if (tensor.datatype === 'BYTES') {
    const elements = tensor.data as Uint8Array[];
    const strings = elements.map((bytes, i) => {
      try {
        return utf8.decode(bytes);
      } catch {
        throw new BackendError(
          'INVALID_EXECUTION_INPUT',
          `element ${i} of BYTES input '${tensor.name}' is not valid UTF-8 (the onnxruntime backend passes BYTES as strings)`,
        );
      }
    });
    return new ort.Tensor('string', strings, [...shape]);
  }
  return new ort.Tensor(type, tensor.data as ort.Tensor.DataTypeMap[typeof type], [...shape]);
}

/**
 * Converts an ORT output to a protocol tensor.
 * @throws BackendError `EXECUTION_FAILED` for ORT types the protocol cannot carry
 */
export function fromOrtTensor(name: string, value: ort.Tensor): Tensor {
  const datatype = ORT_TO_DATATYPE[value.type];
  if (datatype === undefined) {
    throw new BackendError(
      'EXECUTION_FAILED',
      `output '${name}' has ONNX type '${value.type}' that has no protocol datatype`,
    );
  }
  const shape = value.dims.map(Number);
  if (datatype === 'BYTES') {
    const strings = value.data as string[];
    return { name, datatype, shape, data: strings.map((s) => encoder.encode(s)) };
  }
  return { name, datatype, shape, data: value.data as Tensor['data'] };
}
