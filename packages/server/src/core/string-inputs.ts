/**
 * BYTES inputs a model's backend cannot take. Triton's ONNX Runtime backend hands each BYTES element
 * to ONNX Runtime as a `std::string`, so any bytes pass. onnxruntime-node takes string tensors as
 * JavaScript strings (it writes them back as UTF-8), so an element that is not valid UTF-8 cannot
 * reach the model unchanged: it is refused per request, as bad input (INVALID_ARG), before the
 * request joins a batch (a batch-time failure would fail the other requests of the batch too).
 * @packageDocumentation
 */
import { BytesList, type PackedTensorData } from '@tritonserver-ts/protocol';

import { invalidArg } from '../common/errors.js';

/** Backends that pass BYTES elements to the model as text. */
const TEXT_ONLY_BACKENDS: ReadonlySet<string> = new Set(['onnxruntime']);

/** Whether `backend` passes BYTES elements to the model as text (one string per element). */
export function passesStringsAsText(backend: string): boolean {
  return TEXT_ONLY_BACKENDS.has(backend);
}

/**
 * Refuses a BYTES input with an element that is not valid UTF-8 when `backend` passes strings as
 * text. Other backends (Python, identity) take arbitrary bytes, as in Triton.
 * @param prefix - the `[request id: …] ` prefix of Triton's messages, or `''`.
 * @throws ServerError INVALID_ARG naming the input, the element and the model.
 */
export function checkStringInput(
  backend: string,
  data: PackedTensorData,
  input: string,
  model: string,
  prefix: string,
): void {
  if (!TEXT_ONLY_BACKENDS.has(backend) || !BytesList.isBytesList(data)) return;
  const i = data.firstInvalidUtf8();
  if (i >= 0) {
    throw invalidArg(
      `${prefix}element ${i} of BYTES input '${input}' for model '${model}' is not valid UTF-8: the onnxruntime backend of tritonserver-ts passes strings to ONNX Runtime as text, so it accepts UTF-8 only`,
    );
  }
}
