/**
 * The console report, laid out line for line as perf_analyzer prints it: the
 * `*** Measurement Settings ***` block, then per load level the level line, the `Client:` and
 * `Server:` blocks (and `Server Prometheus Metrics:` with `--collect-metrics`), then the
 * `Inferences/Second vs. Client … Batch Latency` summary. A pure function of the options and the
 * run, so a lab reads the same text against real Triton or the embedded server.
 *
 * With `-v`, each level's windows follow its level line (`  Pass [n] throughput: …`), as perf_analyzer
 * prints them while it measures.
 *
 * A level that did not stabilise within `-r` windows, or reached `-l`, gets only its level line (and
 * its `Pass` lines with `-v`), and is left out of the summary and the CSV, as in perf_analyzer; its
 * warning is not part of this text
 * (perf_analyzer prints it on stderr, and so does `perf-analyzer-ts` when the level ends:
 * {@link levelRejection}).
 * @packageDocumentation
 */
import type { PerfOptions } from '../options/perf-options.js';
import type {
  LoadLevelResult,
  MetricsSummary,
  ModelProfile,
  PerfRun,
  ServerSideStats,
  WindowPass,
} from '../types.js';
import {
  ensembleTotals,
  formatDouble,
  reportedPercentiles,
  serverBreakdown,
  stabilizingLatencyUs,
  usec,
} from './format.js';

/** perf_analyzer's DELAY_PCT_THRESHOLD: warn when more than this % of requests were sent late. */
const DELAY_PCT_THRESHOLD = 1;
/** perf_analyzer's default `--overhead-pct-threshold` (%). */
const OVERHEAD_PCT_THRESHOLD = 50;

/** Whether perf_analyzer would call the run asynchronous (`--streaming` implies `--async`). */
function usesAsync(options: PerfOptions): boolean {
  return options.async || options.streaming;
}

/** The `*** Measurement Settings ***` block (ends with a blank line). */
export function formatSettings(options: PerfOptions, model: ModelProfile): string {
  const lines = ['*** Measurement Settings ***'];
  lines.push(`  Batch size: ${options.batchSize}`);
  lines.push('  Service Kind: Triton');
  if (options.warmupRequestCount > 0) {
    const n = options.warmupRequestCount;
    lines.push(`  Sending ${n} warmup request${n > 1 ? 's' : ''}`);
  }
  if (options.requestCount !== 0) {
    const n = options.requestCount;
    lines.push(`  Sending ${n} benchmark request${n > 1 ? 's' : ''}`);
  } else {
    lines.push(`  Using "${options.measurementMode}" mode for stabilization`);
    const metric = usesAsync(options) ? 'throughput' : 'latency and throughput';
    lines.push(
      options.percentile === undefined
        ? `  Stabilizing using average ${metric}`
        : `  Stabilizing using p${options.percentile} ${metric}`,
    );
    lines.push(
      options.measurementMode === 'time_windows'
        ? `  Measurement window: ${options.measurementIntervalMs} msec`
        : `  Minimum number of samples in each window: ${options.measurementRequestCount}`,
    );
  }
  const load = options.load;
  if (load.kind === 'concurrency' && load.range.end !== 1) {
    lines.push(`  Latency limit: ${options.latencyThresholdMs} msec`);
    if (load.range.end !== 0) {
      const limit = Math.max(load.range.start, load.range.end);
      lines.push(`  Concurrency limit: ${limit} concurrent requests`);
    }
  }
  if (load.kind === 'request_rate') {
    if (load.range.end !== 1) {
      lines.push(`  Latency limit: ${options.latencyThresholdMs} msec`);
      if (load.range.end !== 0) {
        const limit = Math.max(load.range.start, load.range.end);
        lines.push(`  Request Rate limit: ${formatDouble(limit)} requests per seconds`);
      }
    }
    lines.push(
      load.distribution === 'poisson'
        ? '  Using poisson distribution on request generation'
        : '  Using uniform distribution on request generation',
    );
  }
  lines.push(
    usesAsync(options)
      ? '  Using asynchronous calls for inference'
      : '  Using synchronous calls for inference',
  );
  if (model.decoupled) {
    lines.push('  Detected decoupled model, using the first response for measuring latency');
  }
  return lines.join('\n') + '\n\n';
}

