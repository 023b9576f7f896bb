/**
 * Typed errors of the runtime (backends and model instances), each with a stable `code`.
 * @packageDocumentation
 */

/** Stable codes of {@link BackendError}. */
export type BackendErrorCode =
  /** The model's backend/platform cannot run in tritonserver-ts (python, tensorrt, pytorch, …). */
  | 'BACKEND_UNAVAILABLE'
  /** An instance could not be created (session creation failed, no GPU for KIND_GPU, …). */
  | 'INSTANCE_CREATION_FAILED'
  /** Inputs handed to `execute` do not match the model (missing input, wrong datatype or shape). */
  | 'INVALID_EXECUTION_INPUT'
  /** The backend failed while running (ORT error, unexpected output shape or type). */
  | 'EXECUTION_FAILED'
  /** `execute` was called after `dispose`. */
  | 'INSTANCE_DISPOSED';

/** A backend problem. `message` is meant for users (it becomes a Triton error string). */
export class BackendError extends Error {
  /** Stable error code. */
  readonly code: BackendErrorCode;

  constructor(code: BackendErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'BackendError';
    this.code = code;
  }
}
