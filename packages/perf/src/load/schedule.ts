/**
 * When the rate modes issue requests: the gaps between requests (constant, Poisson, or replayed
 * `--request-intervals`) and a precise wait for the next one.
 * @packageDocumentation
 */
import { SeededRandom } from './rng.js';

/** The next gap in nanoseconds. */
export type GapSource = () => number;

/** Gaps of `--request-distribution constant` at `rate` requests per second. */
export function constantGaps(rate: number): GapSource {
  const gap = 1e9 / rate;
  return () => gap;
}

/** Gaps of `--request-distribution poisson` (exponential, mean 1/rate), seeded. */
export function poissonGaps(rate: number, seed: number): GapSource {
  const random = new SeededRandom(seed);
  const mean = 1e9 / rate;
  return () => random.exponential(mean);
}

/** Gaps of `--request-intervals` (µs each), replayed in a loop. */
export function intervalGaps(intervalsUs: readonly number[]): GapSource {
  const gaps = intervalsUs.map((us) => us * 1000);
  let index = 0;
  return () => {
    const gap = gaps[index] ?? 0;
    index = index + 1 === gaps.length ? 0 : index + 1;
    return gap;
  };
}

/**
 * Below this the last bit of a wait is spent yielding to the event loop (`setImmediate`) rather
 * than on a timer. Node timers have a 1 ms grain and fire up to ~1 ms late; spinning the last
 * 1.5 ms would put every request on time but costs ~1.5 ms of CPU per request (measured:
 * 4.8 vs 3.3 ms of process CPU per request at 100/s, generator and in-process server), while the
 * timer alone keeps the median gap within 0.1 ms of the schedule at that rate. So only a short
 * final stretch is spun. Requests are never issued early, and the schedule is absolute: a late
 * wake-up does not shift the requests after it.
 */
const SPIN_NS = 250_000;

/**
 * Waits for deadlines on `process.hrtime.bigint()`: a timer for the coarse part, a short yield
 * loop for the last 0.25 ms. {@link Pacer.cancel} ends the current wait at once (stop, or a new
 * level).
 */
export class Pacer {
  #timer: NodeJS.Timeout | undefined;
  #wake: (() => void) | undefined;
  #cancelled = false;

  /** Resolves true at `deadlineNs`, or false as soon as {@link Pacer.cancel} is called. */
  async waitUntil(deadlineNs: bigint): Promise<boolean> {
    this.#cancelled = false;
    for (;;) {
      if (this.#cancelled) return false;
      const remaining = Number(deadlineNs - process.hrtime.bigint());
      if (remaining <= 0) return true;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        if (remaining > SPIN_NS) {
          this.#timer = setTimeout(resolve, Math.max(1, Math.floor((remaining - SPIN_NS) / 1e6)));
        } else {
          setImmediate(resolve);
        }
      });
      this.#wake = undefined;
      this.#timer = undefined;
    }
  }

  /** Ends the wait in progress (it resolves false). */
  cancel(): void {
    this.#cancelled = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#wake?.();
  }
}
