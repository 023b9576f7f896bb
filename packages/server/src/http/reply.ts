/**
 * What an HTTP endpoint answers, the front end's options, and the JSON, empty and error replies
 * shared by the request listener, the endpoints and the infer adapter.
 * @packageDocumentation
 */
import { stringifyJson } from '@tritonserver-ts/protocol/http';

import { capErrorMessage } from '../common/echo.js';
import { toServerError } from '../common/errors.js';
import { TooManyChunksError, UnsupportedEncodingError } from './body.js';
import type { BodyPool } from './body-pool.js';
import { BODY_BUDGET_RETRY_AFTER_SECS, BodyBudgetExceededError, type MemoryBudget } from './memory-budget.js';
import type { OffThreadJsonDecoder } from './json-decoder.js';
import type { ResponseStream, ResponseWriter } from './response-writer.js';
import type { Restrictions } from './restricted-api.js';
import { httpStatusForKind } from './status.js';

/** What a handler answers. */
export interface HttpReply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string | number>>;
  /** Absent = empty body. */
  readonly body?: Uint8Array | string;
  /**
   * A body written as it is produced (`generate_stream`'s events): the listener writes the status
   * and headers (no `Content-Length`: chunked), then hands the response's stream to it.
   */
  readonly stream?: StreamedBody;
}

/** A reply body produced over time (see {@link HttpReply.stream}). */
export interface StreamedBody {
  /**
   * Pushes the body's chunks to `out` as they come (those produced before it was attached first);
   * resolves once the last one was pushed, or once `out` took no more (its connection gone).
   */
  pipe(out: ResponseStream): Promise<void>;
}

/** Options of the HTTP front end. */
export interface HttpFrontEndOptions {
  /** Largest accepted request body in bytes (also the largest decompressed body). */
  readonly maxInputSize: number;
  /** Request bodies (and their decompressed form) in flight across all connections; none = unbounded. */
  readonly bodyBudget?: MemoryBudget;
  /** Reusable buffers for binary infer bodies (none = a fresh buffer per body). */
  readonly bodyPool?: BodyPool;
  /** Writes response bodies with backpressure, the send timeout and the per-connection output cap. */
  readonly responseWriter?: ResponseWriter;
  /** `--http-restricted-api`: categories that require a header. */
  readonly restrictions?: Restrictions;
  /** Decodes large JSON infer bodies off the event loop (else every body is decoded inline). */
  readonly jsonDecoder?: OffThreadJsonDecoder;
  /** `--http-header-forward-pattern`: matching request headers become string request parameters. */
  readonly headerForwardPattern?: RegExp;
}

const JSON_TYPE = 'application/json';

/** A JSON reply; a string value is sent as it is (already JSON text). */
export function json(status: number, value: unknown): HttpReply {
  return {
    status,
    headers: { 'Content-Type': JSON_TYPE },
    body: typeof value === 'string' ? value : stringifyJson(value),
  };
}

/** A reply without a body. */
export function empty(status = 200): HttpReply {
  return { status };
}

/** `{"error": message}` with the status Triton uses for the error kind; the message capped (`core/echo.ts`). */
export function errorReply(error: unknown): HttpReply {
  const e = toServerError(error);
  const headers: Record<string, string> = { 'Content-Type': JSON_TYPE };
  let status = httpStatusForKind(e.kind);
  if (e instanceof UnsupportedEncodingError) {
    status = 415;
    headers['Accept-Encoding'] = 'gzip, deflate';
  }
  if (e instanceof BodyBudgetExceededError) headers['Retry-After'] = String(BODY_BUDGET_RETRY_AFTER_SECS);
  // As Triton: keep-alive is cleared and the rest of the body is not read.
  if (e instanceof TooManyChunksError) headers.Connection = 'close';
  return { status, headers, body: JSON.stringify({ error: capErrorMessage(e.message) }) };
}
