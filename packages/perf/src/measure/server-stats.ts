/**
 * Server-side figures from two statistics snapshots, as perf_analyzer's `SummarizeServerStats`:
 * the delta of the served version (when none was asked for, the one whose
 * `inference_stats.queue.count` grew), per-request averages of queue and compute phases, and the
 * composing models of ensembles, recursively. Averages are integer µs truncated as perf_analyzer's
 * `AverageDurationInUs`; overhead is request latency − queue − compute, 0 when negative.
 * @packageDocumentation
 */
import type { InferenceStatistics, ModelStatistics } from '@tritonserver-ts/client';

import { PerfError } from '../errors.js';
import type { ServerSideStats } from '../types.js';

/** A model name and version ('' or '-1' = unspecified). */
export interface ModelId {
  readonly name: string;
  readonly version: string;
}

/** Raw statistics deltas of one model (ns and counts), mergeable across windows. */
export interface RawServerStats {
  readonly inferenceCount: number;
  readonly executionCount: number;
  readonly successCount: number;
  readonly successNs: number;
  readonly queueCount: number;
  readonly queueNs: number;
  readonly computeInputCount: number;
  readonly computeInputNs: number;
  readonly computeInferCount: number;
  readonly computeInferNs: number;
  readonly computeOutputCount: number;
  readonly computeOutputNs: number;
  readonly cacheHitCount: number;
  readonly cacheHitNs: number;
  readonly cacheMissCount: number;
  readonly cacheMissNs: number;
  readonly composing: readonly { readonly id: ModelId; readonly stats: RawServerStats }[];
}

const FIELDS = [
  'inferenceCount',
  'executionCount',
  'successCount',
  'successNs',
  'queueCount',
  'queueNs',
  'computeInputCount',
  'computeInputNs',
  'computeInferCount',
  'computeInferNs',
  'computeOutputCount',
  'computeOutputNs',
  'cacheHitCount',
  'cacheHitNs',
  'cacheMissCount',
  'cacheMissNs',
] as const;

type Counters = Record<(typeof FIELDS)[number], number>;

const ZERO_COUNTERS: Counters = Object.fromEntries(FIELDS.map((f) => [f, 0])) as Counters;

/** What the delta computation needs besides the snapshots. */
interface ServerDeltaContext {
  /** Composing models of an ensemble (by ensemble name); empty for other models. */
  readonly composingOf: (name: string) => readonly ModelId[];
  /** perf_analyzer's warnings (several versions served). */
  readonly onWarning?: (message: string) => void;
}

function counters(s: ModelStatistics): Counters {
  const i = s.inference_stats;
  return {
    inferenceCount: Number(s.inference_count),
    executionCount: Number(s.execution_count),
    successCount: Number(i.success.count),
    successNs: Number(i.success.ns),
    queueCount: Number(i.queue.count),
    queueNs: Number(i.queue.ns),
    computeInputCount: Number(i.compute_input.count),
    computeInputNs: Number(i.compute_input.ns),
    computeInferCount: Number(i.compute_infer.count),
    computeInferNs: Number(i.compute_infer.ns),
    computeOutputCount: Number(i.compute_output.count),
    computeOutputNs: Number(i.compute_output.ns),
    cacheHitCount: Number(i.cache_hit.count),
    cacheHitNs: Number(i.cache_hit.ns),
    cacheMissCount: Number(i.cache_miss.count),
    cacheMissNs: Number(i.cache_miss.ns),
  };
}

function find(snapshot: InferenceStatistics, name: string, version: string): ModelStatistics | undefined {
  return snapshot.model_stats.find((s) => s.name === name && s.version === version);
}

const unspecified = (version: string): boolean => version === '' || version === '-1';

/**
 * The version whose statistics a window reports: the asked one when given (it must appear in the
 * end snapshot), else the highest version whose queue count grew.
 * @throws PerfError `SERVER` "failed to find the requested model version"
 */
