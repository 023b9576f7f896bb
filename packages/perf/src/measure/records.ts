/**
 * Which request records belong to a measurement window, by perf_analyzer's rule: a request counts
 * in the window its last response (or its error) arrived in, window edges included. Records that
 * end later stay pending for the next window; none is counted twice.
 * @packageDocumentation
 */
import type { RequestRecord } from '../types.js';

/** The records of one window and those kept for later windows. */
interface WindowSplit {
  readonly inWindow: RequestRecord[];
  readonly pending: RequestRecord[];
}

/**
 * Splits `records` at the window `[startNs, endNs]` (both `process.hrtime.bigint()` times).
 * Records that ended before the window (left over from an earlier level or the warmup) are
 * dropped; records ending after it are returned as `pending`.
 */
export function splitWindowRecords(
  records: readonly RequestRecord[],
  startNs: bigint,
  endNs: bigint,
): WindowSplit {
  const inWindow: RequestRecord[] = [];
  const pending: RequestRecord[] = [];
  for (const record of records) {
    if (record.endNs < record.startNs) continue;
    if (record.endNs > endNs) pending.push(record);
    else if (record.endNs >= startNs) inWindow.push(record);
  }
  return { inWindow, pending };
}

/** A record's latency in ns (issue to last response). */
export function latencyNs(record: RequestRecord): bigint {
  return record.endNs - record.startNs;
}
