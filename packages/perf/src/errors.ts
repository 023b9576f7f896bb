/**
 * The perf engine's one error type, with stable codes callers can branch on.
 * @packageDocumentation
 */

/**
 * What went wrong:
 * - `USAGE`: bad or conflicting command-line options / perf options.
 * - `MODEL`: the model is missing, not ready, or its metadata/config cannot be read.
 * - `INPUT_DATA`: `--input-data`, `--shape` or the data files do not fit the model.
 * - `SERVER`: the server failed a request the run depends on (statistics, health).
 * - `SHARED_MEMORY`: registering or using shared memory failed.
 * - `UNSTABLE`: measurements did not stabilise within `-r` trials.
 * - `TUNE`: the tuner could not apply or measure a configuration.
 */
export type PerfErrorCode =
  'USAGE' | 'MODEL' | 'INPUT_DATA' | 'SERVER' | 'SHARED_MEMORY' | 'UNSTABLE' | 'TUNE';

/** An error of the perf engine; `code` is stable, `message` is for people. */
export class PerfError extends Error {
  /** The stable code. */
  readonly code: PerfErrorCode;

  /**
   * @param code - the stable code
   * @param message - what went wrong, for people
   * @param options - `cause`: the underlying error
   */
  constructor(code: PerfErrorCode, message: string, options?: { readonly cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.name = 'PerfError';
  }
}

/** True when `error` is a {@link PerfError} (optionally with `code`). */
export function isPerfError(error: unknown, code?: PerfErrorCode): error is PerfError {
  return error instanceof PerfError && (code === undefined || error.code === code);
}
