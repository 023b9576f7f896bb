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
 *
 * {@link encodeInferCall} goes one step further for the client's own calls: the common call (raw
 * inputs in memory, no parameters) is written from the call's fields straight into the Buffer,
 * without building protobuf-es messages first (issue 11); other calls go through
 * `toModelInferRequest` and the one-copy encoder.
 * @packageDocumentation
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { ProtocolError } from '../errors.js';
import { tensorDataToBytes } from '../raw.js';
import { elementCount } from '../tensor.js';
import { toTensorData } from '../tensor-data.js';
import {
  InferParameterSchema,
  ModelInferRequestSchema,
  type ModelInferRequest,
} from './gen/grpc_service_pb.js';
import { decodeMessage, type MessageInput, type MessageSerializers } from './codec.js';
import { toModelInferRequest, type GrpcInferCall } from './infer-request.js';
import { delimitedSize, varintSize, writeVarint } from './wire-writer.js';

/** Field 7 (`raw_input_contents`), wire type 2 (length-delimited): `(7 << 3) | 2`. */
const RAW_INPUT_CONTENTS_TAG = 0x3a;

/** Writes each entry as a `raw_input_contents` field at `offset`; returns the offset after them. */
function writeRawInputContents(out: Buffer, offset: number, raw: readonly Uint8Array[]): number {
  for (const entry of raw) {
    out[offset++] = RAW_INPUT_CONTENTS_TAG;
    offset = writeVarint(out, offset, entry.byteLength);
    out.set(entry, offset);
    offset += entry.byteLength;
  }
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
  for (const entry of raw) size += delimitedSize(entry.byteLength);
  const out = Buffer.allocUnsafe(size);
  out.set(head, 0);
  writeRawInputContents(out, head.byteLength, raw);
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

/** True when `parameters` is absent or has no enumerable keys. */
function noParameters(parameters: object | undefined): boolean {
  if (parameters === undefined) return true;

  for (const _ in parameters) return false;
  return true;
}

/** Bytes of a string field's value (UTF-8, as protobuf-es's `TextEncoder`); ASCII counted here. */
function utf8Size(s: string): number {
  const n = s.length;
  for (let i = 0; i < n; i++) if (s.charCodeAt(i) > 0x7f) return Buffer.byteLength(s, 'utf8');
  return n;
}

/** Writes a string field (skipped when empty, as proto3 does) with a one-byte tag. */
function writeString(out: Buffer, offset: number, tag: number, s: string, size: number): number {
  if (size === 0) return offset;
  out[offset++] = tag;
  offset = writeVarint(out, offset, size);
  // ASCII (one byte per code unit) is copied here; short strings cost less than a native call.
  if (size === s.length) {
    for (let i = 0; i < size; i++) out[offset + i] = s.charCodeAt(i);
    return offset + size;
  }
  return offset + out.write(s, offset, size, 'utf8');
}

/** The request parameter a stream request gets with `enableEmptyFinalResponse`. */
const EMPTY_FINAL_RESPONSE_KEY = 'triton_enable_empty_final_response';
/**
 * Its map entry: key (field 1), value `InferParameter { bool_param: true }` (field 2), as
 * `toBinary` writes it.
 */
const EMPTY_FINAL_RESPONSE_ENTRY: Buffer = (() => {
  const key = Buffer.from(EMPTY_FINAL_RESPONSE_KEY, 'utf8');
  const value = Buffer.from([0x08, 0x01]);
  return Buffer.concat([
    Buffer.from([0x0a, key.byteLength]),
    key,
    Buffer.from([0x12, value.byteLength]),
    value,
  ]);
})();

/**
 * Whether {@link encodeInferCall} can write `call` itself: every input raw, in memory, without
 * parameters, with non-negative integer dimensions; no sequence, priority, timeout or custom
 * parameters; requested outputs by name only. The request id and version may be anything.
 */
export function isCommonInferCall(call: GrpcInferCall): boolean {
  const options = call.request ?? {};
  const { sequenceId, priority } = options;
  if (sequenceId !== undefined && sequenceId !== 0 && sequenceId !== 0n && sequenceId !== '') return false;
  if (priority !== undefined && priority !== 0 && priority !== 0n) return false;
  if (options.timeout !== undefined || !noParameters(options.parameters)) return false;
  const defaultRaw = options.binaryData ?? true;
  for (const input of call.inputs) {
    if (input.sharedMemory !== undefined || input.data === undefined || !noParameters(input.parameters)) {
      return false;
    }
    if (!(input.binaryData ?? defaultRaw)) return false;
    for (const d of input.shape) if (!Number.isSafeInteger(d) || d < 0) return false;
  }
  for (const output of options.outputs ?? []) {
    if (output.sharedMemory !== undefined || !noParameters(output.parameters)) return false;
    if (output.classCount !== undefined && output.classCount !== 0) return false;
  }
  return true;
}

/**
 * Encodes the `ModelInferRequest` of a client call — the bytes of
 * `encodeModelInferRequest(toModelInferRequest(call))`, with `triton_enable_empty_final_response`
 * (bool true) among the request parameters when `enableEmptyFinalResponse` — writing the common
 * call (raw inputs in memory, no parameters; see the module's description) straight into one Buffer
 * of the exact size without protobuf-es messages, and any other call through
 * {@link toModelInferRequest}. Input checks and their errors are those of `toModelInferRequest`.
 * @param allocate - where the common call's bytes are written (e.g. a `BufferPool`'s `take`); the
 * other calls get a buffer of their own from protobuf-es.
 * @throws ProtocolError as `toModelInferRequest`.
 */
export function encodeInferCall(
  call: GrpcInferCall,
  enableEmptyFinalResponse = false,
  allocate: (size: number) => Buffer = (size) => Buffer.allocUnsafe(size),
): Buffer {
  if (!isCommonInferCall(call)) {
    const request = toModelInferRequest(call);
    if (enableEmptyFinalResponse) {
      request.parameters[EMPTY_FINAL_RESPONSE_KEY] = create(InferParameterSchema, {
        parameterChoice: { case: 'boolParam', value: true },
      });
    }
    return encodeModelInferRequest(request);
  }
  const options = call.request ?? {};
  const inputs = call.inputs;
  const n = inputs.length;
  // The checks toModelInferRequest makes of raw inputs, in its order.
  const raw: Uint8Array[] = new Array<Uint8Array>(n);
  for (let i = 0; i < n; i++) {
    const input = inputs[i] as GrpcInferCall['inputs'][number];
    const data = toTensorData(input.datatype, input.data as NonNullable<typeof input.data>);
    const expected = elementCount(input.shape);
    if (data.length !== expected) {
      throw new ProtocolError(
        'ELEMENT_COUNT_MISMATCH',
        `input '${input.name}' has ${data.length} elements but shape [${input.shape.join(',')}] expects ${expected}`,
      );
    }
    raw[i] = tensorDataToBytes(input.datatype, data);
  }
  const modelName = call.modelName;
  const modelVersion = call.modelVersion ?? '';
  const id = options.requestId ?? '';
  const outputs = options.outputs ?? [];
  const modelNameSize = utf8Size(modelName);
  const modelVersionSize = utf8Size(modelVersion);
  const idSize = utf8Size(id);
  let size = 0;
  if (modelNameSize > 0) size += delimitedSize(modelNameSize);
  if (modelVersionSize > 0) size += delimitedSize(modelVersionSize);
  if (idSize > 0) size += delimitedSize(idSize);
  if (enableEmptyFinalResponse) size += delimitedSize(EMPTY_FINAL_RESPONSE_ENTRY.byteLength);
  // Per input: name, datatype, packed shape.
  const inputSizes = new Array<number>(n * 4);
  for (let i = 0; i < n; i++) {
    const input = inputs[i] as GrpcInferCall['inputs'][number];
    const nameSize = utf8Size(input.name);
    const datatypeSize = utf8Size(input.datatype);
    let shapeSize = 0;
    for (const d of input.shape) shapeSize += varintSize(d);
    let body = 0;
    if (nameSize > 0) body += delimitedSize(nameSize);
    if (datatypeSize > 0) body += delimitedSize(datatypeSize);
    if (shapeSize > 0) body += delimitedSize(shapeSize);
    inputSizes[i * 4] = nameSize;
    inputSizes[i * 4 + 1] = datatypeSize;
    inputSizes[i * 4 + 2] = shapeSize;
    inputSizes[i * 4 + 3] = body;
    size += delimitedSize(body);
  }
  const outputSizes = new Array<number>(outputs.length);
  for (let i = 0; i < outputs.length; i++) {
    const nameSize = utf8Size((outputs[i] as (typeof outputs)[number]).name);
    outputSizes[i] = nameSize;
    size += delimitedSize(nameSize > 0 ? delimitedSize(nameSize) : 0);
  }
  for (const entry of raw) size += delimitedSize(entry.byteLength);

  const out = allocate(size);
  let offset = writeString(out, 0, 0x0a, modelName, modelNameSize);
  offset = writeString(out, offset, 0x12, modelVersion, modelVersionSize);
  offset = writeString(out, offset, 0x1a, id, idSize);
  if (enableEmptyFinalResponse) {
    out[offset++] = 0x22;
    offset = writeVarint(out, offset, EMPTY_FINAL_RESPONSE_ENTRY.byteLength);
    offset += EMPTY_FINAL_RESPONSE_ENTRY.copy(out, offset);
  }
  for (let i = 0; i < n; i++) {
    const input = inputs[i] as GrpcInferCall['inputs'][number];
    out[offset++] = 0x2a;
    offset = writeVarint(out, offset, inputSizes[i * 4 + 3] as number);
    offset = writeString(out, offset, 0x0a, input.name, inputSizes[i * 4] as number);
    offset = writeString(out, offset, 0x12, input.datatype, inputSizes[i * 4 + 1] as number);
    const shapeSize = inputSizes[i * 4 + 2] as number;
    if (shapeSize > 0) {
      out[offset++] = 0x1a;
      offset = writeVarint(out, offset, shapeSize);
      for (const d of input.shape) offset = writeVarint(out, offset, d);
    }
  }
  for (let i = 0; i < outputs.length; i++) {
    const nameSize = outputSizes[i] as number;
    out[offset++] = 0x32;
    if (nameSize === 0) {
      out[offset++] = 0;
      continue;
    }
    offset = writeVarint(out, offset, delimitedSize(nameSize));
    offset = writeString(out, offset, 0x0a, (outputs[i] as (typeof outputs)[number]).name, nameSize);
  }
  writeRawInputContents(out, offset, raw);
  return out;
}