/** The line perf_analyzer prints when it moves to a level (none for `--request-intervals`). */
function formatLevelHeader(mode: LoadLevelResult['mode'], level: number): string {
  if (mode === 'concurrency') return `Request concurrency: ${level}\n`;
  if (mode === 'request_rate') {
    return `Request Rate: ${formatDouble(level)} inference requests per second\n`;
  }
  return '';
}

/**
 * Why perf_analyzer leaves this level out of its report (its stderr line), or undefined when the
 * level counts: it reached the `-l` latency limit, or was not stable within `-r` windows.
 */
export function levelRejection(options: PerfOptions, result: LoadLevelResult): string | undefined {
  if (result.overLatencyThreshold === true) {
    return `Measured latency went over the set limit of ${options.latencyThresholdMs} msec. `;
  }
  if (!result.stable) {
    if (result.mode !== 'concurrency') return 'Failed to obtain stable measurement.';
    const hint =
      options.measurementMode === 'count_windows' ? '--measurement-request-count' : '--measurement-interval';
    return (
      `Failed to obtain stable measurement within ${options.maxTrials} measurement windows for ` +
      `concurrency ${result.level}. Please try to increase the ${hint}.`
    );
  }
  return undefined;
}

/** The levels perf_analyzer keeps for its summary and CSV (stable and within `-l`). */
export function reportedLevels(options: PerfOptions, run: PerfRun): LoadLevelResult[] {
  return run.results.filter((result) => levelRejection(options, result) === undefined);
}

function formatClient(options: PerfOptions, model: ModelProfile, result: LoadLevelResult): string[] {
  const client = result.client;
  const lines = ['  Client: ', `    Request count: ${client.requestCount}`];
  const delayPct = client.requestCount > 0 ? (client.delayedRequestCount / client.requestCount) * 100 : 0;
  if (delayPct > DELAY_PCT_THRESHOLD) {
    const seconds = client.durationUs / 1e6;
    const sendRate = seconds > 0 ? (client.requestCount + client.errorCount) / seconds : 0;
    lines.push(`    Avg send request rate: ${sendRate.toFixed(2)} infer/sec`);
    lines.push(
      '    [WARNING] Perf Analyzer was not able to keep up with the desired request rate. ' +
        `${delayPct.toFixed(2)}% of the requests were delayed. `,
    );
  }
  if (model.sequenceBatching) {
    const count = Math.round((client.sequencePerSecond * client.durationUs) / 1e6);
    lines.push(`    Sequence count: ${count} (${formatDouble(client.sequencePerSecond)} seq/sec)`);
  }
  lines.push(`    Throughput: ${formatDouble(client.throughput)} infer/sec`);
  if (model.decoupled) {
    lines.push(`    Response Throughput: ${formatDouble(client.responseThroughput)} infer/sec`);
  }
  if (options.verbose) {
    lines.push(`    Avg client overhead: ${(result.generator.cpuUtilization * 100).toFixed(2)}%`);
  }
  if (options.percentile === undefined) {
    lines.push(
      `    Avg latency: ${usec(client.avgLatencyUs)} usec (standard deviation ${usec(client.stdLatencyUs)} usec)`,
    );
  }
  for (const p of reportedPercentiles(options.percentile)) {
    lines.push(`    p${p} latency: ${usec(client.percentileUs[p] ?? 0)} usec`);
  }
  lines.push(clientLibraryLine(options, model, result));
  return lines;
}

/** "Avg HTTP time …" / "Avg gRPC time …" (only four spaces for decoupled models, as perf_analyzer). */
function clientLibraryLine(options: PerfOptions, model: ModelProfile, result: LoadLevelResult): string {
  if (model.decoupled) return '    ';
  const send = usec(result.client.avgSendUs);
  const recv = usec(result.client.avgRecvUs);
  const wait = usec(result.client.avgResponseWaitUs);
  const total = send + recv + wait;
  if (options.protocol === 'grpc') {
    return options.verbose
      ? `    Avg gRPC time: ${total} usec (marshal ${send} usec + response wait ${wait} usec + unmarshal ${recv} usec)`
      : `    Avg gRPC time: ${total} usec ((un)marshal request/response ${send + recv} usec + response wait ${wait} usec)`;
  }
  return options.verbose
    ? `    Avg HTTP time: ${total} usec (send ${send} usec + response wait ${wait} usec + receive ${recv} usec)`
    : `    Avg HTTP time: ${total} usec (send/recv ${send + recv} usec + response wait ${wait} usec)`;
}

