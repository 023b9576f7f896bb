/**
 * One error hierarchy for every transport. Match on `instanceof` or on the stable `code`.
 * @packageDocumentation
 */
import { ProtocolError, type ProtocolErrorCode, type TritonStatusKind } from '@tritonserver-ts/protocol';

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

/**
 * The kind of a server error, the same on every transport: Triton's status kinds
 * (`TRITONSERVER_Error_Code`). Over gRPC it is read from the status code (Triton sends
 * INVALID_ARGUMENT, NOT_FOUND, UNAVAILABLE, UNIMPLEMENTED, INTERNAL, ALREADY_EXISTS, CANCELLED,
 * UNKNOWN); over HTTP from the status (Triton's `HttpCodeFromError` reversed: 404 NOT_FOUND,
 * 503 UNAVAILABLE, 501 UNSUPPORTED, 500 INTERNAL, 400 INVALID_ARG — Triton also answers 400 for
 * UNKNOWN, ALREADY_EXISTS and CANCELLED, which HTTP cannot tell apart). Any other status or code,
 * and an in-band stream error (which carries no status), is `UNKNOWN`.
 */
export type TritonErrorReason = TritonStatusKind;

const HTTP_STATUS_REASON: Readonly<Record<number, TritonErrorReason>> = {
  400: 'INVALID_ARG',
  404: 'NOT_FOUND',
  500: 'INTERNAL',
  501: 'UNSUPPORTED',
  503: 'UNAVAILABLE',
};

const GRPC_CODE_REASON: Readonly<Record<number, TritonErrorReason>> = {
  1: 'CANCELLED',
  2: 'UNKNOWN',
  3: 'INVALID_ARG',
  5: 'NOT_FOUND',
  6: 'ALREADY_EXISTS',
  12: 'UNSUPPORTED', // UNIMPLEMENTED
  13: 'INTERNAL',
  14: 'UNAVAILABLE',
};

/** The {@link TritonErrorReason} of an HTTP error status. */
export function reasonForHttpStatus(status: number): TritonErrorReason {
  return HTTP_STATUS_REASON[status] ?? 'UNKNOWN';
}

/** The {@link TritonErrorReason} of a gRPC status code. */
export function reasonForGrpcCode(code: number): TritonErrorReason {
  return GRPC_CODE_REASON[code] ?? 'UNKNOWN';
}

/** The message the Python client reports when an error response has an empty body. */
export const EMPTY_RESPONSE_MESSAGE = 'client received an empty response from the server.';

/**
 * The server answered with an error. `message` is the server's `error` text verbatim (or
 * {@link EMPTY_RESPONSE_MESSAGE}, or the raw body when it was not JSON).
 */
export class TritonServerError extends TritonError {
  /** HTTP status code (for gRPC: the mapped HTTP equivalent, {@link httpStatusForGrpcCode}). */
  readonly status: number;
  /** The transport-neutral kind of the failure (see {@link TritonErrorReason}); switch on this. */
  readonly reason: TritonErrorReason;
  /** The raw response body text, for debugging. */
  readonly body: string;
  readonly transport: TransportKind;
  /** The server's `Retry-After`, in ms, when it sent one. */
  readonly retryAfterMs: number | undefined;

  constructor(
    status: number,
    message: string,
    options: {
      body: string;
      transport: TransportKind;
      retryAfterMs?: number;
      cause?: unknown;
      /** Default: {@link reasonForHttpStatus} of `status`. */
      reason?: TritonErrorReason;
    },
  ) {
    super('SERVER_ERROR', message, options);
    this.name = 'TritonServerError';
    this.status = status;
    this.reason = options.reason ?? reasonForHttpStatus(status);
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

/**
 * gRPC status codes (numbers) → the HTTP status Triton uses for the same failure, so one
 * `TritonServerError.status` (and one retry rule: 503) serves both transports. Triton maps
 * INTERNAL→500, NOT_FOUND→404, UNAVAILABLE→503, UNSUPPORTED/UNIMPLEMENTED→501, and
 * UNKNOWN, INVALID_ARGUMENT, ALREADY_EXISTS, CANCELLED→400.
 */
export const GRPC_STATUS_TO_HTTP: Readonly<Record<number, number>> = {
  0: 200, // OK
  1: 400, // CANCELLED
  2: 400, // UNKNOWN
  3: 400, // INVALID_ARGUMENT
  4: 504, // DEADLINE_EXCEEDED
  5: 404, // NOT_FOUND
  6: 400, // ALREADY_EXISTS
  7: 403, // PERMISSION_DENIED
  8: 429, // RESOURCE_EXHAUSTED
  9: 400, // FAILED_PRECONDITION
  10: 409, // ABORTED
  11: 400, // OUT_OF_RANGE
  12: 501, // UNIMPLEMENTED
  13: 500, // INTERNAL
  14: 503, // UNAVAILABLE
  15: 500, // DATA_LOSS
  16: 401, // UNAUTHENTICATED
};

/** The HTTP status equivalent of a gRPC status code (500 for unknown codes). */
export function httpStatusForGrpcCode(code: number): number {
  return GRPC_STATUS_TO_HTTP[code] ?? 500;
}
