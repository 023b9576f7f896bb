/**
 * A tensor's data from its bytes (little-endian elements; BYTES length-prefixed), checked against
 * the element count of its shape with Triton's messages. The core reads shared-memory inputs with
 * it; the front ends read their wire's raw bytes with it (gRPC raw and typed contents, the HTTP raw
 * binary request), so every path refuses a wrong size with the same words.
 * @packageDocumentation
 */
import {
  BytesList,
  DATATYPE_BYTE_SIZE,
  tensorDataFromBytes,
  type Datatype,
  type PackedTensorData,
} from '@tritonserver-ts/protocol';

import { echo } from '../common/echo.js';
import { invalidArg, toServerError } from '../common/errors.js';

/**
 * Decodes `bytes` as `count` elements of `datatype`. BYTES data stays a view of `bytes` (one
 * buffer, never an object per element; issue 23).
 * @param name - the input's name, in the messages
 * @param model - the model's name, in the messages
 * @throws ServerError (INVALID_ARG): Triton's "input byte size mismatch …" or "expected N string
 *   elements …", or the codec's error for malformed BYTES
 */
export function decodeTensorBytes(
  datatype: Datatype,
  bytes: Uint8Array,
  count: number,
  name: string,
  model: string,
): PackedTensorData {
  if (datatype !== 'BYTES' && bytes.byteLength !== count * DATATYPE_BYTE_SIZE[datatype]) {
    throw invalidArg(
      `input byte size mismatch for input '${echo(name)}' for model '${model}'. Expected ${count * DATATYPE_BYTE_SIZE[datatype]}, got ${bytes.byteLength}`,
    );
  }
  try {
    if (datatype === 'BYTES') return BytesList.fromSerialized(bytes, count, `input '${name}'`);
    return tensorDataFromBytes(datatype, bytes, count, `input '${name}'`);
  } catch (error) {
    // Serialized BYTES whose element count differs from the shape: Triton's core wording. Counted
    // only here, so a good request pays for no second walk.
    const n = datatype === 'BYTES' ? serializedElementCount(bytes) : undefined;
    if (n !== undefined && n !== count) {
      throw invalidArg(
        `expected ${count} string elements for inference input '${echo(name)}' for model '${model}', got ${n}`,
      );
    }
    throw toServerError(error);
  }
}

/**
 * The number of elements of serialized BYTES data (4-byte little-endian length, then the bytes), or
 * `undefined` when a length runs past the end (the codec reports that). Reads only the prefixes.
 */
function serializedElementCount(bytes: Uint8Array): number | undefined {
  let n = 0;
  let at = 0;
  while (at < bytes.byteLength) {
    if (at + 4 > bytes.byteLength) return undefined;
    const len = (bytes[at] as number) | ((bytes[at + 1] as number) << 8) | ((bytes[at + 2] as number) << 16);
    at += 4 + len + (bytes[at + 3] as number) * 0x1000000;
    if (at > bytes.byteLength) return undefined;
    n++;
  }
  return n;
}
