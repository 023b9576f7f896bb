/**
 * The HTTP wire's statistics converter: {@link ModelStatisticsReport}s as the statistics extension's
 * JSON body, written by hand so 64-bit counters above 2^53 stay exact (`JSON.stringify` cannot print
 * a bigint, and a number would round). Key order is Triton's.
 * @packageDocumentation
 */
import type {
  InferResponseStatistics,
  ModelStatisticsReport,
  StatisticDuration,
} from '../statistics/report.js';

function duration(d: StatisticDuration): string {
  return `{"count":${d.count},"ns":${d.ns}}`;
}

function responseStats(stats: Readonly<Record<string, InferResponseStatistics>>): string {
  const entries = Object.entries(stats).map(
    ([key, r]) =>
      `${JSON.stringify(key)}:{"compute_infer":${duration(r.compute_infer)},` +
      `"compute_output":${duration(r.compute_output)},"success":${duration(r.success)},` +
      `"fail":${duration(r.fail)},"empty_response":${duration(r.empty_response)},` +
      `"cancel":${duration(r.cancel)}}`,
  );
  return `{${entries.join(',')}}`;
}

/** One `model_stats[]` element. */
export function renderModelStatisticsJson(s: ModelStatisticsReport): string {
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
  const memory = s.memory_usage
    .map((m) => `{"type":${JSON.stringify(m.type)},"id":${m.id},"byte_size":${m.byte_size}}`)
    .join(',');
  return (
    `{"name":${JSON.stringify(s.name)},"version":${JSON.stringify(s.version)},` +
    `"last_inference":${s.last_inference},"inference_count":${s.inference_count},` +
    `"execution_count":${s.execution_count},"inference_stats":${inference},` +
    `"response_stats":${responseStats(s.response_stats)},` +
    `"batch_stats":[${batches}],"memory_usage":[${memory}]}`
  );
}

/** The full `GET v2/models[/{m}[/versions/{v}]]/stats` body: `{"model_stats":[…]}`. */
export function renderStatisticsJson(reports: readonly ModelStatisticsReport[]): string {
  return `{"model_stats":[${reports.map(renderModelStatisticsJson).join(',')}]}`;
}