export function determineStatsVersion(
  id: ModelId,
  start: InferenceStatistics,
  end: InferenceStatistics,
  onWarning?: (message: string) => void,
): string {
  if (!unspecified(id.version)) {
    if (find(end, id.name, id.version) !== undefined) return id.version;
    throw new PerfError('SERVER', 'failed to find the requested model version');
  }
  let chosen = -1;
  let several = false;
  for (const e of end.model_stats) {
    if (e.name !== id.name) continue;
    const before = find(start, e.name, e.version);
    const grew = Number(e.inference_stats.queue.count) > Number(before?.inference_stats.queue.count ?? 0);
    if (!grew) continue;
    if (chosen !== -1) several = true;
    chosen = Math.max(chosen, Number(e.version));
  }
  if (chosen === -1) throw new PerfError('SERVER', 'failed to find the requested model version');
  if (several) {
    onWarning?.(
      `WARNING: Multiple versions of model ${id.name} are loaded in the triton server, and the version to use was unspecified. The stats for that model may be inaccurate.`,
    );
  }
  return String(chosen);
}

/** Statistics deltas of `id` (and its composing models) between two snapshots. */
export function serverStatsDelta(
  id: ModelId,
  start: InferenceStatistics,
  end: InferenceStatistics,
  context: ServerDeltaContext,
): RawServerStats {
  const version = determineStatsVersion(id, start, end, context.onWarning);
  const after = find(end, id.name, version);
  if (after === undefined) throw new PerfError('SERVER', 'missing statistics for requested model');
  const before = find(start, id.name, version);
  const a = counters(after);
  const b = before === undefined ? ZERO_COUNTERS : counters(before);
  const delta = Object.fromEntries(FIELDS.map((f) => [f, a[f] - b[f]])) as Counters;
  const composing = context.composingOf(id.name).map((child) => {
    const childVersion = determineStatsVersion(child, start, end, context.onWarning);
    const childId = { name: child.name, version: childVersion };
    return { id: childId, stats: serverStatsDelta(childId, start, end, context) };
  });
  return { ...delta, composing };
}

/** Sums raw deltas of several windows (composing models matched by name and version). */
export function mergeRawServerStats(list: readonly RawServerStats[]): RawServerStats {
  const first = list[0];
  if (first === undefined) return { ...ZERO_COUNTERS, composing: [] };
  const sums = { ...ZERO_COUNTERS };
  for (const s of list) for (const f of FIELDS) sums[f] += s[f];
  const composing = first.composing.map(({ id }) => ({
    id,
    stats: mergeRawServerStats(
      list.flatMap((s) =>
        s.composing.filter((c) => c.id.name === id.name && c.id.version === id.version).map((c) => c.stats),
      ),
    ),
  }));
  return { ...sums, composing };
}

/** perf_analyzer's `AverageDurationInUs`: `floor(ns / (count × 1000))`, 0 when count is 0. */
function averageUs(ns: number, count: number): number {
  return count === 0 ? 0 : Math.floor(ns / (count * 1000));
}

/** perf_analyzer's `GetOverheadDuration`: total − queue − compute, 0 when that is negative. */
export function overheadUs(total: number, queue: number, compute: number): number {
  return total > queue + compute ? total - queue - compute : 0;
}

interface PhaseTotals {
  queueUs: number;
  computeUs: number;
  computeInputUs: number;
  computeInferUs: number;
  computeOutputUs: number;
  cacheHitUs: number;
  cacheMissUs: number;
  combinedCacheComputeUs: number;
}

function computeNs(s: RawServerStats): number {
  return s.computeInputNs + s.computeInferNs + s.computeOutputNs;
}

