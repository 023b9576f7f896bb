/**
 * The generate extension on the client side: call options, the request body, and the events of a
 * `generate_stream` body read into responses (an in-band `{"error": …}` thrown as
 * `TritonServerError`).
 * @packageDocumentation
 */
import type { GenerateCall } from './api-types.js';
import { TritonServerError, invalidArgument, protocolFailure, type TransportKind } from './errors.js';
import type { CallOptions } from './options.js';
import {
  decodeGenerateEvent,
  encodeGenerateRequest,
  type GenerateRequestValue,
  type GenerateResponse,
} from '@tritonserver-ts/protocol/http';
import { readServerSentEvents } from '@tritonserver-ts/protocol/sse';

export type { GenerateRequestValue, GenerateResponse } from '@tritonserver-ts/protocol/http';

/** The inputs of a generate request: input name → value (a JSON value or a typed array). */
export type GenerateInputs = Readonly<Record<string, GenerateRequestValue>>;

/** Options of `TritonClient.generate` and `generateStream`. */
export interface GenerateOptions extends CallOptions {
  /** Model version (default: the server's choice by version policy). */
  readonly modelVersion?: string | number;
  /** The request id (`id`), echoed in each response. */
  readonly requestId?: string;
  /**
   * Request parameters (the body's `parameters` object). A member named like one of the model's
   * inputs is that input, as Triton maps it.
   */
  readonly parameters?: Readonly<Record<string, GenerateRequestValue>>;
  /**
   * Retry on connection errors / 503 (default `false`, as `infer`: generation may not be
   * idempotent). A stream is only retried before its first event.
   */
  readonly retry?: boolean;
}

/**
 * The transport's view of a generate call.
 * @throws TritonInvalidArgumentError when an input is named `id` or `parameters`.
 */
export function generateCallOf(
  modelName: string,
  inputs: GenerateInputs,
  options: GenerateOptions,
): GenerateCall {
  let body: string;
  try {
    body = encodeGenerateRequest(inputs, {
      ...(options.requestId === undefined ? {} : { id: options.requestId }),
      ...(options.parameters === undefined ? {} : { parameters: options.parameters }),
    });
  } catch (error) {
    throw invalidArgument(error);
  }
  const version = options.modelVersion;
  return { modelName, modelVersion: version === undefined ? '' : String(version), body };
}

/**
 * An error the server sent as a generate response (in a stream, after its first event). It
 * carries no status: status 400 and reason `UNKNOWN`, as an in-band error of the gRPC stream.
 */
export function inBandGenerateError(message: string, transport: TransportKind): TritonServerError {
  return new TritonServerError(400, message, { body: message, transport, reason: 'UNKNOWN' });
}

/**
 * The responses of a `generate_stream` body, one per Server-Sent Event. An `{"error": …}` event is
 * thrown as {@link TritonServerError}; an event that is not a generate response as
 * `TritonProtocolError`.
 */
export async function* generateResponses(
  body: AsyncIterable<Uint8Array>,
  transport: TransportKind,
): AsyncGenerator<GenerateResponse, void, undefined> {
  for await (const event of readServerSentEvents(body)) {
    let decoded;
    try {
      decoded = decodeGenerateEvent(event.data);
    } catch (error) {
      throw protocolFailure(error);
    }
    if (decoded.kind === 'error') throw inBandGenerateError(decoded.message, transport);
    yield decoded.response;
  }
}
