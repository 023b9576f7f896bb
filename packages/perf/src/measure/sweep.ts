/**
 * The load levels of a run, as perf_analyzer's linear search walks them: `start`, `start + step`,
 * … while ≤ `end` (end 0: no limit, until a level misses `-l` or is unstable); one level for
 * `--request-intervals`.
 * @packageDocumentation
 */
import type { LoadMode } from '../options/perf-options.js';

/**
 * The levels of `load`, lazily (an open concurrency range never ends by itself: the caller stops
 * when a level fails its threshold). Request-rate levels are computed as `start + i × step` so a
 * fractional step does not drift.
 */
export function* sweepLevels(load: LoadMode): Generator<number, void, undefined> {
  if (load.kind === 'request_intervals') {
    yield meanRate(load.intervalsUs);
    return;
  }
  const { start, end, step } = load.range;
  for (let i = 0; ; i += 1) {
    const level = load.kind === 'concurrency' ? start + i * step : roundRate(start + i * step);
    if (end !== 0 && level > end + 1e-9) return;
    yield level;
    if (step <= 0) return;
  }
}

function roundRate(rate: number): number {
  return Math.round(rate * 1e9) / 1e9;
}

/** Requests per second of a `--request-intervals` schedule (µs gaps). */
export function meanRate(intervalsUs: readonly number[]): number {
  if (intervalsUs.length === 0) return 0;
  const mean = intervalsUs.reduce((a, b) => a + b, 0) / intervalsUs.length;
  return mean > 0 ? 1e6 / mean : 0;
}
