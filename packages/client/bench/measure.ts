/**
 * Bench helpers: closed-loop and streaming load windows, with the CPU time the client (this
 * process) and the server (its own process) spent in each window.
 */
import { readFileSync } from 'node:fs';

/** One call of a closed-loop cell; resolves when its response has been read (and checked). */
export type Call = () => Promise<void>;

/**
 * A stream cell: opens one stream, keeps `window` requests in flight until `deadline`
 * (performance.now() time), then drains it; resolves with the number of responses read.
 */
export type StreamRun = (window: number, deadline: number) => Promise<number>;

/** What one measured window gives. */
export interface Window {
  readonly calls: number;
  readonly seconds: number;
  /** Latency percentiles in ms (closed loop only). */
  readonly p50Ms: number | undefined;
  readonly p99Ms: number | undefined;
  /** CPU seconds (user + system, every thread) of this process during the window. */
  readonly clientCpu: number;
  /** CPU seconds of the server process during the window (from /proc, 10 ms ticks). */
  readonly serverCpu: number;
}

/** CPU seconds (user + system, all threads) of this process: getrusage, the same utime + stime
 * /proc/self/stat reports, at microsecond resolution. */
export function ownCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** CPU seconds (utime + stime, every thread) of another process, from /proc/<pid>/stat. */
export function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) start at field 3 (state); utime and
  // stime are fields 14 and 15 of proc(5), in clock ticks (USER_HZ = 100 on Linux).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The 1-minute load average, for the record. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** `concurrency` closed-loop callers for `ms` milliseconds; returns the call latencies in ms. */
async function closedLoop(call: Call, concurrency: number, ms: number): Promise<number[]> {
  const latencies: number[] = [];
  const deadline = performance.now() + ms;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await call();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return latencies;
}

/** Warms `call` up, then measures one closed-loop window. */
export async function measureClosedLoop(
  call: Call,
  concurrency: number,
  seconds: number,
  warmupSeconds: number,
  serverPid: number,
): Promise<Window> {
  await closedLoop(call, concurrency, warmupSeconds * 1000);
  const server0 = cpuSecondsOf(serverPid);
  const client0 = ownCpuSeconds();
  const t0 = performance.now();
  const latencies = await closedLoop(call, concurrency, seconds * 1000);
  const elapsed = (performance.now() - t0) / 1000;
  const clientCpu = ownCpuSeconds() - client0;
  const serverCpu = cpuSecondsOf(serverPid) - server0;
  latencies.sort((a, b) => a - b);
  return {
    calls: latencies.length,
    seconds: elapsed,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    clientCpu,
    serverCpu,
  };
}

/** Warms a stream cell up, then measures one window on a fresh stream. */
export async function measureStream(
  run: StreamRun,
  window: number,
  seconds: number,
  warmupSeconds: number,
  serverPid: number,
): Promise<Window> {
  await run(window, performance.now() + warmupSeconds * 1000);
  const server0 = cpuSecondsOf(serverPid);
  const client0 = ownCpuSeconds();
  const t0 = performance.now();
  const calls = await run(window, t0 + seconds * 1000);
  const elapsed = (performance.now() - t0) / 1000;
  const clientCpu = ownCpuSeconds() - client0;
  const serverCpu = cpuSecondsOf(serverPid) - server0;
  return { calls, seconds: elapsed, p50Ms: undefined, p99Ms: undefined, clientCpu, serverCpu };
}

/** The median of some numbers (NaN when none). */
export function median(values: readonly number[]): number {
  const s = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}
