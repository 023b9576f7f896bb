/**
 * Requests that are not valid protobuf, answered as tritonserver (gRPC C++) answers them instead of
 * with @grpc/grpc-js's own words. The server's service definitions decode through
 * {@link tolerantDefinition}: a message that does not decode becomes {@link UNPARSABLE} instead of
 * an exception inside grpc-js, and the handlers answer it. A unary call gets INTERNAL
 * `Unable to parse request` (gRPC C++ cancels the call with that status before the application sees
 * it); on `ModelStreamInfer` gRPC C++ reports the failed read as the end of the client's messages,
 * so tritonserver answers what is in flight and ends the stream with OK.
 * @packageDocumentation
 */
import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';

import { accountMessage, withInflatePolicy, type InflatePolicy } from './inflate.js';

/** Stands for a request message that did not decode. */
export const UNPARSABLE: unique symbol = Symbol('unparsable gRPC request');

/** The message gRPC C++ cancels a unary call with when its request does not decode. */
export const UNABLE_TO_PARSE_REQUEST = 'Unable to parse request';

/** True when `message` is a request that did not decode. */
export function isUnparsable(message: unknown): message is typeof UNPARSABLE {
  return message === UNPARSABLE;
}

/** The status of a unary call whose request did not decode. */
export function unparsableError(): Partial<ServiceError> {
  return { code: GrpcStatus.INTERNAL, details: UNABLE_TO_PARSE_REQUEST, metadata: new Metadata() };
}

/**
 * `definition` with request deserializers that return {@link UNPARSABLE} instead of throwing; with
 * an `inflate` policy, compressed requests are inflated within it (see `inflate.ts`).
 */
export function tolerantDefinition<D extends object>(definition: D, inflate?: InflatePolicy): D {
  const out: Record<string, unknown> = {};
  const methods = Object.entries(definition) as [string, { requestDeserialize: (b: Buffer) => unknown }][];
  for (const [key, method] of methods) {
    const decode = method.requestDeserialize;
    const requestDeserialize = (bytes: Buffer): unknown => {
      let request: unknown;
      try {
        request = decode(bytes);
      } catch {
        request = UNPARSABLE;
      }
      return inflate !== undefined ? accountMessage(bytes, request, inflate) : request;
    };
    out[key] = {
      ...method,
      requestDeserialize:
        inflate !== undefined ? withInflatePolicy(requestDeserialize, inflate) : requestDeserialize,
    };
  }
  return out as D;
}
