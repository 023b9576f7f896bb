/**
 * The core's one error type. Every failure the core reports carries a Triton status kind; each front
 * end owns the table that maps kinds to its wire's status (`http/status.ts`, `grpc/status.ts`).
 * @packageDocumentation
 */

import type { TritonStatusKind } from '@tritonserver-ts/protocol';

/**
 * Triton's status codes (`TRITONSERVER_Error_Code`): the codec's {@link TritonStatusKind}, the same
 * kinds the client reports as `TritonServerError.reason`.
 */
export type ServerErrorKind = TritonStatusKind;

/**
 * A request the server refuses or could not serve. `message` is the exact text a client receives in
 * `{"error": message}` (HTTP) or the status details (gRPC); `kind` decides the status code.
 */
export class ServerError extends Error {
  /** Triton status kind; also the stable machine-readable code. */
  readonly kind: ServerErrorKind;

  constructor(kind: ServerErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServerError';
    this.kind = kind;
  }

  /** Alias of {@link ServerError.kind} for code that matches on `code`. */
  get code(): ServerErrorKind {
    return this.kind;
  }
}

/** Shorthand constructors. */
export const invalidArg = (message: string, cause?: unknown): ServerError =>
  new ServerError('INVALID_ARG', message, { cause });
export const notFound = (message: string, cause?: unknown): ServerError =>
  new ServerError('NOT_FOUND', message, { cause });
export const unavailable = (message: string, cause?: unknown): ServerError =>
  new ServerError('UNAVAILABLE', message, { cause });
export const unsupported = (message: string, cause?: unknown): ServerError =>
  new ServerError('UNSUPPORTED', message, { cause });
export const internal = (message: string, cause?: unknown): ServerError =>
  new ServerError('INTERNAL', message, { cause });

/**
 * Turns anything thrown below the core into a {@link ServerError}: a `ServerError` passes through;
 * errors with a `status` of 400 (the codec's `ProtocolError`) become INVALID_ARG; everything else
 * becomes INTERNAL with its message kept.
 */
export function toServerError(error: unknown): ServerError {
  if (error instanceof ServerError) return error;
  if (error instanceof Error) {
    const status = (error as { status?: unknown }).status;
    if (status === 400) return new ServerError('INVALID_ARG', error.message, { cause: error });
    if (status === 413) return new ServerError('INVALID_ARG', error.message, { cause: error });
    return new ServerError('INTERNAL', error.message, { cause: error });
  }
  return new ServerError('INTERNAL', String(error));
}
