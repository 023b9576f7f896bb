/**
 * `--metrics-config <setting>=<value>` (repeatable), read as Triton's metric reporter reads it:
 *
 * - `counter_latencies=false` drops the five `nv_inference_*_duration_us` counters (anything but
 *   `false` keeps them);
 * - `summary_latencies=true` adds the `nv_inference_*_summary_us` summaries;
 * - `summary_quantiles=<q>:<error>,…` replaces the summaries' quantiles (a pair without `:` or with
 *   a number that does not parse is skipped with Triton's error line; none left = the defaults);
 * - `histogram_latencies=true` adds `nv_inference_first_response_histogram_ms` for decoupled models.
 *
 * Unknown settings are accepted and have no effect, as in Triton. The last occurrence of a setting
 * wins (Triton walks them in order).
 * @packageDocumentation
 */

/** One `{quantile, error}` pair of a summary. */
export interface SummaryQuantile {
  readonly quantile: number;
  readonly error: number;
}

/** Triton's default summary quantiles (`MetricReporterConfig::quantiles_`). */
export const DEFAULT_SUMMARY_QUANTILES: readonly SummaryQuantile[] = [
  { quantile: 0.5, error: 0.05 },
  { quantile: 0.9, error: 0.01 },
  { quantile: 0.95, error: 0.001 },
  { quantile: 0.99, error: 0.001 },
  { quantile: 0.999, error: 0.001 },
];

/** Triton's default buckets of `nv_inference_first_response_histogram_ms` (milliseconds). */
export const DEFAULT_FIRST_RESPONSE_BUCKETS: readonly number[] = [100, 500, 2000, 5000];

/** The one histogram family `model_metrics.metric_control` may configure. */
export const FIRST_RESPONSE_HISTOGRAM = 'nv_inference_first_response_histogram_ms';

/** What `--metrics-config` selects. */
export interface MetricsConfig {
  /** `counter_latencies` (default true). */
  readonly counterLatencies: boolean;
  /** `summary_latencies` (default false). */
  readonly summaryLatencies: boolean;
  /** `summary_quantiles` (default {@link DEFAULT_SUMMARY_QUANTILES}). */
  readonly summaryQuantiles: readonly SummaryQuantile[];
  /** `histogram_latencies` (default false). */
  readonly histogramLatencies: boolean;
}

/** The configuration without any `--metrics-config`. */
export const DEFAULT_METRICS_CONFIG: MetricsConfig = {
  counterLatencies: true,
  summaryLatencies: false,
  summaryQuantiles: DEFAULT_SUMMARY_QUANTILES,
  histogramLatencies: false,
};

/** A malformed `--metrics-config` value (tritonserver refuses to start). */
export class MetricsConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MetricsConfigError';
  }
}

/**
 * Splits one `--metrics-config` value into setting and value, with tritonserver's check: exactly
 * `<setting>=<value>`, both non-empty, no `,` before the `=` (no config groups).
 * @throws MetricsConfigError with tritonserver's message.
 */
export function splitMetricsConfigOption(arg: string): { setting: string; value: string } {
  const equals = arg.indexOf('=');
  const setting = equals < 0 ? '' : arg.slice(0, equals);
  const value = equals < 0 ? '' : arg.slice(equals + 1);
  if (equals < 0 || setting.includes(',') || setting === '' || value === '') {
    throw new MetricsConfigError(`--metrics-config option format is <setting>=<value>. Got ${arg}`);
  }
  return { setting, value };
}

/** The leading decimal number of `text` as C's `strtod` reads it, or `undefined` when none. */
function leadingNumber(text: string): number | undefined {
  const m = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(text);
  return m === null ? undefined : Number(m[0]);
}

/**
 * Parses `summary_quantiles` (`"<q>:<err>,<q>:<err>"`); `report` receives Triton's error line for
 * each pair it skips.
 */
export function parseSummaryQuantiles(text: string, report: (line: string) => void): SummaryQuantile[] {
  const out: SummaryQuantile[] = [];
  for (const pair of text.split(',')) {
    const colon = pair.indexOf(':');
    if (colon < 0) {
      report(`Invalid option: [${pair}]. No ':' delimiter found. Expected format is <quantile>:<error>`);
      continue;
    }
    const quantile = leadingNumber(pair.slice(0, colon));
    const error = leadingNumber(pair.slice(colon + 1));
    if (quantile === undefined || error === undefined) {
      report(`Invalid option: [${pair}]. Error: stod`);
      continue;
    }
    out.push({ quantile, error });
  }
  return out;
}

/**
 * The configuration of a list of `--metrics-config` values (already split); `report` receives the
 * error lines Triton logs for unusable quantiles.
 */
export function metricsConfigFrom(
  settings: readonly { readonly setting: string; readonly value: string }[],
  report: (line: string) => void = () => undefined,
): MetricsConfig {
  let config: MetricsConfig = DEFAULT_METRICS_CONFIG;
  for (const { setting, value } of settings) {
    if (setting === 'counter_latencies' && value === 'false') config = { ...config, counterLatencies: false };
    if (setting === 'summary_latencies' && value === 'true') config = { ...config, summaryLatencies: true };
    if (setting === 'histogram_latencies' && value === 'true')
      config = { ...config, histogramLatencies: true };
    if (setting === 'summary_quantiles') {
      const quantiles = parseSummaryQuantiles(value, report);
      if (quantiles.length > 0) config = { ...config, summaryQuantiles: quantiles };
    }
  }
  return config;
}
