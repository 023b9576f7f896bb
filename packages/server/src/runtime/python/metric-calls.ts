/**
 * The stub's custom-metric calls (`pb_utils.MetricFamily` / `Metric`), answered from the server's
 * {@link CustomMetricsRegistry}. Messages (this project's design; Triton's Python backend uses its
 * own shared-memory messages for the same calls):
 *
 * - stub → server `{type: 'metric', call?, op, …}` with `op` one of `family_new` (`name`,
 *   `description`, `kind`), `metric_new` (`family`, `labels`, `buckets?`), `increment` / `set` /
 *   `observe` (`metric`, `value`), `value` (`metric`), `metric_delete` (`metric`) and
 *   `family_delete` (`family`); the two deletes carry no `call` and get no answer;
 * - server → stub `{type: 'metric_response', call, id?, value?, error?}`.
 *
 * Numbers travel as decimal text (`"inf"`, `"nan"` included), which JSON cannot carry as numbers.
 * The registry's message goes back as `error`; the stub adds the Python backend's prefix.
 * @packageDocumentation
 */
import {
  CustomMetricError,
  type CustomMetricKind,
  type CustomMetricsRegistry,
} from '../../statistics/custom-metrics.js';

/** A number from the stub's text (Python's `repr` of a float). */
export function numberFromWire(value: unknown): number {
  if (typeof value === 'number') return value;
  const text = String(value).trim().toLowerCase();
  if (text === 'inf' || text === '+inf' || text === 'infinity') return Infinity;
  if (text === '-inf' || text === '-infinity') return -Infinity;
  if (text === 'nan') return Number.NaN;
  const n = Number(text);
  if (text === '' || Number.isNaN(n)) throw new CustomMetricError(`not a number: '${String(value)}'`);
  return n;
}

/** A number as the stub reads it back (`float(text)`). */
function numberToWire(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  return String(value);
}

const KINDS: readonly CustomMetricKind[] = ['counter', 'gauge', 'histogram'];

/** TritonJson's text for a label value that is not a string. */
const NON_STRING_LABEL = 'attempt to access JSON non-string as string';

function labelsFrom(value: unknown): Record<string, string> {
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new CustomMetricError(NON_STRING_LABEL);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v !== 'string') throw new CustomMetricError(NON_STRING_LABEL);
    out[k] = v;
  }
  return out;
}

/**
 * Runs one metric call of stub `owner`; returns the answer to send (`undefined` for the deletes).
 * Without a registry every call fails.
 */
export function answerMetricCall(
  registry: CustomMetricsRegistry | undefined,
  owner: unknown,
  header: Readonly<Record<string, unknown>>,
): Record<string, unknown> | undefined {
  const op = String(header.op);
  const call = header.call;
  try {
    if (registry === undefined)
      throw new CustomMetricError('custom metrics are not available in this server');
    const id = (key: string): number => Number(header[key]);
    switch (op) {
      case 'metric_delete':
        registry.deleteMetric(owner, id('metric'));
        return undefined;
      case 'family_delete':
        registry.deleteFamily(owner, id('family'));
        return undefined;
      case 'family_new': {
        const kind = header.kind as CustomMetricKind;
        if (!KINDS.includes(kind)) throw new CustomMetricError('Unknown metric kind');
        const family = registry.createFamily(owner, String(header.name), String(header.description), kind);
        return { type: 'metric_response', call, id: family };
      }
      case 'metric_new': {
        const buckets = Array.isArray(header.buckets) ? header.buckets.map(numberFromWire) : undefined;
        const metric = registry.createMetric(owner, id('family'), labelsFrom(header.labels), buckets);
        return { type: 'metric_response', call, id: metric };
      }
      case 'increment':
        registry.increment(owner, id('metric'), numberFromWire(header.value));
        return { type: 'metric_response', call };
      case 'set':
        registry.set(owner, id('metric'), numberFromWire(header.value));
        return { type: 'metric_response', call };
      case 'observe':
        registry.observe(owner, id('metric'), numberFromWire(header.value));
        return { type: 'metric_response', call };
      case 'value':
        return { type: 'metric_response', call, value: numberToWire(registry.value(owner, id('metric'))) };
      default:
        throw new CustomMetricError(`unknown metric operation '${op}'`);
    }
  } catch (error) {
    if (call === undefined) return undefined;
    const message = error instanceof Error ? error.message : String(error);
    return { type: 'metric_response', call, error: message };
  }
}
