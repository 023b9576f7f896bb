/**
 * Custom metric families of models (`pb_utils.MetricFamily`), rendered where prometheus-cpp's
 * registry puts them: after the server's own families of the same kind.
 * @packageDocumentation
 */
import type { CustomFamilySnapshot, CustomMetricKind } from '../statistics/custom-metrics.js';
import { formatValue, labelSet, pushHeader, pushHistogram } from './prometheus-text.js';

/** Appends the custom families of `kind`. */
export function pushCustomFamilies(
  out: string[],
  families: readonly CustomFamilySnapshot[],
  kind: CustomMetricKind,
): void {
  for (const f of families) {
    if (f.kind !== kind) continue;
    pushHeader(out, f.name, f.description, kind);
    for (const m of f.metrics) {
      if (m.histogram !== undefined) pushHistogram(out, f.name, m.labels, m.histogram);
      else out.push(`${f.name}${labelSet(m.labels)} ${formatValue(m.value)}`);
    }
  }
}
