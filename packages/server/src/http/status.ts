/**
 * The HTTP front end's status table: the core's Triton error kinds to HTTP status codes, as
 * Triton's `HttpCodeFromError` maps them (protocol.md §2.2). The gRPC front end has its own
 * (`grpc/status.ts`); the core knows only the kinds.
 * @packageDocumentation
 */
import type { ServerErrorKind } from '../common/errors.js';

/** HTTP status per Triton kind. Kinds Triton does not list answer 400. */
export const HTTP_STATUS_FOR_KIND: Readonly<Record<ServerErrorKind, number>> = {
  INTERNAL: 500,
  NOT_FOUND: 404,
  UNAVAILABLE: 503,
  UNSUPPORTED: 501,
  INVALID_ARG: 400,
  ALREADY_EXISTS: 400,
  CANCELLED: 400,
  UNKNOWN: 400,
};

/** HTTP status for a Triton status kind (protocol.md §2.2). */
export function httpStatusForKind(kind: ServerErrorKind): number {
  return HTTP_STATUS_FOR_KIND[kind] ?? 400;
}
