/**
 * `ModelStreamInfer`: each request on the stream is read and run as `ModelInfer` would be, and
 * answered on the stream in request order (the order tritonserver keeps for models that are not
 * decoupled). A request that fails is answered with `error_message` and the stream stays open, as
 * tritonserver answers it (see {@link failureAnswer}); with the `triton_grpc_error: true` header the
 * first failure ends the stream with its gRPC status instead. Every successful response carries
 * `triton_final_response: true`: the core has no decoupled backend, so every request gets exactly
 * one response (a decoupled model's config is accepted here and answered one-to-one).
 * @packageDocumentation
 */
import { once, setMaxListeners } from 'node:events';

import type { ServerDuplexStream } from '@grpc/grpc-js';
import {
  ModelStreamInferResponseSchema,
  type ModelInferRequest,
  type ModelStreamInferResponse,
} from '@tritonserver-ts/client/protocol/grpc';

import { toServerError } from '../../core/errors.js';
import type { InferenceServer } from '../../core/server.js';
import { boolParameter, encodeGrpcInferResponse } from '../infer-response.js';
import { message } from '../messages.js';
import { grpcErrorFor } from '../status.js';
import { isUnparsable, type UNPARSABLE } from '../unparsable.js';
import { readInferRequest, runInfer, type InferHandlerOptions } from './infer.js';

/** tritonserver's header that turns per-request stream errors into the stream's status. */
export const TRITON_GRPC_ERROR_HEADER = 'triton_grpc_error';

/** What a stream reports to the front end (in-flight tracking). */
export interface StreamHooks {
  /** Called once when the stream has finished (ended, failed or cancelled). */
  readonly onDone: () => void;
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
  let tail: Promise<void> = Promise.resolve();
  const finish = (): void => {
    if (finished) return;
    finished = true;
    hooks.onDone();
  };

  call.on('cancelled', () => {
    controller.abort();
    finish();
  });
  call.on('error', () => {
    controller.abort();
    finish();
  });

  let readsDone = false;
  const endReads = (): void => {
    if (readsDone) return;
    readsDone = true;
    // Answer what is pending, then end with OK.
    void tail.then(() => {
      if (finished) return;
      call.end();
      finish();
    });
  };

  call.on('data', (request: ModelInferRequest | typeof UNPARSABLE) => {
    if (finished || readsDone) return;
    if (isUnparsable(request)) {
      // gRPC C++ reports a message that does not decode as a failed read, which tritonserver
      // takes for the end of the client's messages.
      endReads();
      return;
    }
    const receivedAt = process.hrtime.bigint();
    // Inference starts at once (requests run concurrently); answers are written in request order.
    let accepted = false;
    const result: Promise<{ answer: ModelStreamInferResponse; sent?: () => void } | Error> = (async () => {
      try {
        const decoded = readInferRequest(
          core,
          request,
          { metadata: call.metadata, signal: controller.signal, receivedAt },
          { ...options, refuseDecoupled: false },
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
    tail = tail.then(async () => {
      const outcome = await result;
      if (finished) {
        // The stream is gone: the trace is still finished (and written).
        if (!(outcome instanceof Error)) outcome.sent?.();
        return;
      }
      if (outcome instanceof Error) {
        // triton_grpc_error: the first failure ends the stream with its status.
        controller.abort();
        call.emit('error', grpcErrorFor(outcome));
        finish();
        return;
      }
      const written = call.write(outcome.answer);
      outcome.sent?.();
      // Backpressure: the next answer waits until the client has taken this one.
      if (!written) await once(call, 'drain');
    });
  });

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
    errorMessage,
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
