/**
 * Triton's classification extension on the server side: turns an output tensor into its top-k
 * classes per batch row as a BYTES tensor of `"<value>:<index>[:<label>]"` strings. The string
 * format itself (Triton's `std::to_string` values, ordering, unsupported datatypes) comes from the
 * shared codec's `classifyRow`, so client and server agree by construction.
 * @packageDocumentation
 */
import {
  BytesList,
  CLASSIFICATION_DATATYPES,
  classifyRow,
  type FixedTensorData,
  type PackedTensor,
  type TensorData,
} from '@tritonserver-ts/protocol';

import { invalidArg, toServerError } from '../common/errors.js';

/** Triton's limit on the elements of one classified row (a batch item, or the whole tensor). */
export const MAX_CLASSIFICATION_ELEMENTS = 1_000_000;

/**
 * Computes classification results for `tensor`.
 * @param tensor - the model output (first dim = batch when `batched`).
 * @param count - requested number of classes (k > 0).
 * @param batched - whether the model batches (`max_batch_size > 0`): then each batch row is
 *   classified separately and the result has shape `[batch, k]`, else `[k]`.
 * @param labels - class labels (line N of `label_filename` = class N), if any.
 * @throws ServerError INVALID_ARG, in Triton's order (`TopkClassifications`): FP16 / BF16 / BOOL /
 *   BYTES outputs ("class result not available for output due to unsupported type 'BYTES'"), then
 *   rows of more than 1,000,000 elements ("classification output tensor too large").
 */
export function classify(
  tensor: PackedTensor,
  count: number,
  batched: boolean,
  labels: readonly string[] | undefined,
): PackedTensor {
  if (!Number.isSafeInteger(count) || count <= 0) {
    throw invalidArg(`classification count for output '${tensor.name}' must be a positive integer`);
  }
  // The datatype first: a BYTES tensor has no numeric rows to slice (the codec's message).
  if (!CLASSIFICATION_DATATYPES.includes(tensor.datatype)) {
    try {
      classifyRow(tensor.datatype, new Uint8Array(0), 0);
    } catch (error) {
      throw toServerError(error);
    }
  }
  const rows = batched ? (tensor.shape[0] ?? 0) : 1;
  const data = tensor.data as FixedTensorData;
  const classes = rows === 0 ? 0 : data.length / rows;
  // Triton (26.02+) bounds the elements sorted per row.
  if (classes > MAX_CLASSIFICATION_ELEMENTS) throw invalidArg('classification output tensor too large');
  const k = Math.min(count, classes);
  const out: string[] = [];
  try {
    for (let r = 0; r < rows; r++) {
      const row = data.subarray(r * classes, (r + 1) * classes) as TensorData;
      for (const entry of classifyRow(tensor.datatype, row, k, labels)) out.push(entry);
    }
  } catch (error) {
    throw toServerError(error);
  }
  const shape = batched ? [rows, k] : [k];
  return { name: tensor.name, datatype: 'BYTES', shape, data: BytesList.from(out) };
}
