/**
 * The parent's side of the process-level memory tests: starts `memory-server.ts` in its own process
 * (run from the TypeScript sources, `--expose-gc`), reads its RSS and open files from /proc, asks it
 * for what it holds after a full GC, and watches its memory and the latency of `/v2/health/live`
 * while an attack runs. Used by the HTTP, gRPC, BYTES and shared-memory memory tests.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';

import type { MemoryServerOptions, MemoryServerStats } from './memory-server.js';

export const MiB = 1024 * 1024;

const fixture = fileURLToPath(new URL('./memory-server.ts', import.meta.url));

/** A memory-test server in its own process. */
export interface MemoryChild {
  readonly process: ChildProcess;
  /** HTTP port. */
  readonly port: number;
  /** gRPC port (0 when the server serves no gRPC). */
  readonly grpcPort: number;
  /** What the server holds after a full GC (see `MemoryServerStats`). */
  stats(): Promise<MemoryServerStats>;
  /** Current RSS in bytes, from /proc (no GC). */
  rss(): number;
  /** Open file descriptors, from /proc. */
  fds(): number;
  /** Asks the server to close, killing it after 5 s. */
  stop(): Promise<void>;
}

/** Starts a memory-test server with `options`; resolves once it listens. */
export async function startMemoryChild(options: MemoryServerOptions): Promise<MemoryChild> {
  const proc = fork(fixture, [JSON.stringify(options)], {
    execArgv: ['--expose-gc', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ports = await new Promise<{ port: number; grpcPort?: number }>((resolve, reject) => {
    proc.once('message', (m: { port: number; grpcPort?: number }) => resolve(m));
    proc.once('exit', (code) => reject(new Error(`memory server exited with ${code}`)));
  });
  return {
    process: proc,
    port: ports.port,
    grpcPort: ports.grpcPort ?? 0,
    stats: () =>
      new Promise((resolve) => {
        proc.once('message', (m: MemoryServerStats) => resolve(m));
        proc.send('stats');
      }),
    rss: () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'))?.[1]) * 1024,
    fds: () => readdirSync(`/proc/${proc.pid}/fd`).length,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.send('close');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 20 ms until it holds (true) or `ms` have passed (false). */
export async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

/** Samples the child's RSS every 20 ms until stopped; returns the peak. */
export function peakRss(c: Pick<MemoryChild, 'rss'>): () => number {
  let peak = c.rss();
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, c.rss());
    } catch {
      // exited
    }
  }, 20);
  return () => {
    clearInterval(timer);
    return peak;
  };
}

/** `GET /v2/health/live` on a fresh connection; resolves with the status (0 when it failed). */
export function live(port: number): Promise<number> {
  return new Promise((resolve) => {
    const req = httpRequest({ port, host: '127.0.0.1', path: '/v2/health/live', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end();
  });
}

/**
 * Watches the child while an attack runs: its RSS every 20 ms and the latency of `/v2/health/live`
 * (one probe after another, 50 ms apart). The returned function stops and gives both peaks.
 */
export function watchMemoryChild(
  c: Pick<MemoryChild, 'rss' | 'port'>,
): () => Promise<{ peakRss: number; worstHealthMs: number }> {
  const peak = peakRss(c);
  let worst = 0;
  let stopped = false;
  const health = (async () => {
    while (!stopped) {
      const started = performance.now();
      await live(c.port);
      worst = Math.max(worst, performance.now() - started);
      await sleep(50);
    }
  })();
  return async () => {
    stopped = true;
    const peakRssBytes = peak();
    await health;
    return { peakRss: peakRssBytes, worstHealthMs: worst };
  };
}

/** Bytes as whole MiB, for messages. */
export const mb = (bytes: number): number => Math.round(bytes / MiB);
