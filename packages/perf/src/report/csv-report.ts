/**
 * perf_analyzer's `-f` CSV (and `--verbose-csv`): the same columns in the same order, rows sorted
 * by throughput ascending, every time in whole microseconds. The breakdown columns add up to the
 * client's average latency: Client Send + Network+Server Send/Recv + Server Queue + Server Compute
 * Input/Infer/Output (+ Server Cache Hit/Miss) + Client Recv, where "Network+Server Send/Recv" is
 * what is left of the client's wait after the server's accounted time (never below 0).
 *
 * For an ensemble, perf_analyzer also writes one CSV per composing model, named
 * `<model>_v<version>.<file>`; {@link composingCsvReports} returns those.
 * @packageDocumentation
 */
import { basename, dirname, join } from 'node:path';

import type { PerfOptions } from '../options/perf-options.js';
import type { LoadLevelResult, ModelProfile, PerfRun, ServerSideStats } from '../types.js';
import { reportedLevels } from './console-report.js';
import { formatDouble, reportedPercentiles, serverBreakdown, usec } from './format.js';

/** perf_analyzer's stderr note when the server's accounted time exceeds the client's wait. */
export const SMALL_SAMPLE_WARNING =
  'Server average accounted time was larger than client average wait time due to small sample size. ' +
  'Increase the measurement interval with `--measurement-interval`.';

/** A CSV's text and the warnings perf_analyzer prints (to stderr) while writing it. */
export interface CsvReport {
  readonly text: string;
  readonly warnings: readonly string[];
}

/** The CSV header's columns for these options and model. */
export function csvColumns(options: PerfOptions, model: ModelProfile): string[] {
  const columns = [options.load.kind === 'concurrency' ? 'Concurrency' : 'Request Rate'];
  columns.push('Inferences/Second');
  if (model.decoupled) columns.push('Response Throughput');
  columns.push('Client Send');
  columns.push(
    'Network+Server Send/Recv',
    'Server Queue',
    'Server Compute Input',
    'Server Compute Infer',
    'Server Compute Output',
  );
  if (model.responseCacheEnabled) columns.push('Server Cache Hit', 'Server Cache Miss');
  columns.push('Client Recv');
  for (const p of reportedPercentiles(options.percentile)) columns.push(`p${p} latency`);
  if (options.verboseCsv) {
    if (options.percentile === undefined) columns.push('Avg latency');
    columns.push('request/response', 'response wait');
    if (options.collectMetrics) {
      columns.push('Avg GPU Utilization', 'Avg GPU Power Usage', 'Max GPU Memory Usage', 'Total GPU Memory');
    }
  }
  return columns;
}

/** The levels in CSV order: kept levels (stable, within `-l`) by throughput ascending. */
function csvLevels(options: PerfOptions, run: PerfRun): LoadLevelResult[] {
  return reportedLevels(options, run).sort((a, b) => a.client.throughput - b.client.throughput);
}

function levelCell(result: LoadLevelResult): string {
  return result.mode === 'concurrency' ? String(result.level) : formatDouble(result.level);
}

function gpuCell(values: Readonly<Record<string, number>> | undefined, integer: boolean): string {
  if (values === undefined) return '';
  return Object.keys(values)
    .sort()
    .map((uuid) => {
      const value = values[uuid] ?? 0;
      return `${uuid}:${integer ? String(Math.round(value)) : formatDouble(value)};`;
    })
    .join('');
}

/** The server columns (Network+Server … Server Compute Output, cache) and the network remainder. */
function serverCells(
  server: ServerSideStats,
  clientWaitUs: number,
  cache: boolean,
): { readonly cells: string[]; readonly networkUs: number } {
  const own = serverBreakdown(server);
  const accounted = own.queueUs + own.computeUs + own.cacheHitUs + own.cacheMissUs;
  const networkUs = clientWaitUs > accounted ? clientWaitUs - accounted : 0;
  const cells = [
    String(networkUs),
    String(own.queueUs),
    String(own.computeInputUs),
    String(own.computeInferUs),
    String(own.computeOutputUs),
  ];
  if (cache) cells.push(String(own.cacheHitUs), String(own.cacheMissUs));
  return { cells, networkUs };
}

/**
 * The `-f` CSV of a run (header + one row per kept level). Empty text when no level was kept:
 * perf_analyzer then writes no file.
 */
