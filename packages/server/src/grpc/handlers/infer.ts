/**
 * `ModelInfer`: tritonserver's order (`ModelInferHandler::Execute`): the model version and its
 * transaction policy (decoupled models are refused), the request read into the core's request,
 * then the inference through the same core call as HTTP (same limits, statistics, metrics, trace).
 * @packageDocumentation
 */
import type { Metadata } from '@grpc/grpc-js';
import type { ModelInferRequest, ModelInferResponse } from '@tritonserver-ts/protocol/grpc';

import { unsupported } from '../../common/errors.js';
import { forwardHeaders } from '../../core/header-forward.js';
import type { ServingVersion } from '../../core/model-manager.js';
import type { InferenceServer } from '../../core/server.js';
import type { CoreInferResponse, InputBudget } from '../../common/types.js';
import type { MemoryBudget } from '../../http/memory-budget.js';
import { decodeGrpcInferRequest, type GrpcInferRequest } from '../infer-request.js';
import { encodeGrpcInferResponse } from '../infer-response.js';
import { packedBytesContents } from '../packed-request.js';
import type { CallContext } from './types.js';

/**
 * What bounds a gRPC request's shared-memory inputs (issue 23 item 6): with the message's raw
 * contents, at most the largest message (`--grpc-max-message-bytes`) or the in-flight budget,
 * whichever is smaller; their bytes are taken from the in-flight budget shared with HTTP bodies
 * (`--http-max-inflight-body-bytes`) until the request is answered.
 */
export interface GrpcInputLimits {
  readonly budget: MemoryBudget;
  readonly maxMessageBytes: number;
}

/** Options shared by `ModelInfer` and `ModelStreamInfer`. */
export interface InferHandlerOptions {
  /** `--grpc-header-forward-pattern`. */
  readonly headerForwardPattern?: RegExp;
  /** Bounds of shared-memory inputs; absent: unbounded. */
  readonly inputLimits?: GrpcInputLimits;
}

/** The input bound of a request ({@link GrpcInputLimits}); it holds its raw and typed BYTES contents. */
function grpcInputBudget(request: ModelInferRequest, limits: GrpcInputLimits): InputBudget {
  let held = 0;
  for (const raw of request.rawInputContents) held += raw.byteLength;
  for (const input of request.inputs) {
    if (input.contents !== undefined) held += packedBytesContents(input.contents)?.byteLength ?? 0;
  }
  const { budget, maxMessageBytes } = limits;
  const byBudget = budget.limit < maxMessageBytes;
  return {
    heldBytes: held,
    maxBytes: byBudget ? budget.limit : maxMessageBytes,
    maxBytesFlag: byBudget ? '--http-max-inflight-body-bytes' : '--grpc-max-message-bytes',
    acquire: (bytes) => {
      const reservation = budget.open();
      reservation.grow(bytes);
      return () => reservation.release();
    },
  };
}

/**
 * The call's metadata entries whose key matches `pattern`, as string parameters (binary `-bin`
 * entries are not forwarded); a reserved parameter name fails the request (`core/header-forward.ts`).
 */
export function forwardedHeaders(
  metadata: Metadata,
  pattern: RegExp | undefined,
): Record<string, string> | undefined {
  if (pattern === undefined) return undefined;
  const entries = Object.entries(metadata.getMap()).filter(
    (e): e is [string, string] => typeof e[1] === 'string',
  );
  return forwardHeaders(entries, pattern);
}

/** A read request and the model version it resolved to (the core runs it there, without resolving again). */
export interface ResolvedInferRequest extends GrpcInferRequest {
  readonly model: ServingVersion;
}

/** Resolves a request's model version: Triton's unknown-model / version errors. */
export function resolveModel(core: InferenceServer, request: ModelInferRequest): ServingVersion {
  return core.models.resolve(
    request.modelName,
    request.modelVersion === '' ? undefined : request.modelVersion,
  );
}

