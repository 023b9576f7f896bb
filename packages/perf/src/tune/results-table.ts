/**
 * The tuner's console output: a results table (one row per measurement) and the summary sentence
 * naming the winner, after Model Analyzer's summary ("… delivers maximum throughput under the
 * given constraints").
 * @packageDocumentation
 */
import { describeSettings, instanceGroupLabel } from './search-space.js';
import type { TuneMeasurement } from './select.js';
import type { TuneResult } from './tuner.js';

function fixed(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

/** The constraints in words: "p99 latency ≤ 50 ms, throughput ≥ 100 infer/sec", or "none". */
export function constraintsText(result: Pick<TuneResult, 'options'>): string {
  const o = result.options;
  const parts: string[] = [];
  if (o.latencyBudgetMs !== undefined)
    parts.push(`${o.latencyMetric} latency <= ${String(o.latencyBudgetMs)} ms`);
  if (o.minThroughput !== undefined) parts.push(`throughput >= ${String(o.minThroughput)} infer/sec`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

/** The best measurement of the default configuration satisfying the constraints (for the comparison). */
function defaultBest(result: TuneResult): TuneMeasurement | undefined {
  const name = result.space.variants[0]?.name;
  return result.ranking.find((r) => r.variant === name)?.best;
}

/** The summary sentence: what won, by how much, under which constraints. */
export function summarySentence(result: TuneResult): string {
  const configs = new Set(result.measurements.map((m) => m.variant)).size;
  const head = `In ${String(result.measurements.length)} measurement${result.measurements.length === 1 ? '' : 's'} across ${String(configs)} configuration${configs === 1 ? '' : 's'}`;
  const best = result.best;
  if (best === undefined) {
    const unstableOnly =
      result.options.requireStable && result.measurements.some((m) => m.satisfiesConstraints);
    return unstableOnly
      ? `${head}, no configuration satisfies the constraints (${constraintsText(result)}) with a stable measurement (--allow-unstable lets unstable ones win).`
      : `${head}, no configuration satisfies the constraints (${constraintsText(result)}).`;
  }
  const metric = result.options.latencyMetric;
  let sentence = `${head}, ${best.variant} (${describeSettings(best.settings)}) delivers maximum throughput under the given constraints (${constraintsText(result)}): ${fixed(best.throughput, 1)} infer/sec at concurrency ${String(best.concurrency)}, ${metric} latency ${fixed(best.latencyMs[metric], 2)} ms.`;
  const base = defaultBest(result);
  if (base !== undefined && best.variant !== base.variant && base.throughput > 0) {
    sentence += ` That is ${(best.throughput / base.throughput).toFixed(2)}x the default configuration's ${fixed(base.throughput, 1)} infer/sec.`;
  }
  return sentence;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The results table: one row per measurement, the winner marked with `*`. */
export function formatTuneTable(result: TuneResult): string {
  const metric = result.options.latencyMetric;
  const header = [
    'Model Config Path',
    'Instance Group',
    'Max Batch Size',
    'Dynamic Batching',
    'Concurrency',
    'Throughput (infer/sec)',
    `${metric} Latency (ms)`,
    'Server Queue (ms)',
    'Server Compute (ms)',
    'Satisfies Constraints',
    'Stable',
  ];
  const rows = result.measurements.map((m) => {
    const db = m.settings.dynamicBatching;
    const dbText = db.enabled
      ? [
          'Enabled',
          db.preferredBatchSize.length > 0 ? `pref ${db.preferredBatchSize.join('/')}` : '',
          db.maxQueueDelayMicroseconds > 0 ? `${String(db.maxQueueDelayMicroseconds)}us` : '',
        ]
          .filter((p) => p !== '')
          .join(' ')
      : 'Disabled';
    const winner = m === result.best ? '*' : ' ';
    return [
      `${winner}${m.variant}`,
      instanceGroupLabel(m.settings),
      String(m.settings.maxBatchSize),
      dbText,
      String(m.concurrency),
      fixed(m.throughput, 1),
      fixed(m.latencyMs[metric], 2),
      fixed(m.serverQueueMs, 2),
      fixed(m.serverComputeInputMs + m.serverComputeInferMs + m.serverComputeOutputMs, 2),
      m.satisfiesConstraints ? 'Yes' : 'No',
      m.stable ? 'Yes' : 'No',
    ];
  });
  const out = [table(header, rows)];
  for (const c of result.configs) {
    if (c.error !== undefined) out.push(`${c.variant.name}: not measured: ${c.error}`);
    if (c.skippedConcurrency.length > 0) {
      out.push(
        `${c.variant.name}: concurrency ${c.skippedConcurrency.join(', ')} skipped (over the latency budget)`,
      );
    }
  }
  return out.join('\n');
}
