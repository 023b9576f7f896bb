/**
 * A small seeded pseudo-random generator, so Poisson gaps, sequence lengths and sequence data
 * streams repeat from run to run with the same `options.seed`.
 * @packageDocumentation
 */

/** Uniform numbers in [0, 1) from a 32-bit seed (a mulberry32-style generator). */
export class SeededRandom {
  #state: number;

  /** @param seed - any integer; the same seed gives the same numbers */
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** The next number in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** An integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** An exponentially distributed number of mean `mean` (Poisson-process gaps). */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }
}
