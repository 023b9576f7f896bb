/**
 * Measures one load level as perf_analyzer's `ProfileHelper` / `Measure`: back-to-back windows
 * (time windows of 1.2 × `-p` ms — perf_analyzer's own factor —, count windows checked every second
 * until `--measurement-request-count` requests ended, or one window of exactly `--request-count`
 * requests), each with client figures from the records that ended in it, statistics and
 * client-library deltas, metrics scrapes and the generator's CPU; it stops when the last 3 windows
 * are stable, when one of them reaches `-l`, or after `-r` windows, then merges the last 3 windows
 * (perf_analyzer's `MergePerfStatusReports`).
 * @packageDocumentation
 */
import type { InferenceStatistics, TritonClient } from '@tritonserver-ts/client';
import { setTimeout as sleep } from 'node:timers/promises';

import { PerfError } from '../errors.js';
import type { LoadManager } from '../load/load-manager.js';
import type { PerfOptions } from '../options/perf-options.js';
import type { LoadLevelResult, ModelProfile, PerfProgress, RequestRecord, WindowPass } from '../types.js';
import { summarizeClient, type ClientSummary } from './client-stats.js';
import { cpuNowUs, generatorCost } from './generator-cost.js';
import { diffInferStat, readInferStat, sumInferStats, type ClientInferStat } from './infer-stat.js';
import { MetricsScraper, summarizeMetrics, type GpuMetricsScrape } from './metrics.js';
import { splitWindowRecords } from './records.js';
import {
  EMPTY_SERVER_STATS,
  mergeRawServerStats,
  serverStatsDelta,
  toServerSideStats,
  type ModelId,
  type RawServerStats,
} from './server-stats.js';
import { STABILITY_WINDOW, exceedsLatencyThreshold, isStable, overLatencyThreshold } from './stability.js';

/** perf_analyzer sleeps this multiple of `-p` per time window. */
const TIME_WINDOW_FACTOR = 1.2;
/** perf_analyzer checks a count window's progress this often (ms). */
const COUNT_WINDOW_POLL_MS = 1000;
/** How often a `--request-count` window checks for its last request (ms). */
const REQUEST_COUNT_POLL_MS = 5;
/** A limited batch of requests (`--request-count`, warmup) gives up after this long idle (ms). */
export const IDLE_LIMIT_MS = 2000;

/** perf_analyzer's message for a window in which no request ended. */
const NO_VALID_REQUESTS = 'No valid requests recorded within time interval. Please use a larger time window.';

/** Where server statistics come from (absent: the server has no statistics extension). */
export interface StatisticsSource {
  /** One snapshot of the model's (and its composing models') statistics. */
  snapshot(): Promise<InferenceStatistics>;
  /** Composing models of an ensemble, by name. */
  readonly composingOf: (name: string) => readonly ModelId[];
}

/** What one level's measurement needs. */
interface LevelContext {
  readonly client: TritonClient;
  readonly manager: LoadManager;
  readonly model: ModelProfile;
  readonly options: PerfOptions;
  readonly mode: LoadLevelResult['mode'];
  readonly statistics: StatisticsSource | undefined;
  readonly onProgress?: (event: PerfProgress) => void;
  readonly onWarning?: (message: string) => void;
  readonly signal?: AbortSignal;
}

/** One measured window. */
interface Window {
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly records: readonly RequestRecord[];
  readonly inferStat: ClientInferStat;
  readonly server: RawServerStats | undefined;
  readonly scrapes: readonly GpuMetricsScrape[];
  readonly cpuUs: number;
  readonly client: ClientSummary;
  readonly error: PerfError | undefined;
}

const now = (): bigint => process.hrtime.bigint();

async function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  try {
    await sleep(ms, undefined, signal === undefined ? undefined : { signal });
    return true;
  } catch {
    return false;
  }
}

function firstError(records: readonly RequestRecord[]): string {
  return records.find((r) => !r.ok)?.error ?? 'request failed';
}

/**
 * Measures `level` (the manager must already run it) until stable, over `-l`, or out of trials.
 * @returns the merged result, or `undefined` when `signal` aborted the level
 * @throws PerfError `SERVER` when every request of a window failed or statistics could not be
 *   read; `USAGE` when the last windows recorded no request (perf_analyzer's option error)
 */
