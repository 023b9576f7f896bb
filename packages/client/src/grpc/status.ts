/**
 * gRPC statuses → the client's one error hierarchy.
 * @packageDocumentation
 */
import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import {
  TritonConnectionError,
  TritonError,
  TritonInvalidArgumentError,
  TritonProtocolError,
  TritonServerError,
  httpStatusForGrpcCode,
  reasonForGrpcCode,
} from '../errors.js';

/**
 * grpc-js's words for a stream Node's HTTP/2 reset because the server's frames broke the protocol
 * (Node 22+ on a header block over 64 KiB; Node 20 drops the connection silently instead, which the
 * stall watch catches).
 */
const HTTP2_PROTOCOL_ERROR =
  /^Received RST_STREAM with code \d+ triggered by internal client error: Protocol error/;

/**
 * Whether grpc-js failed the call because Node's HTTP/2 reset its stream as a protocol error (the
 * connection is closing: the next call must not be sent on it).
 */
export function isHttp2ProtocolReset(error: ServiceError): boolean {
  return !sentByServer(error) && HTTP2_PROTOCOL_ERROR.test(error.details);
}

/** True when `error` is a grpc-js call error (it carries a numeric `code` and `details`). */
export function isServiceError(error: unknown): error is ServiceError {
  return (
    error instanceof Error &&
    typeof (error as Partial<ServiceError>).code === 'number' &&
    typeof (error as Partial<ServiceError>).details === 'string'
  );
}

/**
 * Whether the server itself sent the status: grpc-js statuses made on the client (no connection,
 * connection dropped, local deadline, cancel) carry no metadata, while a status read from the
 * server's headers or trailers does (at least its content-type).
 */
export function sentByServer(error: ServiceError): boolean {
  return Object.keys(error.metadata?.getMap() ?? {}).length > 0;
}

function fromServer(error: ServiceError, responded: boolean): boolean {
  return responded || sentByServer(error);
}

/**
 * Maps a failed call to a {@link TritonError}:
 * - a response grpc-js could not decode or that exceeds this client's `maxReceiveMessageLength`, or a
 *   stream Node's HTTP/2 reset as a protocol error (e.g. a header block over 64 KiB) →
 *   `TritonProtocolError`; a request over `maxSendMessageLength` → `TritonInvalidArgumentError`;
 * - `UNAVAILABLE` (and `INTERNAL` / `UNKNOWN` for a dropped connection) that the server did not
 *   send → {@link TritonConnectionError} (retried like an HTTP connection error); so are a local
 *   `DEADLINE_EXCEEDED` or `CANCELLED` (the client then reports its timeout or abort error);
 * - any other status → {@link TritonServerError} with the server's message verbatim, `status` the
 *   HTTP equivalent ({@link httpStatusForGrpcCode}: 503 for a server-sent `UNAVAILABLE`, so it is
 *   retried as HTTP 503 is), `reason` from the code ({@link reasonForGrpcCode}), `body` the
 *   message, `transport: 'grpc'` and the grpc-js error (with its numeric `code`) as `cause`.
 * @param responded - the server had sent response headers before the call failed.
 * @param limits.maxReceiveMessageLength - this client's receive limit, to tell its own refusal of
 *   a large response from a server's refusal of a large request.
 */
export function tritonErrorFromGrpc(
  error: unknown,
  what: string,
  responded = false,
  limits: { readonly maxReceiveMessageLength?: number } = {},
): TritonError {
  if (error instanceof TritonError) return error;
  if (!isServiceError(error)) {
    const detail = error instanceof Error ? error.message : String(error);
    return new TritonConnectionError(`${what} failed: ${detail}`, { cause: error });
  }
  const server = fromServer(error, responded);
  // Statuses grpc-js makes itself, even after the response headers arrived: a response it cannot
  // decode, one over this client's receive limit (a server refusing a request over its own limit
  // words it alike, with its limit), a request over this client's send limit.
  if (/^Response message parsing error/.test(error.details)) {
    return new TritonProtocolError(`${what}: ${error.details}`, { cause: error });
  }
  const overLimit = /^Received message larger than max \(\d+ vs\.? (\d+)\)/.exec(error.details);
  if (overLimit !== null && Number(overLimit[1]) === limits.maxReceiveMessageLength) {
    return new TritonProtocolError(`${what}: ${error.details}`, { cause: error });
  }
  if (!server && isHttp2ProtocolReset(error)) {
    return new TritonProtocolError(
      `${what}: the server's HTTP/2 response broke the protocol (a header block this client cannot read, ` +
        `such as a status message over 64 KiB): ${error.details}`,
      { cause: error },
    );
  }
  if (!server && /^Attempted to send message with a size larger than/.test(error.details)) {
    return new TritonInvalidArgumentError(`${what}: ${error.details}`, { cause: error });
  }
  if (!server && (error.code === GrpcStatus.DEADLINE_EXCEEDED || error.code === GrpcStatus.CANCELLED)) {
    // The client's own deadline or cancel: the client reports it as its timeout or abort error.
    return new TritonConnectionError(`${what}: ${error.details}`, { cause: error });
  }
  const dropped = /connection dropped|ECONNRESET|socket hang up|stream closed/i.test(error.details);
  if (
    !server &&
    (error.code === GrpcStatus.UNAVAILABLE ||
      ((error.code === GrpcStatus.INTERNAL || error.code === GrpcStatus.UNKNOWN) && dropped))
  ) {
    return new TritonConnectionError(`${what} failed: ${error.details}`, { cause: error });
  }
  return new TritonServerError(httpStatusForGrpcCode(error.code), error.details, {
    body: error.details,
    transport: 'grpc',
    cause: error,
    reason: reasonForGrpcCode(error.code),
  });
}
