/**
 * Prometheus text exposition (format 0.0.4) of Triton's metrics, with Triton's names, HELP texts,
 * types and labels (`model`, `version`, and `reason` on failures; labels sorted by name as Triton's
 * prometheus-cpp prints them), so Triton's Grafana dashboards and alert rules work unchanged.
 * @packageDocumentation
 */
import type { CustomFamilySnapshot } from '../statistics/custom-metrics.js';
import { FAILURE_REASONS, type ModelStatisticsSnapshot } from '../statistics/model-statistics.js';
import { escapeLabelValue } from './prometheus-text.js';
import { pushCustomFamilies } from './render-custom.js';
import { pushLatencyHistograms, pushLatencySummaries } from './render-latency.js';
import type { SystemSample } from './system.js';

/** The content type of the exposition. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge';
  readonly value: (s: ModelStatisticsSnapshot) => bigint | number;
  /** Only for the versions this holds for (absent = every version); no family at all when none. */
  readonly only?: (s: ModelStatisticsSnapshot) => boolean;
}

/** The response cache's per-model counters: only for versions served through the cache (Triton). */
const cached = (s: ModelStatisticsSnapshot): boolean => s.responseCache;

/** Per-model families, in Triton's order. (`nv_inference_request_failure` is rendered separately.) */
const MODEL_FAMILIES: readonly Family[] = [
  {
    name: 'nv_inference_count',
    help: 'Number of inferences performed (does not include cached requests)',
    type: 'counter',
    value: (s) => s.inference_count,
  },
  {
    name: 'nv_inference_exec_count',
    help: 'Number of model executions performed (does not include cached requests)',
    type: 'counter',
    value: (s) => s.execution_count,
  },
  {
    name: 'nv_inference_request_duration_us',
    help: 'Cumulative inference request duration in microseconds (includes cached requests)',
    type: 'counter',
    value: (s) => s.durationsUs.request,
  },
  {
    name: 'nv_inference_queue_duration_us',
    help: 'Cumulative inference queuing duration in microseconds (includes cached requests)',
    type: 'counter',
    value: (s) => s.durationsUs.queue,
  },
  {
    name: 'nv_inference_compute_input_duration_us',
    help: 'Cumulative compute input duration in microseconds (does not include cached requests)',
    type: 'counter',
    value: (s) => s.durationsUs.computeInput,
  },
  {
    name: 'nv_inference_compute_infer_duration_us',
    help: 'Cumulative compute inference duration in microseconds (does not include cached requests)',
    type: 'counter',
    value: (s) => s.durationsUs.computeInfer,
  },
  {
    name: 'nv_inference_compute_output_duration_us',
    help: 'Cumulative inference compute output duration in microseconds (does not include cached requests)',
    type: 'counter',
    value: (s) => s.durationsUs.computeOutput,
  },
  {
    name: 'nv_cache_num_hits_per_model',
    help: 'Number of cache hits per model',
    type: 'counter',
    value: (s) => s.inference_stats.cache_hit.count,
    only: cached,
  },
  {
    name: 'nv_cache_hit_duration_per_model',
    help: 'Total cache hit duration per model, in microseconds',
    type: 'counter',
    value: (s) => s.durationsUs.cacheHit,
    only: cached,
  },
  {
    name: 'nv_cache_num_misses_per_model',
    help: 'Number of cache misses per model',
    type: 'counter',
    value: (s) => s.inference_stats.cache_miss.count,
    only: cached,
  },
  {
    name: 'nv_cache_miss_duration_per_model',
    help: 'Total cache miss (insert+lookup) duration per model, in microseconds',
    type: 'counter',
    value: (s) => s.durationsUs.cacheMiss,
    only: cached,
  },
  {
    name: 'nv_inference_pending_request_count',
    help: 'Instantaneous number of pending requests awaiting execution per-model.',
    type: 'gauge',
    value: (s) => s.pendingRequests,
  },
];

export { escapeLabelValue };

