/**
 * A hand-written decoder of `ModelInferResponse` (and `ModelStreamInferResponse`) for the client's
 * infer calls, reading the wire bytes straight into the fields the neutral response is built from,
 * without protobuf-es's message objects (`fromBinary` of a `simple` answer builds a dozen objects
 * and a bigint per shape dimension).
 *
 * It reads the common case only: ASCII strings, parameters of every kind but negative int64, outputs
 * without typed `contents`, unknown fields of wire types 0, 1, 2 and 5 (skipped as protobuf does).
 * Anything else — typed contents, non-ASCII text, varints of 10 bytes, groups, duplicate parameter
 * keys, a truncated or malformed message — is handed to protobuf-es (`decodeMessage`), so the result
 * or the error is the one protobuf-es gives. Raw contents are views into the received bytes, as
 * protobuf-es's `bytes` fields are.
 * @packageDocumentation
 */
import type { InferTensorContents } from './gen/grpc_service_pb.js';
import {
  ModelInferResponseSchema,
  ModelStreamInferResponseSchema,
  type ModelInferResponse,
  type ModelStreamInferResponse,
} from './gen/grpc_service_pb.js';
import type { ParameterValue, Parameters } from '../parameters.js';
import { decodeMessage } from './codec.js';
import { BAIL, WireReader } from './wire-reader.js';

/** One output of {@link InferResponseParts}. */
export interface InferOutputParts {
  readonly name: string;
  readonly datatype: string;
  /** The shape, each int64 dimension as `Number(d)`. */
  readonly shape: number[];
  readonly parameters: Parameters;
  /** Typed contents (only from protobuf-es messages: the hand-written decoder leaves them to it). */
  readonly contents: InferTensorContents | undefined;
}

/** The fields of a `ModelInferResponse` that the neutral response is built from. */
export class InferResponseParts {
  constructor(
    readonly modelName: string,
    readonly modelVersion: string,
    readonly id: string,
    readonly parameters: Parameters,
    readonly outputs: readonly InferOutputParts[],
    /** `raw_output_contents`, views into the received bytes. */
    readonly raw: readonly Uint8Array[],
  ) {}
}

/** A `ModelStreamInferResponse` read by the hand-written decoder. */
export class StreamResponseParts {
  constructor(
    readonly errorMessage: string,
    readonly response: InferResponseParts | undefined,
  ) {}
}

const scratch = new Float64Array(1);
const scratchBytes = new Uint8Array(scratch.buffer);

/** An `InferParameter` message body: its value, or `undefined` when no member is set. */
function readParameter(r: WireReader, end: number): ParameterValue | undefined {
  const buf = r.buf;
  let value: ParameterValue | undefined;
  while (r.pos < end) {
    const tag = r.tag();
    switch (tag) {
      case 0x08: // bool_param
        value = r.uint64() !== 0;
        break;
      case 0x10: // int64_param (negative ones are 10-byte varints: protobuf-es reads those)
      case 0x28: // uint64_param
        value = r.uint64();
        break;
      case 0x1a: // string_param
        value = r.ascii();
        break;
      case 0x21: {
        // double_param
        if (end - r.pos < 8) throw BAIL;
        for (let i = 0; i < 8; i++) scratchBytes[i] = buf[r.pos + i] as number;
        r.pos += 8;
        value = scratch[0];
        break;
      }
      default:
        // A known field with another wire type: protobuf-es's business.
        r.skipUnknown(tag, 5);
    }
  }
  if (r.pos !== end) throw BAIL;
  return value;
}

/** One entry of a `map<string, InferParameter>` field into `out`. */
function readParameterEntry(r: WireReader, out: Parameters, keys: string[]): void {
  const end = r.delimitedEnd();
  let key = '';
  let value: ParameterValue | undefined;
  let seenValue = false;
  while (r.pos < end) {
    const tag = r.tag();
    if (tag === 0x0a) key = r.ascii();
    else if (tag === 0x12) {
      // A second value in one entry merges into the first: left to protobuf-es.
      if (seenValue) throw BAIL;
      seenValue = true;
      const valueEnd = r.delimitedEnd();
      value = readParameter(r, valueEnd);
    } else r.skipUnknown(tag, 2);
  }
  if (r.pos !== end) throw BAIL;
  // A repeated key replaces the earlier entry in place; `__proto__` needs care: protobuf-es's.
  if (key === '__proto__' || keys.includes(key)) throw BAIL;
  keys.push(key);
  if (value !== undefined) out[key] = value;
}

