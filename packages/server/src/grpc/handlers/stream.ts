/**
 * `ModelStreamInfer`: any number of inference requests on one stream, run concurrently, answered
 * as tritonserver answers them (`stream_infer_handler.cc`):
 * - a model that is not decoupled: one response per request, written in request order (among those
 *   requests), carrying `triton_final_response: true`;
 * - a decoupled model (`model_transaction_policy { decoupled: true }`, e.g. a Python model using its
 *   response sender): every response the model sends, as soon as it is ready, each with
 *   `triton_final_response` (false but on the last), per-response errors in-band, and an empty final
 *   response only when the request asks for it (`triton_enable_empty_final_response`); see
 *   `stream-decoupled.ts`.
 * A request that fails is answered with `error_message` and the stream stays open (see
 * {@link failureAnswer}); with the `triton_grpc_error: true` header the first failure ends the stream
 * with its gRPC status instead. When the client has half-closed and every request is complete the
 * stream ends with OK. A cancelled stream writes nothing more: its queued requests are cancelled
 * (the core's signal), responses still coming from running ones are dropped.
 * @packageDocumentation
 */
import { setMaxListeners } from 'node:events';

import type { ServerDuplexStream } from '@grpc/grpc-js';
import {
  ModelInferRequestSchema,
  ModelStreamInferResponseSchema,
  type ModelInferRequest,
  type ModelStreamInferResponse,
} from '@tritonserver-ts/protocol/grpc';

import { capErrorMessage } from '../../common/echo.js';
import { ServerError, toServerError } from '../../common/errors.js';
import type { ServingVersion } from '../../core/model-manager.js';
import type { InferenceServer } from '../../core/server.js';
import { boolParameter, encodeGrpcInferResponse } from '../infer-response.js';
import { isOverBudget, releaseRequestMemory, type OverBudget } from '../inflate.js';
import { message } from '../messages.js';
import { grpcErrorFor } from '../status.js';
import { isUnparsable, type UNPARSABLE } from '../unparsable.js';
import { readInferRequest, resolveModel, runInfer, type InferHandlerOptions } from './infer.js';
import { runDecoupled } from './stream-decoupled.js';
import { StreamWriter } from './stream-writer.js';

/** tritonserver's header that turns per-request stream errors into the stream's status. */
export const TRITON_GRPC_ERROR_HEADER = 'triton_grpc_error';

/** What a stream reports to the front end (in-flight tracking), and how it is held back. */
export interface StreamHooks {
  /** Called once when the stream has finished (ended, failed or cancelled). */
  readonly onDone: () => void;
  /**
   * Registers the stream's drain (shutdown: read no more requests, answer those in flight, end with
   * OK); returns the unregistration, called when the stream finishes.
   */
  readonly registerDrain?: (drain: () => void) => () => void;
  /** When the stream stops reading requests (see {@link StreamFlowLimits}). */
  readonly limits?: StreamFlowLimits;
}

/**
 * A stream stops reading requests (HTTP/2 flow control then holds the client back) while any of
 * these holds, and reads again once none does (issue 23, item 1).
 */
export interface StreamFlowLimits {
  /** Requests read and not yet answered (`--grpc-stream-max-inflight-requests`). */
  readonly maxInflightRequests: number;
  /** Bytes of answers the client has not taken (`--grpc-max-connection-output-bytes`). */
  readonly maxOutputBytes: number;
  /** True while the stream's connection holds more unread output than its cap. */
  readonly connectionOverCap?: () => boolean;
}

/** How often a held-back stream looks again at its connection's output. */
const FLOW_RECHECK_MS = 50;

/**
 * The model version `request` names, resolved once for the request (its reading and the core use
 * it), or `undefined` when it cannot be resolved: its error comes when the request is read.
 */
function streamModel(core: InferenceServer, request: ModelInferRequest): ServingVersion | undefined {
  try {
    return resolveModel(core, request);
  } catch {
    return undefined;
  }
}

