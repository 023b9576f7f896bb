/**
 * One error hierarchy for every transport. Match on `instanceof` or on the stable `code`.
 * @packageDocumentation
 */
import { ProtocolError, type ProtocolErrorCode } from './protocol/errors.js';

/** Stable codes of {@link TritonError}. */
export type TritonErrorCode =
  'SERVER_ERROR' | 'CONNECTION_ERROR' | 'TIMEOUT' | 'ABORTED' | 'PROTOCOL_ERROR' | 'INVALID_ARGUMENT';

/** The transport a failure happened on. */
export type TransportKind = 'http' | 'grpc';

/** Base class of every error the client throws. */
export class TritonError extends Error {
  /** Stable machine-readable reason. */
  readonly code: TritonErrorCode;

  constructor(code: TritonErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TritonError';
    this.code = code;
  }
}

/** The message the Python client reports when an error response has an empty body. */
export const EMPTY_RESPONSE_MESSAGE = 'client received an empty response from the server.';

/**
 * The server answered with an error. `message` is the server's `error` text verbatim (or
 * {@link EMPTY_RESPONSE_MESSAGE}, or the raw body when it was not JSON).
 */
export class TritonServerError extends TritonError {
  /** HTTP status code (for gRPC: the mapped HTTP equivalent). */
  readonly status: number;
  /** The raw response body text, for debugging. */
  readonly body: string;
  readonly transport: TransportKind;
  /** The server's `Retry-After`, in ms, when it sent one. */
  readonly retryAfterMs: number | undefined;

  constructor(
    status: number,
    message: string,
    options: { body: string; transport: TransportKind; retryAfterMs?: number; cause?: unknown },
  ) {
    super('SERVER_ERROR', message, options);
    this.name = 'TritonServerError';
    this.status = status;
    this.body = options.body;
    this.transport = options.transport;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** The server could not be reached, or the connection broke before a full response arrived. */
export class TritonConnectionError extends TritonError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('CONNECTION_ERROR', message, options);
    this.name = 'TritonConnectionError';
  }
}

/** The call did not finish within `timeoutMs`. */
export class TritonTimeoutError extends TritonError {
  /** The timeout that expired. */
  readonly timeoutMs: number;

  constructor(timeoutMs: number, options?: { cause?: unknown }) {
    super('TIMEOUT', `request timed out after ${timeoutMs} ms`, options);
    this.name = 'TritonTimeoutError';
    this.timeoutMs = timeoutMs;
  }
}

/** The caller aborted the call through its `AbortSignal`. Never retried. */
export class TritonAbortError extends TritonError {
  constructor(options?: { cause?: unknown }) {
    super('ABORTED', 'request was aborted', options);
    this.name = 'TritonAbortError';
  }
}

/** The server's response did not follow the protocol (bad JSON, sizes, datatypes, …). */
export class TritonProtocolError extends TritonError {
  /** The codec's reason, when the codec detected the problem. */
  readonly protocolCode: ProtocolErrorCode | undefined;

  constructor(message: string, options?: { cause?: unknown; protocolCode?: ProtocolErrorCode }) {
    super('PROTOCOL_ERROR', message, options);
    this.name = 'TritonProtocolError';
    this.protocolCode = options?.protocolCode;
  }
}

/** The call's arguments were refused before anything was sent. */
export class TritonInvalidArgumentError extends TritonError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('INVALID_ARGUMENT', message, options);
    this.name = 'TritonInvalidArgumentError';
  }
}

/** Wraps a codec error raised while encoding caller input. */
export function invalidArgument(error: unknown): TritonError {
  if (error instanceof TritonError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new TritonInvalidArgumentError(message, { cause: error });
}

/** Wraps a codec error raised while decoding a server response. */
export function protocolFailure(error: unknown): TritonError {
  if (error instanceof TritonError) return error;
  if (error instanceof ProtocolError) {
    return new TritonProtocolError(error.message, { cause: error, protocolCode: error.code });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new TritonProtocolError(message, { cause: error });
}
