/**
 * The gRPC front end's status table: the core's Triton error kinds to gRPC status codes, as
 * tritonserver's `GrpcStatusUtil::CodeToStatus` maps them (`grpc_utils.cc`). The message is the
 * core's in the status details, capped at `ERROR_MESSAGE_MAX_BYTES` (`core/echo.ts`).
 * @packageDocumentation
 */
import { Metadata, status as GrpcStatus, type ServiceError, type StatusObject } from '@grpc/grpc-js';

import { capErrorMessage } from '../common/echo.js';
import { toServerError, type ServerErrorKind } from '../common/errors.js';

/** gRPC status per Triton kind (UNSUPPORTED → UNIMPLEMENTED; anything unknown → UNKNOWN). */
export const GRPC_STATUS_FOR_KIND: Readonly<Record<ServerErrorKind, GrpcStatus>> = {
  UNKNOWN: GrpcStatus.UNKNOWN,
  INTERNAL: GrpcStatus.INTERNAL,
  NOT_FOUND: GrpcStatus.NOT_FOUND,
  INVALID_ARG: GrpcStatus.INVALID_ARGUMENT,
  UNAVAILABLE: GrpcStatus.UNAVAILABLE,
  UNSUPPORTED: GrpcStatus.UNIMPLEMENTED,
  ALREADY_EXISTS: GrpcStatus.ALREADY_EXISTS,
  CANCELLED: GrpcStatus.CANCELLED,
};

/** The gRPC status code for a Triton status kind. */
export function grpcStatusForKind(kind: ServerErrorKind): GrpcStatus {
  return GRPC_STATUS_FOR_KIND[kind] ?? GrpcStatus.UNKNOWN;
}

/**
 * A gRPC error status for anything thrown by the core (or by a handler); the details are capped
 * (`capErrorMessage`), so the `grpc-message` trailer stays small whatever the message echoes.
 */
export function grpcErrorFor(error: unknown): Partial<StatusObject> & ServiceError {
  const e = toServerError(error);
  return grpcError(grpcStatusForKind(e.kind), e.message);
}

/** A gRPC error with an explicit code (restriction refusals, front-end checks); details capped. */
export function grpcError(code: GrpcStatus, message: string): Partial<StatusObject> & ServiceError {
  const details = capErrorMessage(message);
  const out = new Error(details) as Partial<StatusObject> & ServiceError;
  out.code = code;
  out.details = details;
  out.metadata = new Metadata();
  return out;
}