/** perf_analyzer's `GetTotalEnsembleDurations`: sums of the composing models' averages. */
function ensembleTotals(s: RawServerStats): PhaseTotals {
  const t: PhaseTotals = {
    queueUs: 0,
    computeUs: 0,
    computeInputUs: 0,
    computeInferUs: 0,
    computeOutputUs: 0,
    cacheHitUs: averageUs(s.cacheHitNs, s.cacheHitCount),
    cacheMissUs: averageUs(s.cacheMissNs, s.cacheMissCount),
    combinedCacheComputeUs: 0,
  };
  for (const { stats: c } of s.composing) {
    if (c.composing.length > 0) {
      const inner = ensembleTotals(c);
      t.queueUs += inner.queueUs;
      t.computeUs += inner.computeUs;
      t.computeInputUs += inner.computeInputUs;
      t.computeInferUs += inner.computeInferUs;
      t.computeOutputUs += inner.computeOutputUs;
      t.cacheHitUs += inner.cacheHitUs;
      t.cacheMissUs += inner.cacheMissUs;
      t.combinedCacheComputeUs += inner.combinedCacheComputeUs;
      continue;
    }
    t.queueUs += averageUs(c.queueNs, c.queueCount);
    t.computeUs += averageUs(computeNs(c), c.computeInputCount);
    t.computeInputUs += averageUs(c.computeInputNs, c.computeInputCount);
    t.computeInferUs += averageUs(c.computeInferNs, c.computeInferCount);
    t.computeOutputUs += averageUs(c.computeOutputNs, c.computeOutputCount);
    t.cacheHitUs += averageUs(c.cacheHitNs, c.cacheHitCount);
    t.cacheMissUs += averageUs(c.cacheMissNs, c.cacheMissCount);
    t.combinedCacheComputeUs += averageUs(
      computeNs(c) + c.cacheHitNs + c.cacheMissNs,
      c.computeInputCount + c.cacheHitCount,
    );
  }
  return t;
}

function ownTotals(s: RawServerStats): PhaseTotals {
  return {
    queueUs: averageUs(s.queueNs, s.queueCount),
    computeUs: averageUs(computeNs(s), s.computeInputCount),
    computeInputUs: averageUs(s.computeInputNs, s.computeInputCount),
    computeInferUs: averageUs(s.computeInferNs, s.computeInferCount),
    computeOutputUs: averageUs(s.computeOutputNs, s.computeOutputCount),
    cacheHitUs: averageUs(s.cacheHitNs, s.cacheHitCount),
    cacheMissUs: averageUs(s.cacheMissNs, s.cacheMissCount),
    combinedCacheComputeUs: averageUs(
      s.cacheHitNs + s.cacheMissNs + computeNs(s),
      s.computeInputCount + s.cacheHitCount,
    ),
  };
}

/**
 * Per-request averages of raw deltas. For an ensemble, queue and compute are the sums of its
 * composing models' averages (perf_analyzer's ensemble breakdown). With the response cache on,
 * overhead leaves out the combined cache + compute average, as perf_analyzer's report does.
 */
export function toServerSideStats(raw: RawServerStats, responseCacheEnabled: boolean): ServerSideStats {
  const t = raw.composing.length > 0 ? ensembleTotals(raw) : ownTotals(raw);
  const avgRequestLatencyUs = averageUs(raw.successNs, raw.successCount);
  const overhead = overheadUs(
    avgRequestLatencyUs,
    t.queueUs,
    responseCacheEnabled ? t.combinedCacheComputeUs : t.computeUs,
  );
  return {
    inferenceCount: raw.inferenceCount,
    executionCount: raw.executionCount,
    successCount: raw.successCount,
    avgRequestLatencyUs,
    overheadUs: raw.successCount === 0 ? 0 : overhead,
    queueUs: t.queueUs,
    computeInputUs: t.computeInputUs,
    computeInferUs: t.computeInferUs,
    computeOutputUs: t.computeOutputUs,
    cacheHitCount: raw.cacheHitCount,
    cacheHitUs: t.cacheHitUs,
    cacheMissCount: raw.cacheMissCount,
    cacheMissUs: t.cacheMissUs,
    composing: raw.composing.map(({ id, stats }) => ({
      name: id.name,
      version: id.version,
      stats: toServerSideStats(stats, responseCacheEnabled),
    })),
  };
}

/** Zero figures (a server without the statistics extension). */
export const EMPTY_SERVER_STATS: ServerSideStats = toServerSideStats(
  { ...ZERO_COUNTERS, composing: [] },
  false,
);
