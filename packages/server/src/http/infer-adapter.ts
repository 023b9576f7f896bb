/**
 * The infer adapter between the HTTP wire and the core: an infer body (after its content coding)
 * decoded by the shared codec into the protocol's request, handed to the core as its
 * {@link CoreInferRequest}; a {@link CoreInferResponse} encoded as JSON (+ binary tensors) and
 * compressed as the client accepts.
 * @packageDocumentation
 */
import type { IncomingHttpHeaders } from 'node:http';

import {
  INFERENCE_HEADER_CONTENT_LENGTH,
  contentTypeFor,
  decodeInferRequest,
  encodeInferResponse,
  outputWantsBinary,
  type DecodedInferRequest,
  type RawInferRequest,
} from '@tritonserver-ts/protocol/http';
import type { ResponseOutput } from '@tritonserver-ts/protocol';
import {
  compressBody,
  negotiateContentEncoding,
  tensorDataToBytes,
  type Parameters,
} from '@tritonserver-ts/protocol';

import { toServerError } from '../common/errors.js';
import type { CoreInferOutput, CoreInferRequest, CoreInferResponse } from '../common/types.js';
import { refuseDecoupled } from '../core/infer.js';
import type { ServingVersion } from '../core/model-manager.js';
import { checkContentEncoding, decompressRequestBody } from './body.js';
import type { Reservation } from './memory-budget.js';
import type { HttpFrontEndOptions, HttpReply } from './reply.js';
import { rawRequestInput } from './raw-request.js';
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
      return decodeInferRequest(raw, header, { modelName, packBytes: true });
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
      : decodeInferRequest(body, header, { modelName, packBytes: true });
  } catch (error) {
    throw toServerError(error);
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The request parameters without the HTTP front end's own (`binary_data_output`, which only shapes
 * the response): as in Triton, a model never sees it among its request's parameters.
 */
function withoutTransportParameters<P extends Readonly<Record<string, unknown>>>(parameters: P): P {
  if (!('binary_data_output' in parameters)) return parameters;
  const { binary_data_output: _transport, ...rest } = parameters;
  return rest as unknown as P;
}

/**
 * The core's request of a decoded body, for the model the route resolved to: the codec's inputs and
 * requested outputs are the protocol's (handed over as they are); a raw binary request's single
 * input is deduced from the model's config here, at the edge (Triton's raw-input rules and messages).
 * @throws ServerError (UNSUPPORTED) for a raw request to a decoupled model (the core's first check),
 *   (INVALID_ARG) when the raw input cannot be deduced or the body does not fit it
 */
export function toCoreRequest(
  route: Extract<Route, { kind: 'model' }>,
  decoded: HttpInferRequest,
  model: ServingVersion,
  signal: AbortSignal,
): CoreInferRequest {
  const request: Mutable<CoreInferRequest> = { modelName: route.name, inputs: [], signal };
  if (route.version !== undefined) request.modelVersion = route.version;
  if (decoded.kind === 'raw') {
    const config = model.definition.config;
    // The core refuses a decoupled model before it reads any input: so does the raw request.
    refuseDecoupled(config);
    request.inputs = [rawRequestInput(config, decoded.data)];
    return request;
  }
  if (decoded.id !== undefined) request.id = decoded.id;
  request.parameters = withoutTransportParameters(decoded.parameters);
  request.inputs = decoded.inputs;
  if (decoded.outputs !== undefined) request.outputs = decoded.outputs;
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
  let binaryOnly =
    (response.id === undefined || response.id === '') &&
    response.parameters === undefined &&
    response.outputs.length > 0;
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
 * UTF-8 copy and concatenation; the header's bytes are reused while a model's responses repeat it.
 */
function encodeBinaryResponse(response: CoreInferResponse): { body: Uint8Array; headerLength: number } {
  const outputs = response.outputs;
  const tails = new Array<Uint8Array>(outputs.length);
  let tailBytes = 0;
  for (let i = 0; i < tails.length; i++) {
    const t = (outputs[i] as CoreInferOutput).tensor;
    const raw = tensorDataToBytes(t.datatype, t.data);
    tails[i] = raw;
    tailBytes += raw.byteLength;
  }
  const header = binaryHeader(response, tails);
  const body = Buffer.allocUnsafe(header.byteLength + tailBytes);
  body.set(header, 0);
  let at = header.byteLength;
  for (const raw of tails) {
    body.set(raw, at);
    at += raw.byteLength;
  }
  return { body, headerLength: header.byteLength };
}

/** The last binary-only header of a model, and what it was written from. */
interface CachedHeader {
  readonly modelVersion: string;
  readonly names: readonly string[];
  readonly datatypes: readonly string[];
  readonly shapes: readonly (readonly number[])[];
  readonly sizes: readonly number[];
  readonly bytes: Buffer;
}

/** By model name; a model's responses usually repeat their header (same outputs, shapes, sizes). */
const cachedHeaders = new Map<string, CachedHeader>();
const CACHED_HEADERS_MAX = 256;

function sameHeader(c: CachedHeader, response: CoreInferResponse, tails: readonly Uint8Array[]): boolean {
  if (c.modelVersion !== response.modelVersion || c.names.length !== tails.length) return false;
  for (let i = 0; i < tails.length; i++) {
    const t = (response.outputs[i] as CoreInferOutput).tensor;
    const shape = c.shapes[i] as readonly number[];
    if (
      c.names[i] !== t.name ||
      c.datatypes[i] !== t.datatype ||
      c.sizes[i] !== (tails[i] as Uint8Array).byteLength ||
      shape.length !== t.shape.length
    )
      return false;
    for (let d = 0; d < shape.length; d++) if (shape[d] !== t.shape[d]) return false;
  }
  return true;
}

/** The JSON header of a binary-only response as UTF-8, from the model's cache when it repeats. */
function binaryHeader(response: CoreInferResponse, tails: readonly Uint8Array[]): Buffer {
  const cached = cachedHeaders.get(response.modelName);
  if (cached !== undefined && sameHeader(cached, response, tails)) return cached.bytes;
  let header = `{"model_name":${JSON.stringify(response.modelName)},"model_version":${JSON.stringify(response.modelVersion)},"outputs":[`;
  for (let i = 0; i < tails.length; i++) {
    const t = (response.outputs[i] as CoreInferOutput).tensor;
    header += `${i > 0 ? ',' : ''}{"name":${JSON.stringify(t.name)},"datatype":${JSON.stringify(t.datatype)},"shape":[${t.shape.join(',')}],"parameters":{"binary_data_size":${(tails[i] as Uint8Array).byteLength}}}`;
  }
  header += ']}';
  const bytes = Buffer.from(header, 'utf8');
  if (cachedHeaders.size >= CACHED_HEADERS_MAX && cached === undefined) cachedHeaders.clear();
  cachedHeaders.set(response.modelName, {
    modelVersion: response.modelVersion,
    names: response.outputs.map((o) => o.tensor.name),
    datatypes: response.outputs.map((o) => o.tensor.datatype),
    shapes: response.outputs.map((o) => [...o.tensor.shape]),
    sizes: tails.map((t) => t.byteLength),
    bytes,
  });
  return bytes;
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
    ...(response.parameters !== undefined ? { parameters: { ...response.parameters } } : {}),
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