export async function profileLevel(
  context: LevelContext,
  level: number,
  start: () => Promise<void>,
): Promise<LoadLevelResult | undefined> {
  const { client, manager, model, options, statistics, signal } = context;
  const requestCountMode = options.requestCount > 0;
  const includeLibStats = !model.decoupled;
  const scraper = options.collectMetrics
    ? new MetricsScraper(options.metricsUrl, options.metricsIntervalMs, context.onWarning)
    : undefined;

  const snapshot = async (): Promise<InferenceStatistics | undefined> => {
    if (statistics === undefined) return undefined;
    try {
      return await statistics.snapshot();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new PerfError('SERVER', `failed to get model statistics: ${message}`, { cause: error });
    }
  };

  manager.takeRecords();
  let windowStart = now();
  let serverBefore = await snapshot();
  let statBefore = readInferStat(client);
  let cpuBefore = cpuNowUs();
  scraper?.start();
  const windows: Window[] = [];
  let pending: RequestRecord[] = [];
  try {
    await start();
    // perf_analyzer's first window starts once the level runs; a --request-count window starts
    // before, so that none of its requests can end ahead of it.
    if (!requestCountMode) {
      windowStart = now();
      cpuBefore = cpuNowUs();
    }
    let aborted = false;
    for (let trial = 1; trial <= (requestCountMode ? 1 : options.maxTrials); trial += 1) {
      let collected = 0;
      const take = (): void => {
        const taken = manager.takeRecords();
        collected += taken.length;
        for (const record of taken) pending.push(record);
      };
      if (requestCountMode) {
        let progressAt = performance.now();
        while (collected < options.requestCount && !aborted) {
          aborted = !(await pause(REQUEST_COUNT_POLL_MS, signal));
          const before = collected;
          take();
          if (collected > before) progressAt = performance.now();
          // a manager that has nothing in flight and delivers nothing more will not reach N
          else if (manager.inFlight === 0 && performance.now() - progressAt > IDLE_LIMIT_MS) break;
        }
      } else if (options.measurementMode === 'count_windows') {
        while (collected < options.measurementRequestCount && !aborted) {
          aborted = !(await pause(COUNT_WINDOW_POLL_MS, signal));
          take();
        }
      } else {
        aborted = !(await pause(options.measurementIntervalMs * TIME_WINDOW_FACTOR, signal));
      }
      if (aborted) return undefined;
      const windowEnd = now();
      const statAfter = readInferStat(client);
      const cpuAfter = cpuNowUs();
      take();
      const split = splitWindowRecords(pending, windowStart, windowEnd);
      pending = split.pending;
      const records = split.inWindow;
      if (records.length > 0 && records.every((r) => !r.ok)) {
        throw new PerfError('SERVER', firstError(records));
      }
      const scrapes = scraper?.takeScrapes() ?? [];
      const serverAfter = await snapshot();
      const inferStat = diffInferStat(statBefore, statAfter);
      const durationNs = requestCountMode
        ? clampedDuration(records, windowStart, windowEnd)
        : windowEnd - windowStart;
      const summary = summarizeClient({
        records,
        durationNs,
        batchSize: options.batchSize,
        percentile: options.percentile,
        inferStat: includeLibStats ? inferStat : undefined,
      });
      let server: RawServerStats | undefined;
      let error: PerfError | undefined;
      if (summary.stats.requestCount === 0) {
        error = new PerfError('USAGE', NO_VALID_REQUESTS);
      } else if (serverBefore !== undefined && serverAfter !== undefined && statistics !== undefined) {
        server = serverStatsDelta({ name: model.name, version: model.version }, serverBefore, serverAfter, {
          composingOf: statistics.composingOf,
          ...(context.onWarning !== undefined ? { onWarning: context.onWarning } : {}),
        });
      }
      windows.push({
        startNs: windowStart,
        endNs: windowEnd,
        records,
        inferStat,
        server,
        scrapes,
        cpuUs: cpuAfter - cpuBefore,
        client: summary,
        error,
      });
      windowStart = windowEnd;
      serverBefore = serverAfter;
      statBefore = statAfter;
      cpuBefore = cpuAfter;

      const loads = windows.map((w) => ({
        throughput: w.error === undefined ? w.client.stats.throughput : 0,
        latencyNs: w.error === undefined ? w.client.stabilizingLatencyNs : undefined,
      }));
      const stableNow = requestCountMode || isStable(loads, options.stabilityPercentage);
      context.onProgress?.({
        kind: 'window',
        level,
        trial,
        maxTrials: requestCountMode ? 1 : options.maxTrials,
        throughput: summary.stats.throughput,
        avgLatencyUs: summary.stats.avgLatencyUs,
        stable: stableNow,
      });
      if (stableNow || exceedsLatencyThreshold(loads, options.latencyThresholdMs)) break;
    }
  } finally {
    await scraper?.stop();
  }

  return mergeLevel(context, level, windows, requestCountMode);
}

