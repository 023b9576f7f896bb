/**
 * The per-step in-flight bound of an ensemble (`ensemble_scheduling.max_inflight_requests`, Triton's
 * `StepInflightRequestLimiter`): one limiter per step of an ensemble version, shared by every request
 * of that version, lets at most `max` requests of that step run at once. A step waits for a slot
 * before it is sent; a cancelled request stops waiting at once (its step then fails CANCELLED).
 * `max` 0 is no limit. Unlike Triton, waiting blocks no thread: a decoupled producer keeps sending
 * and its responses wait in the ensemble for a slot of the next step.
 * @packageDocumentation
 */

/** A FIFO counting limiter with cancellation. */
export class StepLimiter {
  readonly #max: number;
  #inflight = 0;
  readonly #waiting: (() => void)[] = [];

  /** @param max - most requests at once; 0 = unbounded. */
  constructor(max: number) {
    this.#max = max;
  }

  /** Requests holding a slot now. */
  get inflight(): number {
    return this.#inflight;
  }

  /**
   * Takes a slot, waiting while `max` are taken. Resolves at once when `signal` is (or becomes)
   * aborted: the caller checks the signal and gives the slot back through {@link release}.
   */
  acquire(signal?: AbortSignal): Promise<void> {
    if (this.#max === 0 || this.#inflight < this.#max || signal?.aborted === true) {
      this.#inflight += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        this.#inflight += 1;
        resolve();
      };
      const onAbort = (): void => {
        const i = this.#waiting.indexOf(grant);
        if (i >= 0) this.#waiting.splice(i, 1);
        this.#inflight += 1;
        resolve();
      };
      this.#waiting.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Gives a slot back; the longest waiter takes it. */
  release(): void {
    if (this.#inflight === 0) return;
    this.#inflight -= 1;
    if (this.#max !== 0 && this.#inflight < this.#max) this.#waiting.shift()?.();
  }
}
