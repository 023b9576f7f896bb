/**
 * Client-side figures of a window (or of merged windows), computed as perf_analyzer's
 * `SummarizeLatency` / `SummarizeClientStat`: counts of the requests that ended in the window,
 * throughput = successful requests × batch size ÷ window seconds, latency mean, population
 * standard deviation and nearest-rank percentiles, and the client library's send/receive split.
 *
 * Times are integers in µs, truncated as perf_analyzer truncates them (`ns / 1000`), so a report
 * prints them as they are.
 * @packageDocumentation
 */
import type { ClientSideStats, RequestRecord } from '../types.js';
import type { ClientInferStat } from './infer-stat.js';
import { latencyNs } from './records.js';

/** The percentiles perf_analyzer always reports. */
export const REPORTED_PERCENTILES: readonly number[] = [50, 90, 95, 99];

/** What {@link summarizeClient} needs. */
interface ClientWindowInput {
  /** Records that ended in the window(s). */
  readonly records: readonly RequestRecord[];
  /** Window duration (sum of durations when windows are merged). */
  readonly durationNs: bigint;
  /** `-b` (values below 1 count as 1). */
  readonly batchSize: number;
  /** `--percentile`, when given. */
  readonly percentile: number | undefined;
  /** The client library's timing over the window(s); undefined for decoupled models (not reported). */
  readonly inferStat: ClientInferStat | undefined;
}

/** Client figures plus the latency the stability check and `-l` use. */
export interface ClientSummary {
  readonly stats: ClientSideStats;
  /** Average latency, or the `--percentile` one, in ns; undefined when no request succeeded. */
  readonly stabilizingLatencyNs: bigint | undefined;
}

/**
 * The index perf_analyzer reads percentile `p` at in `n` sorted latencies:
 * `floor(p / 100 × (n − 1) + 0.5)`.
 */
export function percentileIndex(p: number, n: number): number {
  return Math.floor((p / 100) * (n - 1) + 0.5);
}

/** Integer µs of integer ns, truncated. */
function us(ns: bigint): number {
  return Number(ns / 1000n);
}

/** Summarises the client side of one window or of merged windows. */
export function summarizeClient(input: ClientWindowInput): ClientSummary {
  const ok = input.records.filter((r) => r.ok);
  const errorCount = input.records.length - ok.length;
  const latencies = ok.map(latencyNs).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const n = latencies.length;
  const batch = Math.max(input.batchSize, 1);
  const seconds = Number(input.durationNs) / 1e9;
  const rate = (count: number): number => (seconds > 0 ? count / seconds : 0);

  let responseCount = 0;
  let sequenceCount = 0;
  let delayedCount = 0;
  for (const record of ok) {
    responseCount += record.responseNs.length;
    if (record.sequenceEnd === true) sequenceCount += 1;
    if (record.delayed) delayedCount += 1;
  }

  let avgNs = 0n;
  let stdUs = 0;
  const percentileUs: Record<number, number> = {};
  let stabilizingLatencyNs: bigint | undefined;
  if (n > 0) {
    const total = latencies.reduce((a, b) => a + b, 0n);
    avgNs = total / BigInt(n);
    // perf_analyzer's population deviation in whole µs², integer steps as it takes them:
    // E[⌊l²/10⁶⌋] − ⌊avg²/10⁶⌋, clamped at 0, square root truncated (one request gives 0).
    let squaresUs = 0n;
    for (const l of latencies) squaresUs += (l * l) / 1_000_000n;
    const expectedSquareUs = squaresUs / BigInt(n);
    const squareAvgUs = (avgNs * avgNs) / 1_000_000n;
    const varianceUs = expectedSquareUs > squareAvgUs ? expectedSquareUs - squareAvgUs : 0n;
    stdUs = Math.floor(Math.sqrt(Number(varianceUs)));
    const wanted = new Set(REPORTED_PERCENTILES);
    if (input.percentile !== undefined) wanted.add(input.percentile);
    for (const p of [...wanted].sort((a, b) => a - b)) {
      percentileUs[p] = us(latencies[Math.min(percentileIndex(p, n), n - 1)] ?? 0n);
    }
    stabilizingLatencyNs =
      input.percentile === undefined
        ? avgNs
        : (latencies[Math.min(percentileIndex(input.percentile, n), n - 1)] ?? 0n);
  }

  let avgSendUs = 0;
  let avgRecvUs = 0;
  let avgResponseWaitUs = 0;
  const lib = input.inferStat;
  if (lib !== undefined && lib.completedRequestCount > 0) {
    const count = BigInt(lib.completedRequestCount);
    const requestUs = us(lib.cumulativeTotalRequestTimeNs / count);
    avgSendUs = us(lib.cumulativeSendTimeNs / count);
    avgRecvUs = us(lib.cumulativeReceiveTimeNs / count);
    avgResponseWaitUs = Math.max(0, requestUs - avgSendUs - avgRecvUs);
  }

  return {
    stats: {
      requestCount: n,
      responseCount,
      errorCount,
      delayedRequestCount: delayedCount,
      sequencePerSecond: rate(sequenceCount),
      durationUs: us(input.durationNs),
      throughput: rate(n * batch),
      responseThroughput: rate(responseCount),
      avgLatencyUs: us(avgNs),
      stdLatencyUs: stdUs,
      minLatencyUs: n > 0 ? us(latencies[0] ?? 0n) : 0,
      maxLatencyUs: n > 0 ? us(latencies[n - 1] ?? 0n) : 0,
      percentileUs,
      avgSendUs,
      avgRecvUs,
      avgResponseWaitUs,
    },
    stabilizingLatencyNs,
  };
}
