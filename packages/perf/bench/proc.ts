/** CPU time of another process from /proc (the server package's), and the host's load, for the bench's per-process accounting. */
import os from 'node:os';

export { ownCpuSeconds, processCpuSeconds } from '@tritonserver-ts/server/testing';

/** The host's 1, 5 and 15 minute load averages. */
export function loadAverage(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
}

/** The median of `values` (NaN when empty). */
export function median(values: readonly number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] ?? NaN)
    : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
}