/** The int64 varint dimensions of a `shape` field (packed, or one unpacked element) into `shape`. */
function readShape(r: WireReader, wireType: number, shape: number[]): void {
  if (wireType === 0) {
    shape.push(Number(r.uint64()));
    return;
  }
  const end = r.delimitedEnd();
  while (r.pos < end) shape.push(Number(r.uint64()));
  if (r.pos !== end) throw BAIL;
}

function readOutput(r: WireReader): InferOutputParts {
  const end = r.delimitedEnd();
  let name = '';
  let datatype = '';
  const shape: number[] = [];
  const parameters: Parameters = {};
  // The keys read so far (made on the first entry: most maps are empty).
  let keys: string[] | undefined;
  while (r.pos < end) {
    const tag = r.tag();
    switch (tag) {
      case 0x0a:
        name = r.ascii();
        break;
      case 0x12:
        datatype = r.ascii();
        break;
      case 0x18:
      case 0x1a:
        readShape(r, tag % 8, shape);
        break;
      case 0x22:
        keys ??= [];
        readParameterEntry(r, parameters, keys);
        break;
      default:
        // Typed contents (5), or a known field with another wire type.
        r.skipUnknown(tag, 5);
    }
  }
  if (r.pos !== end) throw BAIL;
  return { name, datatype, shape, parameters, contents: undefined };
}

function readResponse(r: WireReader, end: number): InferResponseParts {
  let modelName = '';
  let modelVersion = '';
  let id = '';
  const parameters: Parameters = {};
  // The keys read so far (made on the first entry: most maps are empty).
  let keys: string[] | undefined;
  const outputs: InferOutputParts[] = [];
  const raw: Uint8Array[] = [];
  while (r.pos < end) {
    const tag = r.tag();
    switch (tag) {
      case 0x0a:
        modelName = r.ascii();
        break;
      case 0x12:
        modelVersion = r.ascii();
        break;
      case 0x1a:
        id = r.ascii();
        break;
      case 0x22:
        keys ??= [];
        readParameterEntry(r, parameters, keys);
        break;
      case 0x2a:
        outputs.push(readOutput(r));
        break;
      case 0x32: {
        const len = r.length();
        raw.push(r.buf.subarray(r.pos, r.pos + len));
        r.pos += len;
        break;
      }
      default:
        r.skipUnknown(tag, 6);
    }
  }
  if (r.pos !== end) throw BAIL;
  return new InferResponseParts(modelName, modelVersion, id, parameters, outputs, raw);
}

/**
 * Reads a `ModelInferResponse` with the hand-written decoder, or with protobuf-es when the message
 * is not one it reads (see the module's description).
 * @throws ProtocolError `INVALID_FIELD` when protobuf-es cannot parse the bytes either.
 */
export function readModelInferResponse(bytes: Uint8Array): InferResponseParts | ModelInferResponse {
  try {
    return readResponse(new WireReader(bytes, 0, bytes.byteLength), bytes.byteLength);
  } catch (error) {
    if (error !== BAIL) throw error;
  }
  return decodeMessage(ModelInferResponseSchema, bytes);
}

/**
 * Reads a `ModelStreamInferResponse` (error message, response) like
 * {@link readModelInferResponse}.
 * @throws ProtocolError `INVALID_FIELD` when protobuf-es cannot parse the bytes either.
 */
export function readModelStreamInferResponse(
  bytes: Uint8Array,
): StreamResponseParts | ModelStreamInferResponse {
  try {
    const r = new WireReader(bytes, 0, bytes.byteLength);
    let errorMessage = '';
    let response: InferResponseParts | undefined;
    while (r.pos < r.end) {
      const tag = r.tag();
      if (tag === 0x0a) errorMessage = r.ascii();
      else if (tag === 0x12) {
        // A second infer_response merges into the first: left to protobuf-es.
        if (response !== undefined) throw BAIL;
        const end = r.delimitedEnd();
        response = readResponse(r, end);
      } else r.skipUnknown(tag, 2);
    }
    return new StreamResponseParts(errorMessage, response);
  } catch (error) {
    if (error !== BAIL) throw error;
  }
  return decodeMessage(ModelStreamInferResponseSchema, bytes);
}
