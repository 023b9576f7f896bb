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

/** Reads the client's cumulative timing; zeros when the client has no `inferStat()`. */
export function readInferStat(client: TritonClient): ClientInferStat {
  const probe = client as unknown as { inferStat?: () => ClientInferStat };
  if (typeof probe.inferStat !== 'function') return ZERO_INFER_STAT;
  const stat = probe.inferStat();
  return {
    completedRequestCount: Number(stat.completedRequestCount),
    cumulativeTotalRequestTimeNs: BigInt(stat.cumulativeTotalRequestTimeNs),
    cumulativeSendTimeNs: BigInt(stat.cumulativeSendTimeNs),
    cumulativeReceiveTimeNs: BigInt(stat.cumulativeReceiveTimeNs),
  };
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
