/**
 * The memory one client can pin in the HTTP front end is bounded: request bodies in flight across
 * every connection share one budget (`--http-max-inflight-body-bytes`); a response its client does
 * not read is held for at most `--http-send-timeout-secs` (node:http already stops reading a
 * connection whose unsent output passes its high-water mark, so pipelined requests cannot pile up
 * responses). Triton has no such budget; these limits are this project's, documented in the README.
 * @packageDocumentation
 */
import { ServerError } from '../core/errors.js';

/** Default budget for request bodies in flight: four bodies of Triton's default maximum size. */
export const DEFAULT_MAX_INFLIGHT_BODY_BYTES = 256 * 1024 * 1024;
/** Default time a response may take to reach the client before its connection is closed. */
export const DEFAULT_SEND_TIMEOUT_MS = 60_000;
/** Seconds a refused client is asked to wait (`Retry-After`). */
export const BODY_BUDGET_RETRY_AFTER_SECS = 1;

/**
 * Refused because request bodies in flight already use the budget: UNAVAILABLE (503) with
 * `Retry-After`, like a full queue — the request is fine, the server is busy.
 */
export class BodyBudgetExceededError extends ServerError {
  constructor(limit: number) {
    super(
      'UNAVAILABLE',
      `request bodies in flight exceed the server's limit of ${limit} bytes (--http-max-inflight-body-bytes); retry later`,
    );
    this.name = 'BodyBudgetExceededError';
  }
}

/** Bytes reserved out of a shared limit. */
export class MemoryBudget {
  #used = 0;

  constructor(readonly limit: number) {}

  /** Bytes reserved now. */
  get used(): number {
    return this.#used;
  }

  /** Bytes still free. */
  get available(): number {
    return this.limit - this.#used;
  }

  /** A reservation that grows as a body arrives and is released once, when its request ends. */
  open(): Reservation {
    return new Reservation(this);
  }

  /** @internal */
  take(bytes: number): boolean {
    if (this.#used + bytes > this.limit) return false;
    this.#used += bytes;
    return true;
  }

  /** @internal */
  give(bytes: number): void {
    this.#used -= bytes;
  }
}

/** One request's share of a {@link MemoryBudget}. */
export class Reservation {
  #bytes = 0;
  #released = false;

  constructor(private readonly budget: MemoryBudget) {}

  /** Bytes held. */
  get bytes(): number {
    return this.#bytes;
  }

  /** The budget's limit. */
  get limit(): number {
    return this.budget.limit;
  }

  /** Bytes the budget could still grant this reservation. */
  get available(): number {
    return this.budget.available;
  }

  /**
   * Adds `bytes`.
   * @throws BodyBudgetExceededError when the budget cannot grant them (nothing is added).
   */
  grow(bytes: number): void {
    if (this.#released || !this.budget.take(bytes)) throw new BodyBudgetExceededError(this.budget.limit);
    this.#bytes += bytes;
  }

  /** Returns everything to the budget (idempotent). */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.budget.give(this.#bytes);
    this.#bytes = 0;
  }
}