/** Whether `model` is decoupled (an unresolved model is answered as a non-decoupled one). */
function isDecoupled(model: ServingVersion | undefined): boolean {
  return model?.definition.config.model_transaction_policy?.decoupled === true;
}

/** Serves one `ModelStreamInfer` call. */
export function serveStream(
  core: InferenceServer,
  call: ServerDuplexStream<ModelInferRequest, ModelStreamInferResponse>,
  options: InferHandlerOptions,
  hooks: StreamHooks,
): void {
  const controller = new AbortController();
  // Every request of the stream listens on this one signal while it is queued or running; any number
  // may be in flight, so Node's default of 10 listeners would warn (they are removed when each ends).
  setMaxListeners(0, controller.signal);
  const grpcErrorMode = call.metadata.get(TRITON_GRPC_ERROR_HEADER)[0] === 'true';
  let finished = false;
  const limits = hooks.limits;
  // Set below; the writer reports each message its client took.
  let regulate = (): void => undefined;
  const writer = new StreamWriter(
    call,
    controller.signal,
    () => finished,
    () => regulate(),
  );
  // Answers of non-decoupled models, in request order.
  let ordered: Promise<void> = Promise.resolve();
  // Requests read and not yet complete.
  let inFlight = 0;
  let readsDone = false;

  let paused = false;
  let recheck: NodeJS.Timeout | undefined;
  const mustWait = (): boolean =>
    limits !== undefined &&
    (inFlight >= limits.maxInflightRequests ||
      writer.pendingBytes > limits.maxOutputBytes ||
      (limits.connectionOverCap?.() ?? false));
  regulate = (): void => {
    if (limits === undefined) return;
    if (!finished && !readsDone && mustWait()) {
      if (paused) return;
      paused = true;
      call.pause();
      recheck = setInterval(regulate, FLOW_RECHECK_MS).unref();
      return;
    }
    if (!paused) return;
    paused = false;
    clearInterval(recheck);
    recheck = undefined;
    if (!finished && !readsDone) call.resume();
  };

  // Set once the stream's drain is registered (below).
  const drainRegistration: { unregister?: () => void } = {};
  const finish = (): void => {
    if (finished) return;
    finished = true;
    clearInterval(recheck);
    recheck = undefined;
    drainRegistration.unregister?.();
    hooks.onDone();
  };
  const stop = (): void => {
    controller.abort();
    finish();
  };
  call.on('cancelled', stop);
  call.on('error', stop);

  /** triton_grpc_error: the first failure ends the stream with its status (after what was queued). */
  const failStream = (error: ServerError): void => {
    writer.then(() => {
      if (finished) return;
      controller.abort();
      call.emit('error', grpcErrorFor(error));
      finish();
    });
  };
  const endIfDone = (): void => {
    if (!readsDone || inFlight > 0) return;
    // Answer what is pending, then end with OK.
    writer.then(() => {
      if (finished) return;
      call.end();
      finish();
    });
  };
  const complete = (request: ModelInferRequest): void => {
    // An inflated request's memory goes back to the in-flight budget.
    releaseRequestMemory(request);
    inFlight -= 1;
    endIfDone();
    regulate();
  };
  const endReads = (): void => {
    if (readsDone) return;
    readsDone = true;
    regulate();
    void ordered.then(endIfDone);
  };
  // Shutdown: no more requests are read; those in flight are answered, then the stream ends with OK.
  const unregister = hooks.registerDrain?.(() => {
    call.pause();
    endReads();
  });
  if (unregister !== undefined) drainRegistration.unregister = unregister;

  call.on('data', (request: ModelInferRequest | typeof UNPARSABLE | OverBudget) => {
    if (finished || readsDone) {
      releaseRequestMemory(request);
      return;
    }
    if (isOverBudget(request)) {
      // Decoded requests in flight already fill the budget: answered in-band (or ends the stream
      // with triton_grpc_error), as any refused request.
      const refusal = new ServerError('UNAVAILABLE', request.message);
      if (grpcErrorMode) failStream(refusal);
      else
        writer.write(
          failureAnswer(message(ModelInferRequestSchema, { id: request.id }), refusal.message, false),
        );
      return;
    }
    if (isUnparsable(request)) {
      // gRPC C++ reports a message that does not decode as a failed read, which tritonserver
      // takes for the end of the client's messages.
      endReads();
      return;
    }
    const receivedAt = process.hrtime.bigint();
    inFlight += 1;
    const model = streamModel(core, request);
    if (isDecoupled(model)) serveDecoupled(request, receivedAt, model);
    else serveOrdered(request, receivedAt, model);
    regulate();
  });

  /** A request to a decoupled model: its responses are written as they come. */
  const serveDecoupled = (
    request: ModelInferRequest,
    receivedAt: bigint,
    model: ServingVersion | undefined,
  ): void => {
    const refuse = (error: ServerError, accepted: boolean): void => {
      if (grpcErrorMode) failStream(error);
      else writer.write(failureAnswer(request, error.message, accepted));
    };
    let decoded;
    try {
      decoded = readInferRequest(
        core,
        request,
        { metadata: call.metadata, signal: controller.signal },
        { ...options, refuseDecoupled: false, ...(model !== undefined ? { model } : {}) },
      );
    } catch (error) {
      refuse(toServerError(error), false);
      complete(request);
      return;
    }
    void runDecoupled(
      core,
      request,
      decoded,
      receivedAt,
      {
        write: (m, after) => writer.write(m, after),
        afterWrites: (task) => writer.then(task),
        ...(grpcErrorMode ? { fail: failStream } : {}),
      },
      refuse,
    ).finally(() => complete(request));
  };

  /** A request to a model that is not decoupled: one answer, in request order. */
  const serveOrdered = (
    request: ModelInferRequest,
    receivedAt: bigint,
    model: ServingVersion | undefined,
  ): void => {
    // Inference starts at once (requests run concurrently); answers are written in request order.
    let accepted = false;
    const result: Promise<{ answer: ModelStreamInferResponse; sent?: () => void } | ServerError> =
      (async () => {
        try {
          const decoded = readInferRequest(
            core,
            request,
            { metadata: call.metadata, signal: controller.signal },
            { ...options, refuseDecoupled: false, ...(model !== undefined ? { model } : {}) },
          );
          const run = await runInfer(
            core,
            decoded,
            receivedAt,
            (response) =>
              message(ModelStreamInferResponseSchema, {
                inferResponse: encodeGrpcInferResponse(response, {
                  triton_final_response: boolParameter(true),
                }),
              }),
            () => {
              accepted = true;
            },
          );
          return { answer: run.message, sent: run.sent };
        } catch (error) {
          if (grpcErrorMode) return toServerError(error);
          return { answer: failureAnswer(request, toServerError(error).message, accepted) };
        }
      })();
    ordered = ordered.then(async () => {
      const outcome = await result;
      if (outcome instanceof Error) failStream(outcome);
      else writer.write(outcome.answer, outcome.sent);
      complete(request);
    });
  };

  // The client half-closed.
  call.on('end', endReads);
}

/**
 * The answer to a failed stream request, filled as tritonserver fills it: a request refused while
 * read carries only its `id` (`ModelStreamInferHandler::Process`); one that failed after it was
 * queued is a response with an error, which also gets the request's `model_name`, `model_version`
 * (as sent, even when empty) and `triton_final_response` (`StreamInferResponseComplete`).
 */
export function failureAnswer(
  request: ModelInferRequest,
  errorMessage: string,
  accepted: boolean,
): ModelStreamInferResponse {
  return message(ModelStreamInferResponseSchema, {
    errorMessage: capErrorMessage(errorMessage),
    inferResponse: accepted
      ? {
          id: request.id,
          modelName: request.modelName,
          modelVersion: request.modelVersion,
          parameters: { triton_final_response: boolParameter(true) },
        }
      : { id: request.id },
  });
}