function overhead(totalUs: number, queueUs: number, computeUs: number): number {
  return totalUs > queueUs + computeUs ? totalUs - queueUs - computeUs : 0;
}

/** One model's server block, indented for `iteration` (1 = the profiled model, 2 = composing…). */
function formatServer(stats: ServerSideStats, iteration: number, model: ModelProfile): string[] {
  const ident = ' '.repeat(2 * iteration);
  if (stats.successCount === 0) return [`${ident}  Request count: 0`];
  const lines = [
    `${ident}  Inference count: ${stats.inferenceCount}`,
    `${ident}  Execution count: ${stats.executionCount}`,
  ];
  const cache = model.responseCacheEnabled;
  if (cache) {
    lines.push(`${ident}  Cache hit count: ${stats.cacheHitCount}`);
    lines.push(`${ident}  Cache miss count: ${stats.cacheMissCount}`);
  }
  lines.push(`${ident}  Successful request count: ${stats.successCount}`);
  const totalUs = usec(stats.avgRequestLatencyUs);
  const head = `${ident}  Avg request latency: ${totalUs} usec`;

  if (stats.composing.length === 0) {
    const own = serverBreakdown(stats);
    if (cache) {
      const computeCount = Math.max(0, stats.successCount - stats.cacheHitCount);
      const weight = computeCount + stats.cacheHitCount;
      const combined =
        weight > 0
          ? usec(
              (stats.cacheHitUs * stats.cacheHitCount +
                stats.cacheMissUs * stats.cacheMissCount +
                (stats.computeInputUs + stats.computeInferUs + stats.computeOutputUs) * computeCount) /
                weight,
            )
          : 0;
      lines.push(
        `${head} (overhead ${overhead(totalUs, own.queueUs, combined)} usec + queue ${own.queueUs} usec + cache hit/miss ${combined} usec)`,
      );
      lines.push(`${ident}${ident}  Average Cache Hit Latency: ${own.cacheHitUs} usec`);
      lines.push(
        `${ident}${ident}  Average Cache Miss Latency: ${own.cacheMissUs + own.computeUs} usec ` +
          `(cache lookup/insertion ${own.cacheMissUs} usec + compute input ${own.computeInputUs} usec + ` +
          `compute infer ${own.computeInferUs} usec + compute output ${own.computeOutputUs} usec)`,
      );
    } else {
      lines.push(
        `${head} (overhead ${overhead(totalUs, own.queueUs, own.computeUs)} usec + queue ${own.queueUs} usec + ` +
          `compute input ${own.computeInputUs} usec + compute infer ${own.computeInferUs} usec + ` +
          `compute output ${own.computeOutputUs} usec)`,
      );
    }
    lines.push('');
    return lines;
  }

  const totals = ensembleTotals(stats);
  if (cache) {
    const combined = totals.computeUs + totals.cacheHitUs + totals.cacheMissUs;
    lines.push(
      `${head} (overhead ${overhead(totalUs, totals.queueUs, combined)} usec + queue ${totals.queueUs} usec + cache hit/miss ${combined} usec)`,
    );
    lines.push(`${ident}${ident}  Average Cache Hit Latency: ${totals.cacheHitUs} usec`);
    lines.push(
      `${ident}${ident}  Average Cache Miss Latency: ${totals.cacheMissUs + totals.computeUs} usec `,
    );
  } else {
    lines.push(
      `${head} (overhead ${overhead(totalUs, totals.queueUs, totals.computeUs)} usec + queue ${totals.queueUs} usec + compute ${totals.computeUs} usec)`,
    );
  }
  lines.push('');
  lines.push(`${ident}Composing models: `);
  for (const composing of stats.composing) {
    lines.push(`${ident}${composing.name}, version: ${composing.version}`);
    lines.push(...formatServer(composing.stats, iteration + 1, model));
  }
  return lines;
}

