/**
 * Health RPCs: `ServerLive`, `ServerReady`, `ModelReady` and the standard
 * `grpc.health.v1.Health/Check` (SERVING when the server is ready, as tritonserver answers it).
 * @packageDocumentation
 */
import {
  HealthCheckResponse_ServingStatus,
  HealthCheckResponseSchema,
  ModelReadyResponseSchema,
  ServerLiveResponseSchema,
  ServerReadyResponseSchema,
  type HealthCheckRequest,
  type HealthCheckResponse,
  type ModelReadyRequest,
  type ModelReadyResponse,
  type ServerLiveRequest,
  type ServerLiveResponse,
  type ServerReadyRequest,
  type ServerReadyResponse,
} from '@tritonserver-ts/protocol/grpc';

import { parseVersion } from '../../core/model-manager.js';
import { message } from '../messages.js';
import type { UnaryHandler } from './types.js';

export const serverLive: UnaryHandler<ServerLiveRequest, ServerLiveResponse> = (_req, { core }) =>
  message(ServerLiveResponseSchema, { live: core.isLive() });

export const serverReady: UnaryHandler<ServerReadyRequest, ServerReadyResponse> = (_req, { core }) =>
  message(ServerReadyResponseSchema, { ready: core.isReady() });

/** Not ready (or unknown) is `ready: false` with status OK; only a malformed version is an error. */
export const modelReady: UnaryHandler<ModelReadyRequest, ModelReadyResponse> = (req, { core }) => {
  parseVersion(req.version);
  return message(ModelReadyResponseSchema, {
    ready: core.isModelReady(req.name, req.version === '' ? undefined : req.version),
  });
};

/** tritonserver ignores the `service` field and reports the server's readiness. */
export const healthCheck: UnaryHandler<HealthCheckRequest, HealthCheckResponse> = (_req, { core }) =>
  message(HealthCheckResponseSchema, {
    status: core.isReady()
      ? HealthCheckResponse_ServingStatus.SERVING
      : HealthCheckResponse_ServingStatus.NOT_SERVING,
  });
