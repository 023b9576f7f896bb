/**
 * `ModelInfer`: tritonserver's order (`ModelInferHandler::Execute`): the model version and its
 * transaction policy (decoupled models are refused), the request read into the core's request,
 * then the inference through the same core call as HTTP (same limits, statistics, metrics, trace).
 * @packageDocumentation
 */
import type { Metadata } from '@grpc/grpc-js';
import type { ModelInferRequest, ModelInferResponse } from '@tritonserver-ts/client/protocol/grpc';

import { unsupported } from '../../core/errors.js';
import type { InferenceServer } from '../../core/server.js';
import type { CoreInferResponse } from '../../core/types.js';
import { decodeGrpcInferRequest, type GrpcInferRequest } from '../infer-request.js';
import { encodeGrpcInferResponse } from '../infer-response.js';
import type { CallContext } from './types.js';

/** Options shared by `ModelInfer` and `ModelStreamInfer`. */
export interface InferHandlerOptions {
  /** `--grpc-header-forward-pattern`. */
  readonly headerForwardPattern?: RegExp;
}

/** The call's metadata entries whose key matches `pattern`, as string parameters. */
export function forwardedHeaders(
  metadata: Metadata,
  pattern: RegExp | undefined,
): Record<string, string> | undefined {
  if (pattern === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata.getMap())) {
    if (typeof value === 'string' && pattern.test(key)) out[key] = value;
  }
  return out;
}

/**
 * Resolves the model (Triton's unknown-model / version errors) and reads the request.
 * @param refuseDecoupled - `ModelInfer` refuses decoupled models; the stream accepts them.
 */
export function readInferRequest(
  core: InferenceServer,
  request: ModelInferRequest,
  ctx: Pick<CallContext, 'metadata' | 'signal' | 'receivedAt'>,
  options: InferHandlerOptions & { refuseDecoupled: boolean },
): GrpcInferRequest {
  const serving = core.models.resolve(
    request.modelName,
    request.modelVersion === '' ? undefined : request.modelVersion,
  );
  if (options.refuseDecoupled && serving.definition.config.model_transaction_policy?.decoupled === true) {
    throw unsupported("ModelInfer RPC doesn't support models with decoupled transaction policy");
  }
  const headers = forwardedHeaders(ctx.metadata, options.headerForwardPattern);
  return decodeGrpcInferRequest(request, {
    signal: ctx.signal,
    receivedAt: ctx.receivedAt,
    ...(headers !== undefined ? { forwardedHeaders: headers } : {}),
  });
}

/** Runs a read request through the core, sampling a trace as the HTTP front end does. */
export async function runInfer(
  core: InferenceServer,
  decoded: GrpcInferRequest,
  receivedAt: bigint,
): Promise<CoreInferResponse> {
  const trace = core.trace.sample(decoded.core.modelName);
  trace?.capture('GRPC_WAITREAD_END', receivedAt);
  try {
    const response = await core.infer(decoded.core, trace !== undefined ? { trace } : {});
    trace?.capture('INFER_RESPONSE_COMPLETE', process.hrtime.bigint());
    return response;
  } finally {
    trace?.capture('GRPC_SEND_START', process.hrtime.bigint());
    trace?.finish();
  }
}

/** The `ModelInfer` handler. */
export function modelInferHandler(
  options: InferHandlerOptions,
): (request: ModelInferRequest, ctx: CallContext) => Promise<ModelInferResponse> {
  return async (request, ctx) => {
    const decoded = readInferRequest(ctx.core, request, ctx, { ...options, refuseDecoupled: true });
    const response = await runInfer(ctx.core, decoded, ctx.receivedAt);
    return encodeGrpcInferResponse(response);
  };
}
