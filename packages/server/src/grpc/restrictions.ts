/**
 * `--grpc-restricted-protocol` at call time: a restricted category requires the metadata key
 * `triton-grpc-protocol-<key>` with exactly `<value>`; otherwise tritonserver answers UNAVAILABLE
 * `This protocol is restricted, expecting header 'triton-grpc-protocol-<key>'` (grpc_server.cc).
 * @packageDocumentation
 */
import { status as GrpcStatus, type Metadata, type ServiceError } from '@grpc/grpc-js';

import { GRPC_METHOD_CATEGORIES, type Restrictions } from '../http/restricted-api.js';
import { grpcError } from './status.js';

/** tritonserver's prefix of the restriction metadata key. */
export const GRPC_RESTRICTION_PREFIX = 'triton-grpc-protocol-';

/**
 * The refusal for `method` (an `inference.GRPCInferenceService` method name, or
 * `grpc.health.v1.Health/Check`) called with `metadata`, or `undefined` when it may pass.
 * The key is compared as configured: gRPC metadata keys are lower case, so (as with tritonserver) a
 * key configured with upper-case letters can never match.
 */
export function restrictionRefusal(
  restrictions: Restrictions | undefined,
  method: string,
  metadata: Metadata,
): ServiceError | undefined {
  if (restrictions === undefined) return undefined;
  const category = GRPC_METHOD_CATEGORIES[method];
  if (category === undefined) return undefined;
  const rule = restrictions.get(category);
  if (rule === undefined) return undefined;
  const key = GRPC_RESTRICTION_PREFIX + rule.key;
  const map = metadata.getMap();
  const given = Object.hasOwn(map, key) ? map[key] : undefined;
  if (typeof given === 'string' && given === rule.value) return undefined;
  return grpcError(GrpcStatus.UNAVAILABLE, `This protocol is restricted, expecting header '${key}'`);
}
