/**
 * Number formatting shared by the console report and the CSV, so both print figures the way
 * perf_analyzer's C++ streams do: integer microseconds truncated (it divides nanoseconds by 1000
 * in unsigned integers) and doubles in the stream's default notation (six significant digits,
 * trailing zeros dropped, exponent form outside 1e-5 … 1e6).
 * @packageDocumentation
 */
import type { LoadLevelResult, ServerSideStats } from '../types.js';

/** A double as `std::ostream << double` prints it by default (`%g` with precision 6). */
export function formatDouble(value: number): string {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? 'nan' : value > 0 ? 'inf' : '-inf';
  if (value === 0) return '0';
  const [mantissa = '0', exponentText = '0'] = value.toExponential(5).split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? '-' : '+';
    return `${stripZeros(mantissa)}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return stripZeros(value.toFixed(Math.max(0, 5 - exponent)));
}

function stripZeros(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

/** A duration in µs as perf_analyzer prints it: whole microseconds, truncated, never negative. */
export function usec(value: number): number {
  return Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/** The percentiles perf_analyzer reports: 50, 90, 95, 99 and the `--percentile` one, ascending. */
export function reportedPercentiles(percentile: number | undefined): number[] {
  const set = new Set([50, 90, 95, 99]);
  if (percentile !== undefined) set.add(percentile);
  return [...set].sort((a, b) => a - b);
}

/** The latency a level was stabilised on (average, or the `--percentile` one), in µs. */
export function stabilizingLatencyUs(result: LoadLevelResult, percentile: number | undefined): number {
  return percentile === undefined
    ? usec(result.client.avgLatencyUs)
    : usec(result.client.percentileUs[percentile] ?? 0);
}

/** Server-side averages (µs, truncated) as perf_analyzer derives them for one model. */
interface ServerBreakdown {
  readonly queueUs: number;
  readonly computeInputUs: number;
  readonly computeInferUs: number;
  readonly computeOutputUs: number;
  /** Compute input + infer + output (perf_analyzer's "compute"). */
  readonly computeUs: number;
  readonly cacheHitUs: number;
  readonly cacheMissUs: number;
}

/** The per-model averages of `stats` (not summed over composing models). */
export function serverBreakdown(stats: ServerSideStats): ServerBreakdown {
  const computeInputUs = usec(stats.computeInputUs);
  const computeInferUs = usec(stats.computeInferUs);
  const computeOutputUs = usec(stats.computeOutputUs);
  return {
    queueUs: usec(stats.queueUs),
    computeInputUs,
    computeInferUs,
    computeOutputUs,
    computeUs: usec(stats.computeInputUs + stats.computeInferUs + stats.computeOutputUs),
    cacheHitUs: usec(stats.cacheHitUs),
    cacheMissUs: usec(stats.cacheMissUs),
  };
}

/**
 * An ensemble's totals as perf_analyzer adds them up: each composing model's average queue and
 * compute time (recursively for nested ensembles), plus the ensemble's own cache times.
 */
export function ensembleTotals(stats: ServerSideStats): {
  readonly queueUs: number;
  readonly computeUs: number;
  readonly cacheHitUs: number;
  readonly cacheMissUs: number;
} {
  let queueUs = 0;
  let computeUs = 0;
  let cacheHitUs = usec(stats.cacheHitUs);
  let cacheMissUs = usec(stats.cacheMissUs);
  for (const composing of stats.composing) {
    if (composing.stats.composing.length === 0) {
      const own = serverBreakdown(composing.stats);
      queueUs += own.queueUs;
      computeUs += own.computeUs;
      cacheHitUs += own.cacheHitUs;
      cacheMissUs += own.cacheMissUs;
    } else {
      const nested = ensembleTotals(composing.stats);
      queueUs += nested.queueUs;
      computeUs += nested.computeUs;
      cacheHitUs += nested.cacheHitUs;
      cacheMissUs += nested.cacheMissUs;
    }
  }
  return { queueUs, computeUs, cacheHitUs, cacheMissUs };
}
