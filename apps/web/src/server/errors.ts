import 'server-only';
import { ImagePreprocessError } from '@gourmetgram/image-preprocess';
import {
  ProtocolError,
  TritonAbortError,
  TritonConnectionError,
  TritonError,
  TritonProtocolError,
  TritonServerError,
  TritonTimeoutError,
} from '@tritonserver-ts/client';

/** Stable error codes of the gateway's JSON errors. The UI and API users branch on these. */
export const ERROR_STATUS = {
  MISSING_FILE: 400,
  INVALID_REQUEST: 400,
  INVALID_PREDICTION_ID: 400,
  EMPTY_FILE: 400,
  CORRUPT_IMAGE: 400,
  TOO_MANY_PIXELS: 400,
  NOT_FOUND: 404,
  FILE_TOO_LARGE: 413,
  BODY_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IMAGE_TOO_SMALL: 422,
  IMAGE_UNIFORM: 422,
  CLIENT_CLOSED_REQUEST: 499,
  INTERNAL_ERROR: 500,
  INFERENCE_FAILED: 502,
  MODEL_CONFIG_INVALID: 502,
  INFERENCE_UNAVAILABLE: 503,
  MODEL_UNAVAILABLE: 503,
  FEEDBACK_STORE_FAILED: 503,
  INFERENCE_TIMEOUT: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The JSON body of every gateway error. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; requestId?: string };
}

/** An error the gateway answers with: status from the code, a readable message, never a stack. */
export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  readonly code: ErrorCode;
  readonly status: number;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = ERROR_STATUS[code];
  }
}

/** The first client error in `err`'s cause chain (the client throws its errors directly; a wrapper may not). */
function clientErrorIn(err: unknown): TritonError | ProtocolError | undefined {
  let e: unknown = err;
  for (let i = 0; i < 5 && e instanceof Error; i++) {
    if (e instanceof TritonError || e instanceof ProtocolError) return e;
    e = e.cause;
  }
  return undefined;
}

/**
 * The platform's own abort (a `DOMException` named `AbortError`, e.g. reading the body of a request
 * whose client went away). DOMExceptions are told apart by name: that is their standard identity.
 */
function isPlatformAbort(err: unknown): boolean {
  return err instanceof DOMException && err.name === 'AbortError';
}

/**
 * Maps anything thrown while handling a request to a {@link GatewayError}: preprocessing errors (the
 * image-signature check's included) to 400/415, and the client's typed errors by class and, for
 * server errors, by their transport-neutral `reason` (the same over HTTP and gRPC): 499 (caller went
 * away), 504 (timeout), 503 (connection, or the server's `UNAVAILABLE`), 503 MODEL_UNAVAILABLE
 * (`NOT_FOUND`), 502 (any other server error, or a response the client could not read); the rest is
 * 500 with a generic message.
 */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err instanceof ImagePreprocessError) {
    switch (err.code) {
      case 'EMPTY_IMAGE':
        return new GatewayError('EMPTY_FILE', 'The uploaded file is empty.', { cause: err });
      case 'UNSUPPORTED_FORMAT':
        // The message already says what to send instead.
        return new GatewayError('UNSUPPORTED_MEDIA_TYPE', err.message, { cause: err });
      case 'CORRUPT_IMAGE':
        return new GatewayError('CORRUPT_IMAGE', err.message, { cause: err });
      case 'TOO_MANY_PIXELS':
        return new GatewayError('TOO_MANY_PIXELS', err.message, { cause: err });
      case 'INVALID_CONFIG':
        return new GatewayError(
          'MODEL_CONFIG_INVALID',
          `The model's preprocessing settings are invalid: ${err.message}`,
          {
            cause: err,
          },
        );
    }
  }
  const client = clientErrorIn(err);
  if (client instanceof TritonAbortError || isPlatformAbort(err)) {
    return new GatewayError('CLIENT_CLOSED_REQUEST', 'The request was cancelled by the client.', {
      cause: err,
    });
  }
  if (client instanceof TritonTimeoutError) {
    return new GatewayError('INFERENCE_TIMEOUT', 'The inference server did not answer in time.', {
      cause: err,
    });
  }
  if (client instanceof TritonConnectionError) {
    return new GatewayError('INFERENCE_UNAVAILABLE', 'The inference server is not reachable.', {
      cause: err,
    });
  }
  if (client instanceof TritonServerError) {
    const text = client.message;
    switch (client.reason) {
      case 'UNAVAILABLE':
        return new GatewayError('INFERENCE_UNAVAILABLE', `The inference server is not ready: ${text}`, {
          cause: err,
        });
      case 'NOT_FOUND':
        return new GatewayError('MODEL_UNAVAILABLE', `The model is not available: ${text}`, { cause: err });
      default:
        return new GatewayError('INFERENCE_FAILED', `The inference server reported an error: ${text}`, {
          cause: err,
        });
    }
  }
  if (client instanceof TritonProtocolError || client instanceof ProtocolError) {
    return new GatewayError('INFERENCE_FAILED', 'The inference server sent a response we could not read.', {
      cause: err,
    });
  }
  return new GatewayError('INTERNAL_ERROR', 'Something went wrong on our side.', { cause: err });
}

/**
 * How long the connection of a 413 stays open after the whole answer has been sent, before it is
 * closed. Nothing more of the body is read meanwhile (the client's writes just fill the socket
 * buffers). Closing a socket that still holds unread bytes makes the kernel send a reset, and a
 * client that is still sending then fails its next write before it has read the answer: with an
 * immediate close, 68–80% of the 413s sent to busy clients that kept writing were lost to EPIPE
 * here (test/security.test.ts). Half a second lets the client read the answer first.
 */
export const TOO_LARGE_LINGER_MS = 500;

/**
 * The answer to a body over its limit: status, headers and the complete JSON body (with its
 * `Content-Length`, so the client knows it has all of it) go out at once; the response then ends
 * after {@link TOO_LARGE_LINGER_MS}, and `Connection: close` makes the server close the connection
 * instead of reading the rest of the body to reuse it.
 */
function tooLargeResponse(body: ErrorBody, status: number, headers: Record<string, string>): Response {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes);
      timer = setTimeout(() => controller.close(), TOO_LARGE_LINGER_MS);
    },
    cancel() {
      clearTimeout(timer);
    },
  });
  return new Response(stream, {
    status,
    headers: {
      ...headers,
      'content-type': 'application/json',
      'content-length': String(bytes.byteLength),
      connection: 'close',
    },
  });
}

/** A JSON error response. Never includes a stack trace. */
export function errorResponse(err: unknown, requestId?: string): Response {
  const g = toGatewayError(err);
  const body: ErrorBody = {
    error: { code: g.code, message: g.message, ...(requestId ? { requestId } : {}) },
  };
  const headers: Record<string, string> = { 'cache-control': 'no-store' };
  if (requestId) headers['x-request-id'] = requestId;
  if (g.status === 503) headers['retry-after'] = '5';
  // A body over the limit is not read any further: answer, then close the connection rather than
  // drain the body.
  if (g.status === 413) return tooLargeResponse(body, g.status, headers);
  return Response.json(body, { status: g.status, headers });
}
