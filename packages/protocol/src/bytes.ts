/**
 * `BYTES` tensors: UTF-8 string helpers and the length-prefixed raw layout (a uint32 little-endian
 * length before each element's bytes), equivalent to the Python client's `serialize_byte_tensor` /
 * `deserialize_bytes_tensor` / `serialized_byte_size`.
 * @packageDocumentation
 */
import { BytesList } from './bytes-list.js';
import { ProtocolError } from './errors.js';

const encoder = new TextEncoder();
const lenientDecoder = new TextDecoder('utf-8');
const strictDecoder = new TextDecoder('utf-8', { fatal: true });

/** An element of a BYTES tensor as accepted by the encoders: raw bytes or a string (UTF-8 encoded). */
export type BytesElement = Uint8Array | string;

/** Encodes strings as UTF-8, one `Uint8Array` per element (the `BYTES` tensor data form). */
export function stringsToBytes(values: readonly string[]): Uint8Array[] {
  return values.map((s) => encoder.encode(s));
}

/**
 * Decodes `BYTES` elements (one `Uint8Array` each, or a {@link BytesList}) as UTF-8 strings.
 * @param options.fatal - throw a {@link ProtocolError} (`INVALID_BYTES_ELEMENT`) on invalid UTF-8
 *   instead of inserting U+FFFD.
 */
export function bytesToStrings(
  elements: readonly Uint8Array[] | BytesList,
  options?: { fatal?: boolean },
): string[] {
  if (BytesList.isBytesList(elements)) return elements.toStrings(options);
  const decoder = options?.fatal === true ? strictDecoder : lenientDecoder;
  return elements.map((e, i) => {
    try {
      return decoder.decode(e);
    } catch (cause) {
      throw new ProtocolError('INVALID_BYTES_ELEMENT', `BYTES element ${i} is not valid UTF-8`, { cause });
    }
  });
}

function toBytes(element: BytesElement): Uint8Array {
  return typeof element === 'string' ? encoder.encode(element) : element;
}

/** Size in bytes of the serialized (length-prefixed) form of `elements`. */
export function serializedByteSize(elements: readonly BytesElement[]): number {
  let n = 0;
  for (const e of elements) n += 4 + toBytes(e).byteLength;
  return n;
}

/** Serializes a `BYTES` tensor: for each element, a uint32 LE byte length followed by the bytes. */
export function serializeByteTensor(elements: readonly BytesElement[]): Uint8Array {
  const parts = elements.map(toBytes);
  let total = 0;
  for (const p of parts) total += 4 + p.byteLength;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let offset = 0;
  for (const p of parts) {
    view.setUint32(offset, p.byteLength, true);
    out.set(p, offset + 4);
    offset += 4 + p.byteLength;
  }
  return out;
}

/**
 * Splits a serialized `BYTES` tensor into its elements. The elements are views into `bytes`
 * (no copy). Throws {@link ProtocolError} `INVALID_BYTES_ELEMENT` when a length prefix runs past the
 * end, and `ELEMENT_COUNT_MISMATCH` when `expectedCount` is given and differs.
 * @param what - how to name the tensor in error messages, e.g. `input 'TEXT'`.
 */
export function deserializeBytesTensor(
  bytes: Uint8Array,
  expectedCount?: number,
  what = 'tensor',
): Uint8Array[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Uint8Array[] = [];
  let offset = 0;
  while (offset < bytes.byteLength) {
    if (offset + 4 > bytes.byteLength) {
      throw new ProtocolError(
        'INVALID_BYTES_ELEMENT',
        `unexpected end of BYTES data for ${what}: element ${out.length} has an incomplete length prefix`,
      );
    }
    const len = view.getUint32(offset, true);
    const start = offset + 4;
    if (start + len > bytes.byteLength) {
      throw new ProtocolError(
        'INVALID_BYTES_ELEMENT',
        `BYTES element ${out.length} of ${what} has length ${len} which runs past the end of its ${bytes.byteLength}-byte data`,
      );
    }
    out.push(bytes.subarray(start, start + len));
    offset = start + len;
  }
  if (expectedCount !== undefined && out.length !== expectedCount) {
    throw new ProtocolError(
      'ELEMENT_COUNT_MISMATCH',
      `${what} holds ${out.length} BYTES elements but its shape expects ${expectedCount}`,
    );
  }
  return out;
}
