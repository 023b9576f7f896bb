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
  type DecodedInferRequest,
  type Parameters,
  type RawInferRequest,
  type ResponseOutput,
} from '@tritonserver-ts/client/protocol';

import { toServerError } from '../core/errors.js';
import type { CoreInferRequest, CoreInferResponse } from '../core/types.js';
import { checkContentEncoding, decompressRequestBody } from './body.js';
import type { Reservation } from './memory-budget.js';
import type { HttpFrontEndOptions, HttpReply } from './reply.js';
import type { Route } from './router.js';

/** An infer body as the codec decodes it: a JSON request (with binary tensors) or a raw one. */
export type HttpInferRequest = DecodedInferRequest | RawInferRequest;

/**
 * Undoes the body's `Content-Encoding` (within `maxInputSize`) and decodes it with the shared codec
 * (off the event loop when a JSON decoder is configured). Codec errors become `ServerError`s.
 */
export async function decodeHttpInferRequest(
  modelName: string,
  headers: IncomingHttpHeaders,
  raw: Buffer,
  options: HttpFrontEndOptions,
  reservation?: Reservation,
): Promise<HttpInferRequest> {
  const encoding = checkContentEncoding(headers['content-encoding']);
  const body = await decompressRequestBody(raw, encoding, options.maxInputSize, reservation);
  try {
    const header = headers[INFERENCE_HEADER_CONTENT_LENGTH] ?? null;
    return options.jsonDecoder !== undefined
      ? await options.jsonDecoder.decode(body, header, modelName)
      : decodeInferRequest(body, header, { modelName });
  } catch (error) {
    throw toServerError(error);
  }
}

/** Maps the codec's decoded request onto the core's request. */
export function toCoreRequest(
  route: Extract<Route, { kind: 'model' }>,
  decoded: HttpInferRequest,
  signal: AbortSignal,
): CoreInferRequest {
  const base = {
    modelName: route.name,
    ...(route.version !== undefined ? { modelVersion: route.version } : {}),
    signal,
  };
  if (decoded.kind === 'raw') return { ...base, inputs: [], rawInput: decoded.data };
  return {
    ...base,
    ...(decoded.id !== undefined ? { id: decoded.id } : {}),
    parameters: decoded.parameters,
    inputs: decoded.inputs.map((i) => {
      const shm = i.sharedMemory;
      return {
        name: i.name,
        datatype: i.datatype,
        shape: i.shape,
        ...(i.data !== undefined ? { data: i.data } : {}),
        ...(shm !== undefined ? { sharedMemory: shm } : {}),
        parameters: i.parameters,
      };
    }),
    ...(decoded.outputs !== undefined
      ? {
          outputs: decoded.outputs.map((o) => {
            const shm = o.sharedMemory;
            return {
              name: o.name,
              ...(o.classCount !== undefined ? { classification: o.classCount } : {}),
              ...(shm !== undefined ? { sharedMemory: shm } : {}),
              parameters: o.parameters,
            };
          }),
        }
      : {}),
  };
}

/**
 * Encodes the core's response as the request asked (binary or JSON data per output; outputs in
 * shared memory carry only their region parameters) and compresses it as `Accept-Encoding` allows.
 */
export async function toInferReply(
  response: CoreInferResponse,
  decoded: HttpInferRequest,
  acceptEncoding: string | undefined,
): Promise<HttpReply> {
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
  let encoded;
  try {
    encoded = encodeInferResponse({
      modelName: response.modelName,
      modelVersion: response.modelVersion,
      ...(response.id !== undefined ? { id: response.id } : {}),
      outputs,
    });
  } catch (error) {
    throw toServerError(error);
  }
  const headers: Record<string, string | number> = { 'Content-Type': contentTypeFor(encoded.headerLength) };
  if (encoded.headerLength !== undefined) headers['Inference-Header-Content-Length'] = encoded.headerLength;
  let out = encoded.body;
  const coding = negotiateContentEncoding(acceptEncoding);
  if (coding !== 'identity') {
    out = await compressBody(out, coding);
    headers['Content-Encoding'] = coding;
  }
  return { status: 200, headers, body: out };
}