/** perf_analyzer's intended `--request-count` window: first request start to last request end. */
function clampedDuration(records: readonly RequestRecord[], startNs: bigint, endNs: bigint): bigint {
  if (records.length === 0) return endNs - startNs;
  let first = records[0]?.startNs ?? startNs;
  let last = records[0]?.endNs ?? endNs;
  for (const r of records) {
    if (r.startNs < first) first = r.startNs;
    if (r.endNs > last) last = r.endNs;
  }
  return last > first ? last - first : endNs - startNs;
}

function mergeLevel(
  context: LevelContext,
  level: number,
  windows: readonly Window[],
  requestCountMode: boolean,
): LoadLevelResult {
  const { options, model } = context;
  const loads = windows.map((w) => ({
    throughput: w.error === undefined ? w.client.stats.throughput : 0,
    latencyNs: w.error === undefined ? w.client.stabilizingLatencyNs : undefined,
  }));
  let stable = requestCountMode || isStable(loads, options.stabilityPercentage);
  if (!stable && options.async && isStable(loads, options.stabilityPercentage, false)) {
    context.onWarning?.('Warning: Request latency is not stabilizing. Please try lowering the request rate.');
    stable = true;
  }
  const reported = windows.slice(-STABILITY_WINDOW);
  const failed = reported.find((w) => w.error !== undefined);
  if (failed?.error !== undefined) throw failed.error;

  const records = reported.flatMap((w) => w.records);
  const durationNs = reported.reduce(
    (sum, w) =>
      sum + (requestCountMode ? clampedDuration(w.records, w.startNs, w.endNs) : w.endNs - w.startNs),
    0n,
  );
  const client = summarizeClient({
    records,
    durationNs,
    batchSize: options.batchSize,
    percentile: options.percentile,
    inferStat: model.decoupled ? undefined : sumInferStats(reported.map((w) => w.inferStat)),
  });
  const raws = reported.flatMap((w) => (w.server === undefined ? [] : [w.server]));
  const server =
    raws.length === 0
      ? EMPTY_SERVER_STATS
      : toServerSideStats(mergeRawServerStats(raws), model.responseCacheEnabled);
  const cpuUs = reported.reduce((s, w) => s + w.cpuUs, 0);
  const wallUs = Number(reported.reduce((s, w) => s + (w.endNs - w.startNs), 0n) / 1000n);
  return {
    mode: context.mode,
    level,
    stable,
    windows: windows.length,
    passes: windows.map((w, i) => windowPass(w, i + 1, options.percentile)),
    overLatencyThreshold: overLatencyThreshold(client.stabilizingLatencyNs, options.latencyThresholdMs),
    client: client.stats,
    server,
    metrics: options.collectMetrics ? summarizeMetrics(reported.flatMap((w) => w.scrapes)) : undefined,
    generator: generatorCost(cpuUs, wallUs, records.length),
    records,
    windowBoundariesNs: windowBoundaries(reported),
  };
}

/** One window as perf_analyzer's `-v` reports it (figures, or the window's error). */
function windowPass(window: Window, trial: number, percentile: number | undefined): WindowPass {
  const stats = window.client.stats;
  const figures = {
    trial,
    throughput: stats.throughput,
    avgLatencyUs: stats.avgLatencyUs,
    stdLatencyUs: stats.stdLatencyUs,
  };
  const withPercentile =
    percentile === undefined
      ? figures
      : { ...figures, percentileLatencyUs: stats.percentileUs[percentile] ?? 0 };
  return window.error === undefined ? withPercentile : { ...withPercentile, error: window.error.message };
}

/** Starts and ends of the reported windows, a boundary two windows share once (profile export). */
function windowBoundaries(windows: readonly Window[]): bigint[] {
  const boundaries: bigint[] = [];
  for (const w of windows) {
    if (boundaries[boundaries.length - 1] !== w.startNs) boundaries.push(w.startNs);
    boundaries.push(w.endNs);
  }
  return boundaries;
}
