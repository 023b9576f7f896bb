/**
 * A Prometheus histogram: fixed upper bounds, a count per bucket (reported cumulatively, with the
 * implicit `+Inf` bucket last), a total count and a sum, as prometheus-cpp keeps one.
 * @packageDocumentation
 */

/** Bounds that are not strictly increasing (prometheus-cpp's message). */
export const UNSORTED_BUCKETS_MESSAGE = 'Bucket Boundaries must be strictly sorted';

/** A snapshot of a {@link Histogram}. */
export interface HistogramSnapshot {
  readonly count: number;
  readonly sum: number;
  /** `[upper bound, cumulative count]`, the last one `[Infinity, count]`. */
  readonly buckets: readonly (readonly [number, number])[];
}

/** See the module documentation. */
export class Histogram {
  readonly bounds: readonly number[];
  private readonly counts: number[];
  private sum = 0;

  /** @throws RangeError with prometheus-cpp's message when `bounds` are not strictly increasing. */
  constructor(bounds: readonly number[]) {
    for (let i = 1; i < bounds.length; i++) {
      if (!((bounds[i] as number) > (bounds[i - 1] as number)))
        throw new RangeError(UNSORTED_BUCKETS_MESSAGE);
    }
    this.bounds = [...bounds];
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  /** Records one value (into the first bucket whose bound is ≥ it). */
  observe(value: number): void {
    let i = 0;
    while (i < this.bounds.length && value > (this.bounds[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += value;
  }

  snapshot(): HistogramSnapshot {
    const buckets: (readonly [number, number])[] = [];
    let cumulative = 0;
    for (let i = 0; i <= this.bounds.length; i++) {
      cumulative += this.counts[i] as number;
      buckets.push([i < this.bounds.length ? (this.bounds[i] as number) : Infinity, cumulative]);
    }
    return { count: cumulative, sum: this.sum, buckets };
  }
}
