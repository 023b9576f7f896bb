/**
 * The statistics extension's JSON body, written by hand so 64-bit counters above 2^53 stay exact
 * (`JSON.stringify` cannot print a bigint, and a number would round).
 * @packageDocumentation
 */
import type { DurationStat, ModelStatisticsSnapshot } from './model-statistics.js';

function duration(d: DurationStat): string {
  return `{"count":${d.count},"ns":${d.ns}}`;
}

/** One `model_stats[]` element. */
export function renderModelStatisticsJson(s: ModelStatisticsSnapshot): string {
  const i = s.inference_stats;
  const inference =
    `{"success":${duration(i.success)},"fail":${duration(i.fail)},"queue":${duration(i.queue)},` +
    `"compute_input":${duration(i.compute_input)},"compute_infer":${duration(i.compute_infer)},` +
    `"compute_output":${duration(i.compute_output)},"cache_hit":${duration(i.cache_hit)},` +
    `"cache_miss":${duration(i.cache_miss)}}`;
  const batches = s.batch_stats
    .map(
      (b) =>
        `{"batch_size":${b.batch_size},"compute_input":${duration(b.compute_input)},` +
        `"compute_infer":${duration(b.compute_infer)},"compute_output":${duration(b.compute_output)}}`,
    )
    .join(',');
  return (
    `{"name":${JSON.stringify(s.name)},"version":${JSON.stringify(s.version)},` +
    `"last_inference":${s.last_inference},"inference_count":${s.inference_count},` +
    `"execution_count":${s.execution_count},"inference_stats":${inference},"response_stats":{},` +
    `"batch_stats":[${batches}],"memory_usage":[]}`
  );
}

/** The full `GET v2/models[/{m}[/versions/{v}]]/stats` body: `{"model_stats":[…]}`. */
export function renderStatisticsJson(snapshots: readonly ModelStatisticsSnapshot[]): string {
  return `{"model_stats":[${snapshots.map(renderModelStatisticsJson).join(',')}]}`;
}
