/**
 * A Prometheus summary as Triton's prometheus-cpp keeps one: a cumulative count and sum, and
 * quantiles estimated over a sliding window (60 s in 5 age buckets) with the targeted-quantile
 * algorithm of Cormode, Korn, Muthukrishnan and Srivastava ("CKMS"), so a summary holds a bounded
 * number of samples whatever the request rate. A quantile with no observation in the window is NaN.
 * @packageDocumentation
 */
import type { SummaryQuantile } from './metrics-config.js';

interface Sample {
  value: number;
  /** Rank difference to the previous sample. */
  g: number;
  /** Rank uncertainty. */
  delta: number;
}

interface Target {
  readonly quantile: number;
  /** Error weight below the target rank. */
  readonly u: number;
  /** Error weight above the target rank. */
  readonly v: number;
}

const BUFFER_SIZE = 500;

/** One CKMS estimator (insertions are buffered and merged in sorted batches). */
class TargetedQuantiles {
  private readonly targets: readonly Target[];
  private samples: Sample[] = [];
  private buffer: number[] = [];
  private count = 0;

  constructor(quantiles: readonly SummaryQuantile[]) {
    this.targets = quantiles.map(({ quantile, error }) => ({
      quantile,
      u: (2 * error) / (1 - quantile),
      v: (2 * error) / quantile,
    }));
  }

  insert(value: number): void {
    this.buffer.push(value);
    if (this.buffer.length === BUFFER_SIZE) {
      this.merge();
      this.compress();
    }
  }

  get(quantile: number): number {
    this.merge();
    this.compress();
    const samples = this.samples;
    if (samples.length === 0) return Number.NaN;
    const desired = Math.trunc(quantile * this.count);
    const bound = desired + this.allowableError(desired) / 2;
    let rankMin = 0;
    for (let i = 1; i < samples.length; i++) {
      const prev = samples[i - 1] as Sample;
      const cur = samples[i] as Sample;
      rankMin += prev.g;
      if (rankMin + cur.g + cur.delta > bound) return prev.value;
    }
    return (samples[samples.length - 1] as Sample).value;
  }

  reset(): void {
    this.samples = [];
    this.buffer = [];
    this.count = 0;
  }

  /** The rank error allowed at `rank` for the tightest target (bounded by the sample count). */
  private allowableError(rank: number): number {
    const size = this.samples.length;
    let min = size + 1;
    for (const t of this.targets) {
      const error = rank <= t.quantile * size ? t.u * (size - rank) : t.v * rank;
      if (error < min) min = error;
    }
    return min;
  }

  private merge(): void {
    if (this.buffer.length === 0) return;
    const values = this.buffer.sort((a, b) => a - b);
    this.buffer = [];
    const samples = this.samples;
    let start = 0;
    if (samples.length === 0) {
      samples.push({ value: values[0] as number, g: 1, delta: 0 });
      start = 1;
      this.count += 1;
    }
    let at = 0;
    for (let i = start; i < values.length; i++) {
      const value = values[i] as number;
      while (at < samples.length && (samples[at] as Sample).value < value) at++;
      const delta = at === 0 || at === samples.length ? 0 : Math.floor(this.allowableError(at)) - 1;
      samples.splice(at, 0, { value, g: 1, delta: Math.max(0, delta) });
      this.count += 1;
      at++;
    }
  }

  private compress(): void {
    const samples = this.samples;
    if (samples.length < 2) return;
    // The first and last samples (the exact minimum and maximum) are never merged away.
    let i = 1;
    while (i + 1 < samples.length) {
      const prev = samples[i] as Sample;
      const next = samples[i + 1] as Sample;
      if (i + 1 < samples.length - 1 && prev.g + next.g + next.delta <= this.allowableError(i + 1)) {
        next.g += prev.g;
        samples.splice(i, 1);
      } else {
        i++;
      }
    }
  }
}

/** Options of {@link QuantileSummary}. */
export interface QuantileSummaryOptions {
  /** Window length (default 60 s, prometheus-cpp's). */
  readonly maxAgeMs?: number;
  /** Buckets the window rotates through (default 5). */
  readonly ageBuckets?: number;
  /** ms clock (default `Date.now`; injectable for tests). */
  readonly now?: () => number;
}

/** A snapshot of a {@link QuantileSummary}. */
export interface SummarySnapshot {
  readonly count: number;
  readonly sum: number;
  /** `[quantile, value]` in configured order. */
  readonly quantiles: readonly (readonly [number, number])[];
}

/** See the module documentation. */
export class QuantileSummary {
  private readonly quantiles: readonly SummaryQuantile[];
  private readonly buckets: TargetedQuantiles[];
  private readonly rotationMs: number;
  private readonly now: () => number;
  private current = 0;
  private lastRotation: number;
  private count = 0;
  private sum = 0;

  constructor(quantiles: readonly SummaryQuantile[], options: QuantileSummaryOptions = {}) {
    const ageBuckets = options.ageBuckets ?? 5;
    this.quantiles = quantiles;
    this.buckets = Array.from({ length: ageBuckets }, () => new TargetedQuantiles(quantiles));
    this.rotationMs = (options.maxAgeMs ?? 60_000) / ageBuckets;
    this.now = options.now ?? Date.now;
    this.lastRotation = this.now();
  }

  /** Records one value. */
  observe(value: number): void {
    this.rotate();
    for (const b of this.buckets) b.insert(value);
    this.count += 1;
    this.sum += value;
  }

  /** Count, sum and each quantile's current estimate. */
  snapshot(): SummarySnapshot {
    const bucket = this.rotate();
    return {
      count: this.count,
      sum: this.sum,
      quantiles: this.quantiles.map((q) => [q.quantile, bucket.get(q.quantile)] as const),
    };
  }

  private rotate(): TargetedQuantiles {
    let elapsed = this.now() - this.lastRotation;
    while (elapsed > this.rotationMs) {
      (this.buckets[this.current] as TargetedQuantiles).reset();
      this.current = (this.current + 1) % this.buckets.length;
      elapsed -= this.rotationMs;
      this.lastRotation += this.rotationMs;
    }
    return this.buckets[this.current] as TargetedQuantiles;
  }
}
