/**
 * Request bodies in flight across every connection share one budget (`--http-max-inflight-body-bytes`,
 * issue 14 item 7): a request reserves its declared `Content-Length` before reading (a chunked body
 * as it arrives, a decompressed body as it is produced) and returns the reservation when its handler
 * settles — reply, error, client gone or exception. A request the budget cannot hold is answered 503
 * with `Retry-After`, like a full queue. Triton has no such budget; it is this project's, documented
 * in the README. (Responses a client does not read are bounded in `response-writer.ts`.)
 * @packageDocumentation
 */
import { ServerError } from '../common/errors.js';

/** Default budget for request bodies in flight: four bodies of Triton's default maximum size. */
export const DEFAULT_MAX_INFLIGHT_BODY_BYTES = 256 * 1024 * 1024;
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

  /** Returns `bytes` of this reservation to the budget (memory it no longer holds), keeping the rest. */
  shrink(bytes: number): void {
    const n = Math.min(Math.max(0, bytes), this.#bytes);
    if (this.#released || n === 0) return;
    this.#bytes -= n;
    this.budget.give(n);
  }

  /** Returns everything to the budget (idempotent). */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.budget.give(this.#bytes);
    this.#bytes = 0;
  }
}
