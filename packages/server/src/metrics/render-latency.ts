/**
 * The optional per-model latency families of `--metrics-config`: the first-response histogram
 * (`histogram_latencies=true`, decoupled models) and the five `_summary_us` summaries
 * (`summary_latencies=true`), with Triton's names and HELP texts (the three compute summaries carry
 * the same HELP as their counters in Triton, kept here).
 * @packageDocumentation
 */
import type { LatencyName, ModelStatisticsSnapshot } from '../statistics/model-statistics.js';
import { pushHeader, pushHistogram, pushSummary } from './prometheus-text.js';

const SUMMARY_FAMILIES: readonly { name: string; help: string; latency: LatencyName }[] = [
  {
    name: 'nv_inference_request_summary_us',
    help: 'Summary of inference request duration in microseconds (includes cached requests)',
    latency: 'request',
  },
  {
    name: 'nv_inference_queue_summary_us',
    help: 'Summary of inference queuing duration in microseconds (includes cached requests)',
    latency: 'queue',
  },
  {
    name: 'nv_inference_compute_input_summary_us',
    help: 'Cumulative compute input duration in microseconds (does not include cached requests)',
    latency: 'computeInput',
  },
  {
    name: 'nv_inference_compute_infer_summary_us',
    help: 'Cumulative compute inference duration in microseconds (does not include cached requests)',
    latency: 'computeInfer',
  },
  {
    name: 'nv_inference_compute_output_summary_us',
    help: 'Cumulative inference compute output duration in microseconds (does not include cached requests)',
    latency: 'computeOutput',
  },
];

/** The first-response histogram family (the one `model_metrics` can give buckets to). */
export const FIRST_RESPONSE_HELP = 'Duration from request to first response in milliseconds';

function modelLabels(s: ModelStatisticsSnapshot): [string, string][] {
  return [
    ['model', s.name],
    ['version', s.version],
  ];
}

/** `nv_inference_first_response_histogram_ms` of the versions that keep it. */
export function pushLatencyHistograms(out: string[], models: readonly ModelStatisticsSnapshot[]): void {
  const shown = models.filter((s) => s.latencyMetrics?.firstResponse !== undefined);
  if (shown.length === 0) return;
  const name = 'nv_inference_first_response_histogram_ms';
  pushHeader(out, name, FIRST_RESPONSE_HELP, 'histogram');
  for (const s of shown) {
    const h = s.latencyMetrics?.firstResponse;
    if (h !== undefined) pushHistogram(out, name, modelLabels(s), h);
  }
}

/**
 * The `_summary_us` families of the versions that keep them (the request summary is left out for a
 * version served through the response cache, as Triton does).
 */
export function pushLatencySummaries(out: string[], models: readonly ModelStatisticsSnapshot[]): void {
  for (const f of SUMMARY_FAMILIES) {
    const shown = models.filter(
      (s) => s.latencyMetrics?.summaries !== undefined && !(f.latency === 'request' && s.responseCache),
    );
    if (shown.length === 0) continue;
    pushHeader(out, f.name, f.help, 'summary');
    for (const s of shown) {
      const summary = s.latencyMetrics?.summaries?.[f.latency];
      if (summary !== undefined) pushSummary(out, f.name, modelLabels(s), summary);
    }
  }
}
