/**
 * Bench helpers shared by the suites: server processes started as children, their CPU time and
 * peak RSS read from /proc (with every descendant process, e.g. Python backend stubs), medians and
 * number formatting.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import type { LoadResult } from './load.js';
import { ownCpuSeconds, processCpuSeconds as cpuSecondsOf } from '../src/testing/process-cpu.js';

// Per-process CPU from /proc, shared with packages/perf's bench through the testing subpath.
export { cpuSecondsOf, ownCpuSeconds };

/** The bench directory. */
export const benchDir = path.dirname(fileURLToPath(import.meta.url));
/** The repository root. */
export const repoRoot = path.resolve(benchDir, '../../..');

/** Peak RSS (VmHWM) of one process in MiB; NaN when it is gone. */
export function peakRssMb(pid: number): number {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m?.[1] === undefined ? NaN : Number(m[1]) / 1024;
  } catch {
    return NaN;
  }
}

/**
 * Every live descendant of `pid` (children of any of its threads, recursively), from
 * `/proc/<pid>/task/<tid>/children`. The Python backend's stubs are children of the server process.
 */
export function descendantsOf(pid: number): number[] {
  const found: number[] = [];
  const pending = [pid];
  for (let p = pending.pop(); p !== undefined; p = pending.pop()) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      let children: string;
      try {
        children = readFileSync(`/proc/${p}/task/${tid}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const child of children.split(/\s+/).filter((s) => s.length > 0)) {
        found.push(Number(child));
        pending.push(Number(child));
      }
    }
  }
  return found;
}

/** CPU seconds used so far by a process and by its live descendants (e.g. Python stubs). */
export interface TreeCpu {
  /** The process and every descendant. */
  readonly total: number;
  /** The descendants alone. */
  readonly descendants: number;
}

/** {@link TreeCpu} of `pid`. A descendant that exits between two samples takes its CPU time along. */
export function treeCpuSeconds(pid: number): TreeCpu {
  const own = cpuSecondsOf(pid);
  const descendants = descendantsOf(pid).reduce((sum, p) => {
    const s = cpuSecondsOf(p);
    return Number.isFinite(s) ? sum + s : sum;
  }, 0);
  return { total: own + descendants, descendants };
}

/** Peak RSS of a process tree in MiB: the sum of every live process's VmHWM, and the descendants' part. */
export function treePeakRssMb(pid: number): { total: number; descendants: number } {
  const own = peakRssMb(pid);
  const descendants = descendantsOf(pid).reduce((sum, p) => {
    const r = peakRssMb(p);
    return Number.isFinite(r) ? sum + r : sum;
  }, 0);
  return { total: own + descendants, descendants };
}

/** A server (or floor) running in a child process. */
export interface ServerChild {
  readonly port: number;
  /** Everything the child printed on its first line (`port`, and e.g. `grpcPort`). */
  readonly info: Readonly<Record<string, number>>;
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `script` (under tsx; relative to the bench directory, or absolute) with `args`; the script prints `{"port":N}` on its first stdout line
 * once listening and exits on SIGTERM.
 */
export async function startChild(
  script: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<ServerChild> {
  // BENCH_CHILD_NODE_FLAGS (space-separated, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`): Node flags of the child.
  const flags = (env.BENCH_CHILD_NODE_FLAGS ?? '').split(' ').filter((f) => f.length > 0);
  const child = spawn(
    process.execPath,
    [...flags, '--import', 'tsx', path.resolve(benchDir, script), ...args],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env,
    },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const info = await new Promise<Record<string, number>>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', (line) =>
      resolve(JSON.parse(line) as Record<string, number>),
    );
    child.once('exit', (code) => reject(new Error(`${script} exited with code ${code}`)));
  });
  return {
    port: info.port ?? -1,
    info,
    pid: child.pid ?? -1,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The median of `values` (NaN when empty). */
export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
}

/** The slice with the median throughput (its latencies are reported with it). */
export function medianSlice(slices: readonly LoadResult[]): LoadResult | undefined {
  const sorted = [...slices].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** `n` with `d` decimals, or `–` when it is missing or not finite. */
export const fmt = (n: number | undefined, d = 1): string =>
  n !== undefined && Number.isFinite(n) ? n.toFixed(d) : '–';

/** The host's load averages, one decimal each. */
export const loadAverage = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
