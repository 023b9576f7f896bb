/**
 * The errors schedulers reject requests with: Triton's texts and status kinds (each front end maps
 * the kind to its wire's status), plus the `reason` label they count under in
 * `nv_inference_request_failure`.
 * @packageDocumentation
 */
import { ServerError } from '../common/errors.js';
import type { FailureReason } from '../statistics/model-statistics.js';

/** Triton's text when a priority queue already holds `max_queue_size` requests (UNAVAILABLE → 503). */
export const QUEUE_FULL_MESSAGE = 'Exceeds maximum queue size';
/** Triton's text when a queued request passes its timeout under `timeout_action: REJECT` (UNAVAILABLE → 503). */
export const TIMEOUT_EXPIRED_MESSAGE = 'Request timeout expired';
/** Triton's text for a request cancelled before it ran (CANCELLED → 400). */
export const CANCELLED_MESSAGE = 'Request was cancelled';
/** Triton's text when a request reaches a scheduler that is shutting down (UNAVAILABLE → 503). */
export const STOPPING_MESSAGE =
  'Server is stopping, scheduler for model has stopped accepting new inference requests';

/** Errors a scheduler produces, with the failure reason they are counted under. */
export class SchedulerRejection {
  /** @internal */
  private constructor() {}

  /** Queue limit reached. */
  static queueFull(): ServerError {
    return new ServerError('UNAVAILABLE', QUEUE_FULL_MESSAGE);
  }
  /** Queue timeout expired under `REJECT`. */
  static timeoutExpired(): ServerError {
    return new ServerError('UNAVAILABLE', TIMEOUT_EXPIRED_MESSAGE);
  }
  /** The client went away while the request was queued. */
  static cancelled(): ServerError {
    return new ServerError('CANCELLED', CANCELLED_MESSAGE);
  }
  /** The scheduler is draining. */
  static stopping(): ServerError {
    return new ServerError('UNAVAILABLE', STOPPING_MESSAGE);
  }
  /** The backend failed; its message is kept (Triton passes backend errors through as INTERNAL). */
  static executionFailed(error: unknown): ServerError {
    if (error instanceof ServerError) return error;
    const message = error instanceof Error ? error.message : String(error);
    return new ServerError('INTERNAL', message, { cause: error });
  }
}

/** The `nv_inference_request_failure` reason for an error a scheduler produced. */
export function failureReasonOf(error: ServerError): FailureReason {
  if (error.kind === 'CANCELLED') return 'CANCELED';
  if (error.message === QUEUE_FULL_MESSAGE || error.message === TIMEOUT_EXPIRED_MESSAGE) return 'REJECTED';
  if (error.message === STOPPING_MESSAGE) return 'REJECTED';
  return 'BACKEND';
}
