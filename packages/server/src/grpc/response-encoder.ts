/**
 * One-copy encoders of `ModelInferResponse` and `ModelStreamInferResponse`. protobuf-es's `toBinary`
 * writes `raw_output_contents` into a growing buffer (copying it as the buffer doubles) and copies
 * the whole message out again when it finishes: three or four copies of every output, which for a
 * large answer (a 16 MiB BYTES output) holds the event loop for tens of milliseconds. Here every
 * field but `raw_output_contents` is encoded by protobuf-es, and each raw entry is written after
 * them as field 6 (the message's highest field number, so the bytes are the ones `toBinary` gives)
 * into one Buffer of the exact size; a stream response wraps that as its field 2 after its
 * `error_message`. Messages with unknown fields are left to `toBinary`.
 * @packageDocumentation
 */
import {
  ModelInferResponseSchema,
  ModelStreamInferResponseSchema,
  encodeMessage,
  type ModelInferResponse,
  type ModelStreamInferResponse,
} from '@tritonserver-ts/protocol/grpc';
import { create, type MessageInitShape } from '@tritonserver-ts/protocol/grpc';
import { varintSize, writeVarint } from '@tritonserver-ts/protocol/grpc';

/** `raw_output_contents` (field 6, length-delimited) and `infer_response` (field 2, length-delimited). */
const RAW_OUTPUT_CONTENTS_TAG = (6 << 3) | 2;
const INFER_RESPONSE_TAG = (2 << 3) | 2;

/** A response's encoding: the bytes of every field but the raw outputs, and the raw outputs. */
interface Parts {
  readonly head: Uint8Array;
  readonly raw: readonly Uint8Array[];
  readonly size: number;
}

function partsOf(response: ModelInferResponse): Parts {
  const head = encodeMessage(ModelInferResponseSchema, { ...response, rawOutputContents: [] });
  let size = head.byteLength;
  for (const r of response.rawOutputContents) size += 1 + varintSize(r.byteLength) + r.byteLength;
  return { head, raw: response.rawOutputContents, size };
}

function writeParts(out: Uint8Array, at: number, parts: Parts): number {
  out.set(parts.head, at);
  at += parts.head.byteLength;
  for (const r of parts.raw) {
    out[at++] = RAW_OUTPUT_CONTENTS_TAG;
    at = writeVarint(out, at, r.byteLength);
    out.set(r, at);
    at += r.byteLength;
  }
  return at;
}

function hasUnknown(message: { readonly $unknown?: readonly unknown[] | undefined }): boolean {
  return message.$unknown !== undefined && message.$unknown.length > 0;
}

/** Encodes a `ModelInferResponse` (or its fields), copying each raw output once. */
export function encodeModelInferResponse(
  message: ModelInferResponse | MessageInitShape<typeof ModelInferResponseSchema>,
): Buffer {
  const response = create(ModelInferResponseSchema, message);
  if (response.rawOutputContents.length === 0 || hasUnknown(response)) {
    const bytes = encodeMessage(ModelInferResponseSchema, response);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  const parts = partsOf(response);
  const out = Buffer.allocUnsafe(parts.size);
  writeParts(out, 0, parts);
  return out;
}

/** Encodes a `ModelStreamInferResponse` (or its fields), copying each raw output once. */
export function encodeModelStreamInferResponse(
  message: ModelStreamInferResponse | MessageInitShape<typeof ModelStreamInferResponseSchema>,
): Buffer {
  const response = create(ModelStreamInferResponseSchema, message);
  const inner = response.inferResponse;
  if (
    inner === undefined ||
    inner.rawOutputContents.length === 0 ||
    hasUnknown(response) ||
    hasUnknown(inner)
  ) {
    const bytes = encodeMessage(ModelStreamInferResponseSchema, response);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  const head = encodeMessage(
    ModelStreamInferResponseSchema,
    create(ModelStreamInferResponseSchema, { errorMessage: response.errorMessage }),
  );
  const parts = partsOf(inner);
  const out = Buffer.allocUnsafe(head.byteLength + 1 + varintSize(parts.size) + parts.size);
  out.set(head, 0);
  let at = head.byteLength;
  out[at++] = INFER_RESPONSE_TAG;
  at = writeVarint(out, at, parts.size);
  writeParts(out, at, parts);
  return out;
}