export function formatCsvReport(options: PerfOptions, run: PerfRun): CsvReport {
  const levels = csvLevels(options, run);
  if (levels.length === 0) return { text: '', warnings: [] };
  const model = run.model;
  const warnings: string[] = [];
  const rows = [csvColumns(options, model).join(',')];
  for (const result of levels) {
    const client = result.client;
    const send = usec(client.avgSendUs);
    const recv = usec(client.avgRecvUs);
    const wait = usec(client.avgResponseWaitUs);
    const cells = [levelCell(result), formatDouble(client.throughput)];
    if (model.decoupled) cells.push(formatDouble(client.responseThroughput));
    cells.push(String(send));
    const clientWaitUs = Math.max(0, usec(client.avgLatencyUs) - send - recv);
    const server = serverCells(result.server, clientWaitUs, model.responseCacheEnabled);
    if (server.networkUs === 0) warnings.push(SMALL_SAMPLE_WARNING);
    cells.push(...server.cells);
    cells.push(String(recv));
    for (const p of reportedPercentiles(options.percentile)) {
      cells.push(String(usec(client.percentileUs[p] ?? 0)));
    }
    if (options.verboseCsv) {
      if (options.percentile === undefined) cells.push(String(usec(client.avgLatencyUs)));
      cells.push(String(send + recv), String(wait));
      if (options.collectMetrics) {
        const metrics = result.metrics;
        cells.push(
          gpuCell(metrics?.gpuUtilization, false),
          gpuCell(metrics?.gpuPowerUsage, false),
          gpuCell(metrics?.gpuMemoryUsedBytes, true),
          gpuCell(metrics?.gpuMemoryTotalBytes, true),
        );
      }
    }
    rows.push(cells.join(','));
  }
  return { text: rows.join('\n') + '\n', warnings };
}

/** One composing model's CSV (ensembles), named as perf_analyzer names it. */
export interface ComposingCsv {
  /** `<model>_v<version>.<basename of -f>`, in the directory of `-f`. */
  readonly path: string;
  readonly text: string;
  readonly warnings: readonly string[];
}

/**
 * The per-composing-model CSVs perf_analyzer writes beside `-f` for an ensemble: the same columns
 * up to Client Recv, throughput scaled by the model's share of the ensemble's requests, Client
 * Send and Client Recv 0, "Network+Server Send/Recv" the model's own overhead. (perf_analyzer
 * prefixes the whole `-f` argument; we prefix its file name so a path with directories works.)
 */
export function composingCsvReports(options: PerfOptions, run: PerfRun, file: string): ComposingCsv[] {
  const levels = csvLevels(options, run);
  const first = levels[0];
  if (first === undefined) return [];
  const cache = run.model.responseCacheEnabled;
  const header = [
    options.load.kind === 'concurrency' ? 'Concurrency' : 'Request Rate',
    'Inferences/Second',
    'Client Send',
    'Network+Server Send/Recv',
    'Server Queue',
    'Server Compute Input',
    'Server Compute Infer',
    'Server Compute Output',
    ...(cache ? ['Server Cache Hit', 'Server Cache Miss'] : []),
    'Client Recv',
  ].join(',');
  return first.server.composing.map(({ name, version }) => {
    const warnings: string[] = [];
    const rows = [header];
    for (const result of levels) {
      const stats = result.server.composing.find((c) => c.name === name && c.version === version)?.stats;
      if (stats === undefined) continue;
      const own = serverBreakdown(stats);
      const accounted = own.queueUs + own.computeUs + own.cacheHitUs + own.cacheMissUs;
      const total = usec(stats.avgRequestLatencyUs);
      const overheadUs = total > accounted ? total - accounted : 0;
      if (overheadUs === 0) warnings.push(SMALL_SAMPLE_WARNING);
      const ratio = result.server.successCount > 0 ? stats.successCount / result.server.successCount : 0;
      const cells = [
        levelCell(result),
        formatDouble(ratio * result.client.throughput),
        '0',
        String(overheadUs),
        String(own.queueUs),
        String(own.computeInputUs),
        String(own.computeInferUs),
        String(own.computeOutputUs),
      ];
      if (cache) cells.push(String(own.cacheHitUs), String(own.cacheMissUs));
      cells.push('0');
      rows.push(cells.join(','));
    }
    return {
      path: join(dirname(file), `${name}_v${version}.${basename(file)}`),
      text: rows.join('\n') + '\n',
      warnings,
    };
  });
}
