/**
 * Shared by the fuzzers: a seeded PRNG, a repository of generated test models, and the built CLI
 * as a child process (its memory its own), with its ports read from the startup banner and its
 * resident memory read from /proc.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { writeTestModelRepository } from '../../src/testing/index.js';

/** The built CLI the fuzzers run (`npm run build -w @tritonserver-ts/server`). */
export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

/** A seeded random sequence (mulberry32: small, fast, deterministic) and helpers over it. */
export class Random {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** One of `items`. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  /** `n` random bytes. */
  bytes(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }
}

/**
 * Writes the generated test models named in `only` into a fresh temp directory. (The server's own
 * sources are not imported: the fuzzers run the built CLI.)
 */
export async function makeTestRepository(only: readonly string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tritonserver-ts-fuzz-'));
  await writeTestModelRepository(dir, { only });
  return dir;
}

/** The CLI server in its child process. */
export interface CliServer {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The gRPC port, when gRPC is served. */
  readonly grpcPort: number | undefined;
  /** The last part of what the server wrote to stderr. */
  stderrTail(): string;
  /** Resident memory (VmRSS) in KiB. */
  rssKiB(): number;
  /** Kills the server. */
  kill(): void;
}

/**
 * Starts the built CLI with `args` (add `--http-port=0` and, for gRPC, `--grpc-port=0`) and resolves
 * once its HTTP service has started (the gRPC banner comes before it).
 */
export async function startCli(args: readonly string[]): Promise<CliServer> {
  if (!existsSync(CLI)) throw new Error(`build the package first (${CLI} is missing)`);
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  let grpcPort: number | undefined;
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${err}`)), 30_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      if (err.length > 100_000) err = err.slice(-50_000);
      const g = /Started GRPCInferenceService at [^\s]+:(\d+)/.exec(err);
      if (g !== null) grpcPort = Number(g[1]);
      const m = /Started HTTPService at [^:\s]+:(\d+)/.exec(err);
      if (m !== null) {
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${m[1]}`);
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}):\n${err}`)));
  });
  return {
    child,
    url,
    grpcPort,
    stderrTail: () => err.slice(-4000),
    rssKiB: () => {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    },
    kill: () => {
      child.kill('SIGKILL');
    },
  };
}
