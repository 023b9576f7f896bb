/**
 * Per-process CPU accounting for benchmarks and tests that run a server in another process (Linux
 * `/proc`): what the server bench and the perf bench read around each measured window.
 * @packageDocumentation
 */
import { readFileSync } from 'node:fs';

/** CPU seconds (user + system, every thread) process `pid` has used so far; NaN once it is gone. */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // proc(5): utime and stime are fields 14 and 15, in clock ticks (USER_HZ, 100 on Linux).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** CPU seconds (user + system, every thread) this process has used so far. */
export function ownCpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}
