/**
 * perf_analyzer's stopping rules for one load level (`DetermineStability`, `IsDoneProfiling`):
 * the last 3 windows are stable when none has zero throughput and, for throughput and for the
 * stabilising latency (average, or the `--percentile` one), max ÷ min ≤ 1 + s/100.
 * @packageDocumentation
 */

/** How many windows the stability check looks at (perf_analyzer's `stability_window`). */
export const STABILITY_WINDOW = 3;

/** One window as the stopping rules see it (a failed window: throughput 0, latency unbounded). */
interface WindowLoad {
  readonly throughput: number;
  /** The stabilising latency in ns; `undefined` for a window that failed. */
  readonly latencyNs: bigint | undefined;
}

function ratioWithin(values: readonly number[], threshold: number): boolean {
  const max = Math.max(...values);
  const min = Math.min(...values);
  return max / min <= 1 + threshold;
}

/**
 * The last {@link STABILITY_WINDOW} windows are stable (`checkLatency` false: throughput only, used
 * for perf_analyzer's async-mode fallback).
 * @param stabilityPercentage - `-s` (10 = ±10 %)
 */
export function isStable(
  windows: readonly WindowLoad[],
  stabilityPercentage: number,
  checkLatency = true,
): boolean {
  if (windows.length < STABILITY_WINDOW) return false;
  const last = windows.slice(-STABILITY_WINDOW);
  if (last.some((w) => w.throughput === 0 || w.latencyNs === undefined)) return false;
  const threshold = stabilityPercentage / 100;
  if (
    !ratioWithin(
      last.map((w) => w.throughput),
      threshold,
    )
  )
    return false;
  return (
    !checkLatency ||
    ratioWithin(
      last.map((w) => Number(w.latencyNs)),
      threshold,
    )
  );
}

/**
 * Some of the last {@link STABILITY_WINDOW} windows reached `-l` (perf_analyzer stops measuring
 * the level then). Always false with no limit (0) or fewer than 3 windows.
 */
export function exceedsLatencyThreshold(windows: readonly WindowLoad[], latencyThresholdMs: number): boolean {
  if (latencyThresholdMs === 0 || windows.length < STABILITY_WINDOW) return false;
  const limitNs = BigInt(Math.round(latencyThresholdMs * 1e6));
  return windows.slice(-STABILITY_WINDOW).some((w) => w.latencyNs === undefined || w.latencyNs >= limitNs);
}

/** A merged level's stabilising latency reached `-l` (compared in whole ms, as perf_analyzer). */
export function overLatencyThreshold(latencyNs: bigint | undefined, latencyThresholdMs: number): boolean {
  if (latencyThresholdMs === 0 || latencyNs === undefined) return false;
  return Number(latencyNs / 1_000_000n) >= latencyThresholdMs;
}
