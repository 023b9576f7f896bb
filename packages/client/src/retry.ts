/**
 * Retry policy: which failures are retried, and how long to wait before the next attempt.
 * @packageDocumentation
 */
import { TritonConnectionError, TritonServerError, type TritonError } from './errors.js';

/** Backoff settings. */
export interface BackoffPolicy {
  /** First delay in ms; doubles per attempt. */
  readonly baseDelayMs: number;
  /** Cap of a single delay (also caps `Retry-After`). */
  readonly maxDelayMs: number;
}

/** Whether a failure may be retried: connection errors and HTTP 503 (server unavailable). */
export function isRetryable(error: TritonError): boolean {
  return (
    error instanceof TritonConnectionError || (error instanceof TritonServerError && error.status === 503)
  );
}

/**
 * Parses a `Retry-After` header (delta seconds or an HTTP date) into milliseconds from `now`.
 * @returns `undefined` when absent or unparseable.
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Delay before retry number `attempt` (0-based): exponential with "equal jitter" (half fixed, half
 * random), or the server's `Retry-After` when given; both capped at `maxDelayMs`.
 */
export function backoffDelay(
  attempt: number,
  policy: BackoffPolicy,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxDelayMs);
  const exp = Math.min(policy.baseDelayMs * 2 ** attempt, policy.maxDelayMs);
  return exp / 2 + random() * (exp / 2);
}

/** Resolves after `ms`, or rejects with the signal's reason when it fires first. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
