/**
 * The infer adapter between the HTTP wire and the core: an infer body (after its content coding)
 * decoded by the shared codec and mapped onto a {@link CoreInferRequest}; a {@link CoreInferResponse}
 * encoded as JSON (+ binary tensors) and compressed as the client accepts.
 * @packageDocumentation
 */
import type { IncomingHttpHeaders } from 'node:http';

import {
  INFERENCE_HEADER_CONTENT_LENGTH,
  compressBody,
  contentTypeFor,
  decodeInferRequest,
  encodeInferResponse,
  negotiateContentEncoding,
  outputWantsBinary,
  tensorDataToBytes,
  type DecodedInferRequest,
  type DecodedInput,
  type Parameters,
  type RawInferRequest,
  type ResponseOutput,
} from '@tritonserver-ts/client/protocol';

import { toServerError } from '../core/errors.js';
import type {
  CoreInferInput,
  CoreInferOutput,
  CoreInferRequest,
  CoreInferResponse,
  CoreRequestedOutput,
} from '../core/types.js';
import { checkContentEncoding, decompressRequestBody } from './body.js';
import type { Reservation } from './memory-budget.js';
import type { HttpFrontEndOptions, HttpReply } from './reply.js';
import type { Route } from './router.js';

/** An infer body as the codec decodes it: a JSON request (with binary tensors) or a raw one. */
export type HttpInferRequest = DecodedInferRequest | RawInferRequest;

/**
 * Undoes the body's `Content-Encoding` (within `maxInputSize`) and decodes it with the shared codec
 * (off the event loop when a JSON decoder is configured and the JSON part is large). Codec errors
 * become `ServerError`s. An uncompressed body decoded inline is returned as it is, not as a promise
 * (the usual small request: no extra turn of the microtask queue).
 */
export function decodeHttpInferRequest(
  modelName: string,
  headers: IncomingHttpHeaders,
  raw: Buffer,
  options: HttpFrontEndOptions,
  reservation?: Reservation,
): HttpInferRequest | Promise<HttpInferRequest> {
  const encoding = checkContentEncoding(headers['content-encoding']);
  const header = headers[INFERENCE_HEADER_CONTENT_LENGTH] ?? null;
  if (encoding === undefined && options.jsonDecoder?.goesOffThread(raw, header) !== true) {
    try {
      return decodeInferRequest(raw, header, { modelName });
    } catch (error) {
      throw toServerError(error);
    }
  }
  return decodeLater(modelName, header, raw, encoding, options, reservation);
}

