/**
 * What a backend's conversion of BYTES inputs costs, counted before it happens (issue 23, item 2).
 * The server carries a BYTES tensor as one buffer (`BytesList`), so its memory follows its bytes;
 * onnxruntime-node alone needs an object per element: it takes string tensors as one JavaScript
 * string per element and copies each into a `std::string` (and back for string outputs), some tens
 * of bytes per element whatever the element's length, so a request of many short elements costs
 * many times its bytes while it runs. That cost is counted like the request's own bytes, against the
 * front end's {@link InputBudget}: more than one request may have (`--http-max-input-size`; over gRPC
 * the message limit or the in-flight budget) is refused as bad input (INVALID_ARG, 400) before any
 * string is made, and it is taken out of the in-flight budget shared by every request while the
 * request runs (a full budget: UNAVAILABLE, 503 with `Retry-After`).
 * @packageDocumentation
 */
import { BytesList, type PackedTensor } from '@tritonserver-ts/protocol';

import { ServerError } from '../common/errors.js';
import { passesStringsAsText } from './string-inputs.js';
import type { InputBudget } from '../common/types.js';

/**
 * Bytes onnxruntime-node takes per string element beyond the element's bytes (measured: about 65
 * for empty elements, 170 for two-character ones, in the thread that runs the session): the input
 * array's slot and string, the `std::string` in and out, the output string and its slot.
 */
export const TEXT_ELEMENT_BYTES = 96;
/** Copies of each element's bytes made on the way (JavaScript string, `std::string` in and out). */
export const TEXT_BYTE_COPIES = 3;

/** A request whose BYTES inputs would take more memory, once converted, than one request may have. */
export class ConversionTooLargeError extends ServerError {
  constructor(elements: number, cost: number, size: number, limit: number, flag: string) {
    super(
      'INVALID_ARG',
      `Request size of ${size} including ${cost} bytes for its ${elements} BYTES elements as onnxruntime strings exceeds the maximum allowed value of ${limit}. Use ${flag} to increase the limit, or send fewer elements.`,
    );
    this.name = 'ConversionTooLargeError';
  }
}

/** The conversion cost of `inputs` for `backend`: elements and bytes (0 when it takes buffers). */
export function conversionCost(
  backend: string,
  inputs: ReadonlyMap<string, PackedTensor>,
): { elements: number; bytes: number } {
  let elements = 0;
  let bytes = 0;
  if (!passesStringsAsText(backend)) return { elements, bytes };
  for (const t of inputs.values()) {
    if (!BytesList.isBytesList(t.data)) continue;
    const n = t.data.length;
    elements += n;
    bytes += n * TEXT_ELEMENT_BYTES + TEXT_BYTE_COPIES * (t.data.byteLength - 4 * n);
  }
  return { elements, bytes };
}

/**
 * Counts the conversion of `inputs` against `budget` (see the module documentation).
 * @param otherBytes - the request's input bytes beyond `budget.heldBytes` (e.g. shared memory)
 * @returns gives the bytes back to the in-flight budget (call once the request is answered)
 * @throws ConversionTooLargeError (INVALID_ARG), or the budget's refusal (UNAVAILABLE)
 */
export function holdConversion(
  backend: string,
  inputs: ReadonlyMap<string, PackedTensor>,
  budget: InputBudget | undefined,
  otherBytes = 0,
): () => void {
  const { elements, bytes } = conversionCost(backend, inputs);
  if (budget === undefined || bytes === 0) return () => undefined;
  const size = budget.heldBytes + otherBytes + bytes;
  if (size > budget.maxBytes) {
    throw new ConversionTooLargeError(elements, bytes, size, budget.maxBytes, budget.maxBytesFlag);
  }
  return budget.acquire(bytes);
}