/**
 * Resolves the model (Triton's unknown-model / version errors; once per request) and reads the
 * request, its contents decoded for that model, with its input bound ({@link GrpcInputLimits}) for
 * its shared-memory inputs and the element-by-element conversion of its BYTES inputs.
 * @param options.refuseDecoupled - `ModelInfer` refuses decoupled models; the stream accepts them.
 * @param options.model - the model already resolved for this request (the stream resolves it to
 *   choose how to answer); absent: resolved here.
 */
export function readInferRequest(
  core: InferenceServer,
  request: ModelInferRequest,
  ctx: Pick<CallContext, 'metadata' | 'signal'>,
  options: InferHandlerOptions & { refuseDecoupled: boolean; model?: ServingVersion },
): ResolvedInferRequest {
  const model = options.model ?? resolveModel(core, request);
  const config = model.definition.config;
  if (options.refuseDecoupled && config.model_transaction_policy?.decoupled === true) {
    throw unsupported("ModelInfer RPC doesn't support models with decoupled transaction policy");
  }
  const headers = forwardedHeaders(ctx.metadata, options.headerForwardPattern);
  const decoded = decodeGrpcInferRequest(request, {
    signal: ctx.signal,
    modelName: config.name === '' ? model.name : config.name,
    ...(headers !== undefined ? { forwardedHeaders: headers } : {}),
  });
  // Shared-memory inputs and BYTES converted element by element count against the limits.
  const limits = options.inputLimits;
  if (limits === undefined) return { ...decoded, model };
  return { ...decoded, model, core: { ...decoded.core, inputBudget: grpcInputBudget(request, limits) } };
}

/**
 * Runs a read request through the core, sampling a trace as the HTTP front end does: tritonserver's
 * gRPC timestamps `GRPC_WAITREAD_START` / `GRPC_WAITREAD_END` (both when the call's message arrived:
 * grpc-js hands over whole messages), the core's, then `INFER_RESPONSE_COMPLETE`, `GRPC_SEND_START`
 * and `GRPC_SEND_END` through `sent` (call it once the response has been handed to grpc-js).
 * @param onAccepted - called once the core has queued the request (see `InferenceServer.infer`).
 */
export async function runInfer<T>(
  core: InferenceServer,
  decoded: ResolvedInferRequest,
  receivedAt: bigint,
  encode: (response: CoreInferResponse) => T,
  onAccepted?: () => void,
): Promise<{ message: T; sent: () => void }> {
  const trace = core.trace.sample(decoded.core.modelName);
  trace?.capture('GRPC_WAITREAD_START', receivedAt);
  trace?.capture('GRPC_WAITREAD_END', receivedAt);
  let message: T;
  try {
    const response = await core.infer(decoded.core, {
      model: decoded.model,
      ...(trace !== undefined ? { trace } : {}),
      ...(onAccepted !== undefined ? { onAccepted } : {}),
    });
    message = encode(response);
  } catch (error) {
    trace?.finish();
    throw error;
  }
  trace?.capture('INFER_RESPONSE_COMPLETE', process.hrtime.bigint());
  trace?.capture('GRPC_SEND_START', process.hrtime.bigint());
  return {
    message,
    sent: () => {
      if (trace === undefined) return;
      // grpc-js writes the response within the tick it is handed over.
      setImmediate(() => {
        trace.capture('GRPC_SEND_END', process.hrtime.bigint());
        trace.finish();
      });
    },
  };
}

/** The `ModelInfer` handler. */
export function modelInferHandler(
  options: InferHandlerOptions,
): (request: ModelInferRequest, ctx: CallContext) => Promise<ModelInferResponse> {
  return async (request, ctx) => {
    const decoded = readInferRequest(ctx.core, request, ctx, { ...options, refuseDecoupled: true });
    const { message, sent } = await runInfer(ctx.core, decoded, ctx.receivedAt, (r) =>
      encodeGrpcInferResponse(r),
    );
    sent();
    return message;
  };
}
