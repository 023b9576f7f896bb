/**
 * The tuner's CSV: one row per measurement, with Model Analyzer's column names where it has one
 * (`metrics-model-inference.csv`: Model, Batch, Concurrency, Model Config Path, Instance Group,
 * Max Batch Size, Satisfies Constraints, Throughput (infer/sec), p99 Latency (ms), …) and ours
 * after them (dynamic batching settings, server breakdown, the generator's CPU, stability).
 * @packageDocumentation
 */
import { instanceGroupLabel } from './search-space.js';
import type { TuneMeasurement } from './select.js';

/** The header row, in order. */
export const TUNE_CSV_COLUMNS = [
  'Model',
  'Batch',
  'Concurrency',
  'Model Config Path',
  'Instance Group',
  'Max Batch Size',
  'Dynamic Batching',
  'Preferred Batch Sizes',
  'Max Queue Delay (us)',
  'Intra Op Thread Count',
  'Satisfies Constraints',
  'Throughput (infer/sec)',
  'p50 Latency (ms)',
  'p90 Latency (ms)',
  'p95 Latency (ms)',
  'p99 Latency (ms)',
  'Avg Latency (ms)',
  'Server Queue (ms)',
  'Server Compute Input (ms)',
  'Server Compute Infer (ms)',
  'Server Compute Output (ms)',
  'Client Send/Recv (ms)',
  'Generator CPU per Request (us)',
  'Requests',
  'Errors',
  'Stable',
] as const;

/** A CSV field, quoted when it holds a comma, quote or line break. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

function fixed(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '';
}

/** One row's fields. */
export function tuneCsvRow(modelName: string, m: TuneMeasurement): string[] {
  const s = m.settings;
  const db = s.dynamicBatching;
  return [
    modelName,
    String(m.batchSize),
    String(m.concurrency),
    m.variant,
    instanceGroupLabel(s),
    String(s.maxBatchSize),
    db.enabled ? 'Enabled' : 'Disabled',
    db.enabled ? db.preferredBatchSize.join(' ') : '',
    db.enabled ? String(db.maxQueueDelayMicroseconds) : '',
    s.intraOpThreadCount === undefined ? '' : String(s.intraOpThreadCount),
    m.satisfiesConstraints ? 'Yes' : 'No',
    fixed(m.throughput, 1),
    fixed(m.latencyMs.p50, 3),
    fixed(m.latencyMs.p90, 3),
    fixed(m.latencyMs.p95, 3),
    fixed(m.latencyMs.p99, 3),
    fixed(m.latencyMs.avg, 3),
    fixed(m.serverQueueMs, 3),
    fixed(m.serverComputeInputMs, 3),
    fixed(m.serverComputeInferMs, 3),
    fixed(m.serverComputeOutputMs, 3),
    fixed(m.clientSendRecvMs, 3),
    fixed(m.generatorCpuUsPerRequest, 1),
    String(m.requestCount),
    String(m.errorCount),
    m.stable ? 'Yes' : 'No',
  ];
}

/** The whole CSV (header + one line per measurement, `\n` line ends). */
export function tuneCsv(modelName: string, measurements: readonly TuneMeasurement[]): string {
  const lines = [TUNE_CSV_COLUMNS.join(',')];
  for (const m of measurements) lines.push(tuneCsvRow(modelName, m).map(csvField).join(','));
  return `${lines.join('\n')}\n`;
}
