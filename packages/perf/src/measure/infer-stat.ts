/**
 * The client library's own timing (Triton's `InferStat`: cumulative send, receive and total
 * request time), read from `TritonClient.inferStat()` and diffed per window for perf_analyzer's
 * "Client Send" / "Client Recv" figures.
 * @packageDocumentation
 */
import type { TritonClient } from '@tritonserver-ts/client';

/** Cumulative client-library timing since the client was created. */
export interface ClientInferStat {
  readonly completedRequestCount: number;
  readonly cumulativeTotalRequestTimeNs: bigint;
  readonly cumulativeSendTimeNs: bigint;
  readonly cumulativeReceiveTimeNs: bigint;
}

/** All zero (a client without `inferStat()`). */
const ZERO_INFER_STAT: ClientInferStat = {
  completedRequestCount: 0,
  cumulativeTotalRequestTimeNs: 0n,
  cumulativeSendTimeNs: 0n,
  cumulativeReceiveTimeNs: 0n,
};

/** Something else that sends a run's requests and keeps the same timing (`EncodedGrpcInfer`). */
export interface InferStatSource {
  inferStat(): ClientInferStat;
}

/** The other senders of each client's run, whose timing counts with the client's own. */
const extraSources = new WeakMap<TritonClient, Set<InferStatSource>>();

/**
 * Counts `source`'s timing in {@link readInferStat} of `client` (requests of the run that do not go
 * through the client) for as long as the client lives, so that the sum only grows (windows are
 * differences of it).
 */
export function addInferStatSource(client: TritonClient, source: InferStatSource): void {
  let sources = extraSources.get(client);
  if (sources === undefined) {
    sources = new Set();
    extraSources.set(client, sources);
  }
  sources.add(source);
}

/**
 * Reads the client's cumulative timing, plus that of the run's other senders
 * ({@link addInferStatSource}); zeros for a client without `inferStat()`.
 */
export function readInferStat(client: TritonClient): ClientInferStat {
  const probe = client as unknown as { inferStat?: () => ClientInferStat };
  const stats: ClientInferStat[] = [];
  if (typeof probe.inferStat === 'function') {
    const stat = probe.inferStat();
    stats.push({
      completedRequestCount: Number(stat.completedRequestCount),
      cumulativeTotalRequestTimeNs: BigInt(stat.cumulativeTotalRequestTimeNs),
      cumulativeSendTimeNs: BigInt(stat.cumulativeSendTimeNs),
      cumulativeReceiveTimeNs: BigInt(stat.cumulativeReceiveTimeNs),
    });
  }
  for (const source of extraSources.get(client) ?? []) stats.push(source.inferStat());
  return sumInferStats(stats);
}

/** `end − start`, field by field. */
export function diffInferStat(start: ClientInferStat, end: ClientInferStat): ClientInferStat {
  return {
    completedRequestCount: end.completedRequestCount - start.completedRequestCount,
    cumulativeTotalRequestTimeNs: end.cumulativeTotalRequestTimeNs - start.cumulativeTotalRequestTimeNs,
    cumulativeSendTimeNs: end.cumulativeSendTimeNs - start.cumulativeSendTimeNs,
    cumulativeReceiveTimeNs: end.cumulativeReceiveTimeNs - start.cumulativeReceiveTimeNs,
  };
}

/** The field-by-field sum (merging windows). */
export function sumInferStats(stats: readonly ClientInferStat[]): ClientInferStat {
  return stats.reduce(
    (a, b) => ({
      completedRequestCount: a.completedRequestCount + b.completedRequestCount,
      cumulativeTotalRequestTimeNs: a.cumulativeTotalRequestTimeNs + b.cumulativeTotalRequestTimeNs,
      cumulativeSendTimeNs: a.cumulativeSendTimeNs + b.cumulativeSendTimeNs,
      cumulativeReceiveTimeNs: a.cumulativeReceiveTimeNs + b.cumulativeReceiveTimeNs,
    }),
    ZERO_INFER_STAT,
  );
}
