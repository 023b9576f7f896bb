/**
 * One request of a `ModelStreamInfer` stream to a decoupled model, answered as tritonserver's
 * `StreamInferResponseComplete` answers it: every response the model sends, in the order it sends
 * them, as soon as it is ready (not in request order); each carries `triton_final_response` =
 * whether it is the request's last (`false` on the others). A response with an error is
 * `error_message` plus an `infer_response` holding only the request's `id`, `model_name`,
 * `model_version` (as sent) and `triton_final_response`. A final flag the model sent without a
 * response becomes an empty response (those same fields, `triton_final_response: true`) only when
 * the request set `triton_enable_empty_final_response`; otherwise nothing is written for it.
 * @packageDocumentation
 */
import {
  ModelStreamInferResponseSchema,
  type ModelInferRequest,
  type ModelStreamInferResponse,
} from '@tritonserver-ts/protocol/grpc';

import { capErrorMessage } from '../../common/echo.js';
import { toServerError, type ServerError } from '../../common/errors.js';
import type { InferenceServer } from '../../core/server.js';
import type { CoreStreamResponse } from '../../common/types.js';
import { boolParameter, encodeGrpcInferResponse } from '../infer-response.js';
import { message } from '../messages.js';
import type { ResolvedInferRequest } from './infer.js';

/** Where the responses of one decoupled request go. */
export interface DecoupledSink {
  /** Queues a message on the stream; `after` runs once it was handed over. */
  readonly write: (message: ModelStreamInferResponse, after?: () => void) => void;
  /** Runs `task` once every message queued so far has been handed over. */
  readonly afterWrites: (task: () => void) => void;
  /**
   * `triton_grpc_error` mode: the first error ends the stream with its status (set: errors go
   * here instead of in-band; later responses of the request are dropped).
   */
  readonly fail?: (error: ServerError) => void;
}

/** The in-band answer for a response of `request` that carries an error (or nothing: `errorMessage` ''). */
function bareAnswer(
  request: ModelInferRequest,
  errorMessage: string,
  final: boolean,
): ModelStreamInferResponse {
  return message(ModelStreamInferResponseSchema, {
    errorMessage: capErrorMessage(errorMessage),
    inferResponse: {
      id: request.id,
      modelName: request.modelName,
      modelVersion: request.modelVersion,
      parameters: { triton_final_response: boolParameter(final) },
    },
  });
}

/** The message for one response of the model, or `undefined` when nothing is sent for it. */
export function decoupledAnswer(
  request: ModelInferRequest,
  response: CoreStreamResponse,
  enableEmptyFinalResponse: boolean,
): ModelStreamInferResponse | undefined {
  if (response.error !== undefined) return bareAnswer(request, response.error.message, response.final);
  if (response.response !== undefined) {
    return message(ModelStreamInferResponseSchema, {
      inferResponse: encodeGrpcInferResponse(response.response, {
        triton_final_response: boolParameter(response.final),
      }),
    });
  }
  // A final flag without a response: tritonserver's "empty final response", sent only on request.
  return response.final && enableEmptyFinalResponse ? bareAnswer(request, '', true) : undefined;
}

/**
 * Runs one decoupled request through the core and writes its responses to `sink`. Resolves once
 * the request is complete (its last message queued). A request the core refuses before any
 * response (validation, scheduling, an instance that cannot take it) is answered as a non-decoupled
 * failure is, through `onRefused`.
 */
export async function runDecoupled(
  core: InferenceServer,
  request: ModelInferRequest,
  decoded: ResolvedInferRequest,
  receivedAt: bigint,
  sink: DecoupledSink,
  onRefused: (error: ServerError, accepted: boolean) => void,
): Promise<void> {
  const trace = core.trace.sample(decoded.core.modelName);
  trace?.capture('GRPC_WAITREAD_START', receivedAt);
  trace?.capture('GRPC_WAITREAD_END', receivedAt);
  let responses = 0;
  let failed = false;
  let accepted = false;
  let sending = false;
  let sawFinal = false;
  const onResponse = (r: CoreStreamResponse): void => {
    if (failed) return;
    responses += 1;
    if (r.final) sawFinal = true;
    if (responses === 1) trace?.capture('INFER_RESPONSE_COMPLETE', process.hrtime.bigint());
    if (r.error !== undefined && sink.fail !== undefined) {
      failed = true;
      sink.fail(r.error);
      return;
    }
    const answer = decoupledAnswer(request, r, decoded.enableEmptyFinalResponse);
    if (answer === undefined) return;
    if (!sending) {
      sending = true;
      trace?.capture('GRPC_SEND_START', process.hrtime.bigint());
    }
    sink.write(answer);
  };
  try {
    await core.infer(
      { ...decoded.core, onResponse },
      {
        model: decoded.model,
        ...(trace !== undefined ? { trace } : {}),
        onAccepted: () => {
          accepted = true;
        },
      },
    );
  } catch (error) {
    // Refused before any response (or the instance could not take it at all).
    if (responses === 0) onRefused(toServerError(error), accepted);
    // Failed after some responses without a final one: the error ends the request.
    else if (!sawFinal) onResponse({ error: toServerError(error), final: true });
  }
  // GRPC_SEND_END once the request's last message has been handed to grpc-js.
  if (trace !== undefined) {
    sink.afterWrites(() => {
      trace.capture('GRPC_SEND_END', process.hrtime.bigint());
      trace.finish();
    });
  }
}
