/**
 * Pieces of the Prometheus text format as Triton's prometheus-cpp writes them: HELP/TYPE lines,
 * label sets (extra labels such as `quantile` or `le` after the metric's own), and values (`%.16g`
 * style numbers, `Nan`, `+Inf`, `-Inf`).
 * @packageDocumentation
 */
import type { HistogramSnapshot } from '../statistics/histogram.js';
import type { SummarySnapshot } from '../statistics/quantile-summary.js';

/** Escapes a label value (backslash, double quote, newline). */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** `# HELP` and `# TYPE` of a family. */
export function pushHeader(out: string[], name: string, help: string, type: string): void {
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
}

/** `{a="1",b="2"}` (empty string for no labels). */
export function labelSet(labels: readonly (readonly [string, string])[]): string {
  if (labels.length === 0) return '';
  return `{${labels.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}`;
}

/** A number as prometheus-cpp prints a double: 16 significant digits, shortest form. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'Nan';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  if (value === 0) return '0';
  const exponent = Math.floor(Math.log10(Math.abs(value)));
  if (exponent < -4 || exponent >= 16) {
    const [mantissa, exp] = value.toExponential(15).split('e') as [string, string];
    const m = mantissa.includes('.') ? mantissa.replace(/\.?0+$/, '') : mantissa;
    const e = Number(exp);
    return `${m}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  const fixed = value.toPrecision(16);
  return fixed.includes('.') ? fixed.replace(/\.?0+$/, '') : fixed;
}

/** The lines of one summary metric: `_count`, `_sum`, then one line per quantile. */
export function pushSummary(
  out: string[],
  name: string,
  labels: readonly (readonly [string, string])[],
  s: SummarySnapshot,
): void {
  out.push(
    `${name}_count${labelSet(labels)} ${s.count}`,
    `${name}_sum${labelSet(labels)} ${formatValue(s.sum)}`,
  );
  for (const [q, v] of s.quantiles) {
    out.push(`${name}${labelSet([...labels, ['quantile', formatValue(q)]])} ${formatValue(v)}`);
  }
}

/** The lines of one histogram metric: `_count`, `_sum`, then each cumulative `_bucket`. */
export function pushHistogram(
  out: string[],
  name: string,
  labels: readonly (readonly [string, string])[],
  h: HistogramSnapshot,
): void {
  out.push(
    `${name}_count${labelSet(labels)} ${h.count}`,
    `${name}_sum${labelSet(labels)} ${formatValue(h.sum)}`,
  );
  for (const [le, n] of h.buckets) {
    out.push(`${name}_bucket${labelSet([...labels, ['le', formatValue(le)]])} ${n}`);
  }
}
