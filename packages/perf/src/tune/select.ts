/**
 * The tuner's measurements and how the best one is chosen: the highest throughput among the
 * measurements that satisfy the constraints (Model Analyzer's `constraints`: a latency budget on
 * p50/p90/p95/p99/avg, a minimum throughput; objective `perf_throughput`); measurements within the
 * tie tolerance of the highest are ties, decided by fewer resources.
 * @packageDocumentation
 */
import type { LoadLevelResult } from '../types.js';
import type { VariantSettings } from './search-space.js';
import { resourceUnits } from './search-space.js';
import type { LatencyMetric, TuneConstraints } from './tune-options.js';

/** One (configuration, concurrency) measurement. Times in ms. */
export interface TuneMeasurement {
  /** The configuration's name (`<model>_config_<n>`). */
  readonly variant: string;
  readonly settings: VariantSettings;
  readonly concurrency: number;
  /** Client batch size (`-b`). */
  readonly batchSize: number;
  /** Inferences per second. */
  readonly throughput: number;
  /** Client-side latencies. */
  readonly latencyMs: Readonly<Record<LatencyMetric, number>>;
  /** Server-side per-request averages from statistics deltas. */
  readonly serverQueueMs: number;
  readonly serverComputeInputMs: number;
  readonly serverComputeInferMs: number;
  readonly serverComputeOutputMs: number;
  /** Client send + receive (perf_analyzer's Client Send and Client Recv). */
  readonly clientSendRecvMs: number;
  /** The load generator's own CPU per request (µs) and utilisation (1 = one core). */
  readonly generatorCpuUsPerRequest: number;
  readonly generatorCpuUtilization: number;
  readonly requestCount: number;
  readonly errorCount: number;
  /** perf_analyzer's stability criterion was met. */
  readonly stable: boolean;
  /** Meets the constraints (and had no failed request). */
  readonly satisfiesConstraints: boolean;
}

const US_PER_MS = 1000;

function percentile(level: LoadLevelResult, p: number): number {
  const v = level.client.percentileUs[p];
  return v === undefined ? Number.NaN : v / US_PER_MS;
}

/** A measurement from one perf load level. */
export function measurementFrom(
  variant: string,
  settings: VariantSettings,
  batchSize: number,
  level: LoadLevelResult,
  constraints: TuneConstraints,
): TuneMeasurement {
  const c = level.client;
  const s = level.server;
  const partial: Omit<TuneMeasurement, 'satisfiesConstraints'> = {
    variant,
    settings,
    concurrency: level.level,
    batchSize,
    throughput: c.throughput,
    latencyMs: {
      p50: percentile(level, 50),
      p90: percentile(level, 90),
      p95: percentile(level, 95),
      p99: percentile(level, 99),
      avg: c.avgLatencyUs / US_PER_MS,
    },
    serverQueueMs: s.queueUs / US_PER_MS,
    serverComputeInputMs: s.computeInputUs / US_PER_MS,
    serverComputeInferMs: s.computeInferUs / US_PER_MS,
    serverComputeOutputMs: s.computeOutputUs / US_PER_MS,
    clientSendRecvMs: (c.avgSendUs + c.avgRecvUs) / US_PER_MS,
    generatorCpuUsPerRequest: level.generator.cpuUsPerRequest,
    generatorCpuUtilization: level.generator.cpuUtilization,
    requestCount: c.requestCount,
    errorCount: c.errorCount,
    stable: level.stable,
  };
  return { ...partial, satisfiesConstraints: satisfiesConstraints(partial, constraints) };
}

/**
 * True when `m` meets the constraints: latency (on the chosen metric) within the budget,
 * throughput at least the minimum, some request measured and none failed.
 */
export function satisfiesConstraints(
  m: Pick<TuneMeasurement, 'latencyMs' | 'throughput' | 'requestCount' | 'errorCount'>,
  constraints: TuneConstraints,
): boolean {
  if (m.requestCount === 0 || m.errorCount > 0 || !(m.throughput > 0)) return false;
  if (constraints.latencyBudgetMs !== undefined) {
    const latency = m.latencyMs[constraints.latencyMetric];
    if (!(latency <= constraints.latencyBudgetMs)) return false;
  }
  if (constraints.minThroughput !== undefined && !(m.throughput >= constraints.minThroughput)) return false;
  return true;
}

/** Orders ties: fewer resources, smaller batches, lower concurrency, then higher throughput. */
function compareTies(a: TuneMeasurement, b: TuneMeasurement): number {
  return (
    resourceUnits(a.settings) - resourceUnits(b.settings) ||
    a.settings.maxBatchSize - b.settings.maxBatchSize ||
    a.concurrency - b.concurrency ||
    b.throughput - a.throughput
  );
}

/**
 * The best measurement: among those satisfying the constraints (and stable, with `requireStable`:
 * perf_analyzer fails a run that does not stabilise, and Model Analyzer then has no measurement),
 * the ones whose throughput is within `tieTolerancePercent` of the highest are ties, and the one
 * with the fewest resources wins. `undefined` when no measurement qualifies.
 */
export function selectBest(
  measurements: readonly TuneMeasurement[],
  tieTolerancePercent: number,
  requireStable = true,
): TuneMeasurement | undefined {
  const ok = measurements.filter((m) => m.satisfiesConstraints && (m.stable || !requireStable));
  if (ok.length === 0) return undefined;
  const top = Math.max(...ok.map((m) => m.throughput));
  const floor = top * (1 - Math.max(0, tieTolerancePercent) / 100);
  return ok.filter((m) => m.throughput >= floor).sort(compareTies)[0];
}

/** One configuration's standing in the report. */
export interface ConfigStanding {
  readonly variant: string;
  readonly settings: VariantSettings;
  /** Its best measurement satisfying the constraints (stable, with `requireStable`; undefined: none). */
  readonly best: TuneMeasurement | undefined;
  /** Its highest throughput over every measurement (0 when none). */
  readonly maxThroughput: number;
  readonly measurements: readonly TuneMeasurement[];
}

/**
 * Each configuration's best measurement, ranked as Model Analyzer's summary ranks them: the
 * winner's configuration ({@link selectBest} over every measurement) first, then those satisfying
 * the constraints by throughput (highest first), then the others by throughput.
 */
export function rankConfigs(
  measurements: readonly TuneMeasurement[],
  tieTolerancePercent: number,
  requireStable = true,
): ConfigStanding[] {
  const byVariant = new Map<string, TuneMeasurement[]>();
  for (const m of measurements) {
    const list = byVariant.get(m.variant) ?? [];
    list.push(m);
    byVariant.set(m.variant, list);
  }
  const standings: ConfigStanding[] = [...byVariant.entries()].map(([variant, list]) => ({
    variant,
    settings: (list[0] as TuneMeasurement).settings,
    best: selectBest(list, tieTolerancePercent, requireStable),
    maxThroughput: Math.max(0, ...list.map((m) => m.throughput)),
    measurements: list,
  }));
  const winner = selectBest(measurements, tieTolerancePercent, requireStable)?.variant;
  return standings.sort((a, b) => {
    if ((a.variant === winner) !== (b.variant === winner)) return a.variant === winner ? -1 : 1;
    if ((a.best === undefined) !== (b.best === undefined)) return a.best === undefined ? 1 : -1;
    const ta = a.best?.throughput ?? a.maxThroughput;
    const tb = b.best?.throughput ?? b.maxThroughput;
    return tb - ta;
  });
}