async function decodeLater(
  modelName: string,
  header: string | readonly string[] | null,
  raw: Buffer,
  encoding: 'gzip' | 'deflate' | undefined,
  options: HttpFrontEndOptions,
  reservation: Reservation | undefined,
): Promise<HttpInferRequest> {
  const body = await decompressRequestBody(raw, encoding, options.maxInputSize, reservation);
  try {
    return options.jsonDecoder !== undefined
      ? await options.jsonDecoder.decode(body, header, modelName)
      : decodeInferRequest(body, header, { modelName });
  } catch (error) {
    throw toServerError(error);
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Maps the codec's decoded request onto the core's request (plain assignments: once per request). */
export function toCoreRequest(
  route: Extract<Route, { kind: 'model' }>,
  decoded: HttpInferRequest,
  signal: AbortSignal,
): CoreInferRequest {
  const request: Mutable<CoreInferRequest> = { modelName: route.name, inputs: [], signal };
  if (route.version !== undefined) request.modelVersion = route.version;
  if (decoded.kind === 'raw') {
    request.rawInput = decoded.data;
    return request;
  }
  if (decoded.id !== undefined) request.id = decoded.id;
  request.parameters = decoded.parameters;
  const inputs: CoreInferInput[] = new Array<CoreInferInput>(decoded.inputs.length);
  for (let k = 0; k < inputs.length; k++) {
    const i = decoded.inputs[k] as DecodedInput;
    const input: Mutable<CoreInferInput> = {
      name: i.name,
      datatype: i.datatype,
      shape: i.shape,
      parameters: i.parameters,
    };
    if (i.data !== undefined) input.data = i.data;
    if (i.sharedMemory !== undefined) input.sharedMemory = i.sharedMemory;
    inputs[k] = input;
  }
  request.inputs = inputs;
  if (decoded.outputs !== undefined) {
    request.outputs = decoded.outputs.map((o) => {
      const output: Mutable<CoreRequestedOutput> = { name: o.name, parameters: o.parameters };
      if (o.classCount !== undefined) output.classification = o.classCount;
      if (o.sharedMemory !== undefined) output.sharedMemory = o.sharedMemory;
      return output;
    });
  }
  return request;
}

/**
 * Encodes the core's response as the request asked (binary or JSON data per output; outputs in
 * shared memory carry only their region parameters) and compresses it as `Accept-Encoding` allows.
 * An uncompressed reply is returned as it is, not as a promise.
 */
export function toInferReply(
  response: CoreInferResponse,
  decoded: HttpInferRequest,
  acceptEncoding: string | undefined,
): HttpReply | Promise<HttpReply> {
  let binaryOnly = (response.id === undefined || response.id === '') && response.outputs.length > 0;
  for (let i = 0; binaryOnly && i < response.outputs.length; i++) {
    const o = response.outputs[i] as CoreInferOutput;
    binaryOnly = o.sharedMemory === undefined && outputWantsBinary(decoded, o.name);
  }
  let encoded: { body: Uint8Array; headerLength: number | undefined };
  try {
    encoded = binaryOnly ? encodeBinaryResponse(response) : encodeResponse(response, decoded);
  } catch (error) {
    throw toServerError(error);
  }
  const headers: Record<string, string | number> = { 'Content-Type': contentTypeFor(encoded.headerLength) };
  if (encoded.headerLength !== undefined) headers['Inference-Header-Content-Length'] = encoded.headerLength;
  const coding = negotiateContentEncoding(acceptEncoding);
  if (coding === 'identity') return { status: 200, headers, body: encoded.body };
  return compressReply(encoded.body, coding, headers);
}

/**
 * The body of a response without an id whose outputs all go in the binary tail (the usual binary
 * request): the bytes `encodeInferResponse` writes for it (same members, same order), written
 * directly into one buffer with the tail instead of through its intermediate objects, JSON text,
 * UTF-8 copy and concatenation.
 */
function encodeBinaryResponse(response: CoreInferResponse): { body: Uint8Array; headerLength: number } {
  let header = `{"model_name":${JSON.stringify(response.modelName)},"model_version":${JSON.stringify(response.modelVersion)},"outputs":[`;
  const tails = new Array<Uint8Array>(response.outputs.length);
  let tailBytes = 0;
  for (let i = 0; i < tails.length; i++) {
    const t = (response.outputs[i] as CoreInferOutput).tensor;
    const raw = tensorDataToBytes(t.datatype, t.data);
    tails[i] = raw;
    tailBytes += raw.byteLength;
    header += `${i > 0 ? ',' : ''}{"name":${JSON.stringify(t.name)},"datatype":${JSON.stringify(t.datatype)},"shape":[${t.shape.join(',')}],"parameters":{"binary_data_size":${raw.byteLength}}}`;
  }
  header += ']}';
  const headerLength = Buffer.byteLength(header);
  const body = Buffer.allocUnsafe(headerLength + tailBytes);
  body.write(header, 0, 'utf8');
  let at = headerLength;
  for (const raw of tails) {
    body.set(raw, at);
    at += raw.byteLength;
  }
  return { body, headerLength };
}

/** Any other response, through the codec. */
function encodeResponse(
  response: CoreInferResponse,
  decoded: HttpInferRequest,
): { body: Uint8Array; headerLength: number | undefined } {
  const outputs: ResponseOutput[] = response.outputs.map((o) => {
    if (o.sharedMemory !== undefined) {
      const parameters: Parameters = {
        shared_memory_region: o.sharedMemory.region,
        shared_memory_byte_size: o.sharedMemory.byteSize,
      };
      const offset = o.sharedMemory.offset ?? 0;
      if (BigInt(offset) !== 0n) parameters.shared_memory_offset = offset;
      return { tensor: o.tensor, binary: false, omitData: true, parameters };
    }
    return { tensor: o.tensor, binary: outputWantsBinary(decoded, o.name) };
  });
  return encodeInferResponse({
    modelName: response.modelName,
    modelVersion: response.modelVersion,
    ...(response.id !== undefined ? { id: response.id } : {}),
    outputs,
  });
}

async function compressReply(
  body: Uint8Array,
  coding: Exclude<ReturnType<typeof negotiateContentEncoding>, 'identity'>,
  headers: Record<string, string | number>,
): Promise<HttpReply> {
  const out = await compressBody(body, coding);
  headers['Content-Encoding'] = coding;
  return { status: 200, headers, body: out };
}
