/**
 * A one-copy encoder for `ModelInferRequest`: the tensors' raw bytes go straight from the caller's
 * arrays into the result.
 *
 * protobuf-es's `toBinary` writes `raw_input_contents` into a growing writer (a 602 KB image grows
 * it to 1 MiB) and copies the whole message out again when it finishes. Here every field but
 * `raw_input_contents` is encoded with protobuf-es, and each raw entry is appended after it as field
 * 7 (tag, varint length, bytes) into one Buffer of the exact size. Field 7 is the message's highest
 * field number, so the bytes are those `toBinary` (and Google's protobuf, which writes fields in
 * number order) give for the same message.
 * @packageDocumentation
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { ModelInferRequestSchema, type ModelInferRequest } from './gen/grpc_service_pb.js';
import { decodeMessage, type MessageInput, type MessageSerializers } from './codec.js';

/** Field 7 (`raw_input_contents`), wire type 2 (length-delimited): `(7 << 3) | 2`. */
const RAW_INPUT_CONTENTS_TAG = 0x3a;

/** Bytes of the varint encoding of `n` (0 ≤ n < 2^53). */
function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    size++;
  }
  return size;
}

/** Writes the varint of `n` (0 ≤ n < 2^53) at `offset`; returns the offset after it. */
function writeVarint(out: Buffer, offset: number, n: number): number {
  while (n >= 0x80) {
    out[offset++] = (n % 0x80) | 0x80;
    n = Math.floor(n / 0x80);
  }
  out[offset++] = n;
  return offset;
}

/**
 * Encodes a `ModelInferRequest` (or its plain fields) to protobuf binary, copying each
 * `raw_input_contents` entry once, into a Buffer of exactly the message's size. The bytes equal
 * `toBinary(ModelInferRequestSchema, message)`'s. A message carrying unknown fields (`$unknown`) is
 * encoded by `toBinary` itself, so that its unknown fields keep their place after field 7.
 */
export function encodeModelInferRequest(message: MessageInput<typeof ModelInferRequestSchema>): Buffer {
  const request: ModelInferRequest = create(ModelInferRequestSchema, message);
  const raw = request.rawInputContents;
  if (raw.length === 0 || (request.$unknown !== undefined && request.$unknown.length > 0)) {
    const bytes = toBinary(ModelInferRequestSchema, request);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  const head = toBinary(ModelInferRequestSchema, { ...request, rawInputContents: [] });
  let size = head.byteLength;
  for (const entry of raw) size += 1 + varintSize(entry.byteLength) + entry.byteLength;
  const out = Buffer.allocUnsafe(size);
  out.set(head, 0);
  let offset = head.byteLength;
  for (const entry of raw) {
    out[offset++] = RAW_INPUT_CONTENTS_TAG;
    offset = writeVarint(out, offset, entry.byteLength);
    out.set(entry, offset);
    offset += entry.byteLength;
  }
  return out;
}

/**
 * The @grpc/grpc-js serializers of `ModelInferRequest` (the request of `ModelInfer` and
 * `ModelStreamInfer`): {@link encodeModelInferRequest}, and `decodeMessage` (raw entries are views
 * into the received Buffer).
 */
export const modelInferRequestSerializers: MessageSerializers<typeof ModelInferRequestSchema> = {
  serialize: encodeModelInferRequest,
  deserialize: (bytes) => decodeMessage(ModelInferRequestSchema, bytes),
};