function labels(s: ModelStatisticsSnapshot, reason?: string): string {
  const r = reason === undefined ? '' : `,reason="${reason}"`;
  return `{model="${escapeLabelValue(s.name)}"${r},version="${escapeLabelValue(s.version)}"}`;
}

function header(out: string[], name: string, help: string, type: string): void {
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
}

/**
 * Families Triton creates only under `counter_latencies` (default true): the five latency counters
 * and the per-model cache counters.
 */
const LATENCY_COUNTERS: ReadonlySet<string> = new Set([
  'nv_inference_request_duration_us',
  'nv_inference_queue_duration_us',
  'nv_inference_compute_input_duration_us',
  'nv_inference_compute_infer_duration_us',
  'nv_inference_compute_output_duration_us',
  'nv_cache_num_hits_per_model',
  'nv_cache_hit_duration_per_model',
  'nv_cache_num_misses_per_model',
  'nv_cache_miss_duration_per_model',
]);

/** Options of {@link renderMetrics}. */
export interface RenderMetricsOptions {
  /** Host sample for the `nv_cpu_*` gauges; omitted = no CPU metrics (`--allow-cpu-metrics=false`). */
  readonly system?: SystemSample;
  /** `--metrics-config counter_latencies` (default true). */
  readonly counterLatencies?: boolean;
  /** Models' custom families (`pb_utils.MetricFamily`), after the server's of the same kind. */
  readonly custom?: readonly CustomFamilySnapshot[];
}

/** Renders every metric for `models` (one snapshot per loaded model version). */
export function renderMetrics(
  models: readonly ModelStatisticsSnapshot[],
  options: RenderMetricsOptions = {},
): string {
  const out: string[] = [];
  const counterLatencies = options.counterLatencies !== false;
  // prometheus-cpp's registry prints counters, then gauges, then histograms, then summaries.
  const shownFamilies = MODEL_FAMILIES.filter((f) => counterLatencies || !LATENCY_COUNTERS.has(f.name));
  const pushModelFamilies = (type: Family['type']): void => {
    for (const f of shownFamilies) {
      if (f.type !== type) continue;
      const only = f.only;
      const shown = only === undefined ? models : models.filter((s) => only(s));
      if (shown.length === 0) continue;
      header(out, f.name, f.help, f.type);
      for (const s of shown) out.push(`${f.name}${labels(s)} ${f.value(s)}`);
    }
  };
  if (models.length > 0) {
    header(
      out,
      'nv_inference_request_success',
      'Number of successful inference requests, all batch sizes',
      'counter',
    );
    for (const s of models)
      out.push(`nv_inference_request_success${labels(s)} ${s.inference_stats.success.count}`);
    header(
      out,
      'nv_inference_request_failure',
      'Number of failed inference requests, all batch sizes',
      'counter',
    );
    for (const s of models) {
      for (const reason of FAILURE_REASONS) {
        out.push(`nv_inference_request_failure${labels(s, reason)} ${s.failuresByReason[reason]}`);
      }
    }
    pushModelFamilies('counter');
  }
  const custom = options.custom ?? [];
  pushCustomFamilies(out, custom, 'counter');
  pushModelFamilies('gauge');
  const sys = options.system;
  if (sys !== undefined) {
    header(out, 'nv_cpu_utilization', 'CPU utilization rate [0.0 - 1.0]', 'gauge');
    out.push(`nv_cpu_utilization ${sys.cpuUtilization}`);
    header(out, 'nv_cpu_memory_total_bytes', 'CPU total memory (RAM), in bytes', 'gauge');
    out.push(`nv_cpu_memory_total_bytes ${sys.memoryTotalBytes}`);
    header(out, 'nv_cpu_memory_used_bytes', 'CPU used memory (RAM), in bytes', 'gauge');
    out.push(`nv_cpu_memory_used_bytes ${sys.memoryUsedBytes}`);
  }
  pushCustomFamilies(out, custom, 'gauge');
  pushLatencyHistograms(out, models);
  pushCustomFamilies(out, custom, 'histogram');
  pushLatencySummaries(out, models);
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}