function formatMetrics(metrics: MetricsSummary | undefined): string[] {
  const lines = ['  Server Prometheus Metrics: '];
  const groups: [string, Readonly<Record<string, number>>, (v: number) => string][] = [
    ['Avg GPU Utilization', metrics?.gpuUtilization ?? {}, (v) => `${formatDouble(v * 100)}%`],
    ['Avg GPU Power Usage', metrics?.gpuPowerUsage ?? {}, (v) => `${formatDouble(v)} watts`],
    ['Max GPU Memory Usage', metrics?.gpuMemoryUsedBytes ?? {}, (v) => `${Math.round(v)} bytes`],
    ['Total GPU Memory', metrics?.gpuMemoryTotalBytes ?? {}, (v) => `${Math.round(v)} bytes`],
  ];
  if (groups.some(([, values]) => Object.keys(values).length > 16)) {
    lines.push(
      'Too many GPUs on system to print out individual Prometheus metrics, use the CSV output feature to see metrics.',
    );
    return lines;
  }
  for (const [title, values, show] of groups) {
    lines.push(`    ${title}:`);
    for (const uuid of Object.keys(values).sort()) {
      lines.push(`      ${uuid} : ${show(values[uuid] ?? 0)}`);
    }
  }
  return lines;
}

/**
 * perf_analyzer's `-v` line for one measurement window: `  Pass [n] throughput: X infer/sec. ` then
 * `Avg latency: A usec (std S usec)`, or `pN latency: L usec` with `--percentile`; a window without
 * figures prints its error instead (`  Pass [n] cb::Error: …`, perf_analyzer's wording).
 */
function formatPass(options: PerfOptions, pass: WindowPass): string {
  const head = `  Pass [${pass.trial}]`;
  if (pass.error !== undefined) return `${head} cb::Error: ${pass.error}`;
  const throughput = `${head} throughput: ${formatDouble(pass.throughput)} infer/sec. `;
  return options.percentile === undefined
    ? `${throughput}Avg latency: ${usec(pass.avgLatencyUs)} usec (std ${usec(pass.stdLatencyUs)} usec)`
    : `${throughput}p${options.percentile} latency: ${usec(pass.percentileLatencyUs ?? 0)} usec`;
}

/**
 * One level's report: the level line, with `-v` one `Pass [n]` line per window, then the Client and
 * Server blocks (and metrics, and the load-generator overhead warning); only the level line (and the
 * `Pass` lines) for a level perf_analyzer does not keep.
 */
export function formatLevel(options: PerfOptions, model: ModelProfile, result: LoadLevelResult): string {
  const header = formatLevelHeader(result.mode, result.level);
  const lines: string[] = [];
  if (header !== '') lines.push(header.trimEnd());
  if (options.verbose) lines.push(...(result.passes ?? []).map((pass) => formatPass(options, pass)));
  if (levelRejection(options, result) !== undefined) {
    return lines.length === 0 ? '' : lines.join('\n') + '\n';
  }
  lines.push(...formatClient(options, model, result));
  lines.push('  Server: ');
  lines.push(...formatServer(result.server, 1, model));
  if (options.collectMetrics) lines.push(...formatMetrics(result.metrics));
  if (result.generator.cpuUtilization * 100 > OVERHEAD_PCT_THRESHOLD) {
    lines.push(
      '[WARNING] Perf Analyzer is not able to keep up with the desired load. The results may not be accurate.',
    );
  }
  return lines.join('\n') + '\n';
}

/** The closing `Inferences/Second vs. Client … Batch Latency` lines ('' when no level was kept). */
export function formatSummary(options: PerfOptions, run: PerfRun): string {
  const kept = reportedLevels(options, run);
  if (kept.length === 0) return '';
  const lines = [
    options.percentile === undefined
      ? 'Inferences/Second vs. Client Average Batch Latency'
      : `Inferences/Second vs. Client p${options.percentile} Batch Latency`,
  ];
  for (const result of kept) {
    const label =
      result.mode === 'concurrency'
        ? `Concurrency: ${result.level}`
        : `Request Rate: ${formatDouble(result.level)}`;
    lines.push(
      `${label}, throughput: ${formatDouble(result.client.throughput)} infer/sec, latency ${stabilizingLatencyUs(result, options.percentile)} usec`,
    );
  }
  return lines.join('\n') + '\n';
}

/**
 * The whole console report of a run, as perf_analyzer prints it to stdout.
 *
 * ```ts
 * process.stdout.write(formatConsoleReport(options, await runPerf(options)));
 * ```
 */
export function formatConsoleReport(options: PerfOptions, run: PerfRun): string {
  return (
    formatSettings(options, run.model) +
    run.results.map((result) => formatLevel(options, run.model, result)).join('') +
    formatSummary(options, run)
  );
}
