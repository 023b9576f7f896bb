/**
 * `npx perf-analyzer-ts` and `npx model-analyzer-ts` stopped the ways a user stops them (issue 30):
 * npm runs a bin as `sh -c '<bin> …'` and forwards only SIGINT and SIGTERM, only to that shell
 * (which holds SIGINT until its command ends, and dies of SIGTERM); SIGHUP kills npm alone. Before
 * the fix a signal to npx left the measurement running (for the whole sweep, or for ever with
 * SIGINT); now each of SIGINT, SIGTERM and SIGHUP to npx, and SIGTERM / SIGHUP to the CLI itself,
 * stop the run the way Ctrl+C does: what was measured is reported, model-analyzer-ts loads the
 * model's own configuration again, and no process of the command is left.
 *
 * Also checks that the stop-request modules are the same in this package and in the server.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { TritonClient } from '@tritonserver-ts/client';
import {
  commandLine,
  processGroup,
  sharedMemoryObjects,
  waitUntilGone,
} from '@tritonserver-ts/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { settingsOf } from '../src/tune/search-space.js';
import { startEmbedded, type Embedded } from './helpers/embedded.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const STOP_WITHIN_MS = 8000;

let embedded: Embedded;
let client: TritonClient;
let out: string;
const started: number[] = [];

beforeAll(async () => {
  embedded = await startEmbedded({
    testModels: ['simple'],
    identity: [
      { name: 'tune_stop', delayMs: 10, maxBatchSize: 4, dims: [4] },
      { name: 'slow_stop', delayMs: 6000, maxBatchSize: 0, dims: [4] },
    ],
  });
  client = new TritonClient({ url: embedded.url });
  out = await mkdtemp(join(tmpdir(), 'perf-stop-'));
});

afterAll(async () => {
  for (const group of started) for (const pid of processGroup(group)) process.kill(pid, 'SIGKILL');
  await client?.close();
  await embedded?.close();
  if (out !== undefined) await rm(out, { recursive: true, force: true });
});

/** A user's environment: no npm_* variables, no node_modules/.bin on PATH. */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('npm_')) env[key] = value;
  env.PATH = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((d) => !d.includes('node_modules'))
    .join(delimiter);
  return env;
}

interface Run {
  readonly stdout: string;
  readonly stderr: string;
  readonly exit: { code: number | null; signal: NodeJS.Signals | null };
  /** From the signal to the last process of the command gone. */
  readonly stopMs: number;
  /** The CLI's process id. */
  readonly cli: number;
}

/**
 * `npx <bin> <args>` in its own process group; once stderr matches `when`, `signal` goes to
 * `target` (npx's own process, or the CLI).
 */
async function npxStopped(
  bin: string,
  args: readonly string[],
  when: RegExp,
  target: 'npm' | 'cli',
  signal: NodeJS.Signals,
  then?: (cli: number, output: () => string) => Promise<void>,
  ready?: () => Promise<void>,
): Promise<Run> {
  const child = spawn('npx', [bin, ...args], {
    cwd: root,
    env: userEnv(),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const npm = child.pid as number;
  started.push(npm);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<Run['exit']>((resolve) =>
    child.once('exit', (code, s) => resolve({ code, signal: s })),
  );
  const deadline = Date.now() + 30_000;
  while (!when.test(stderr)) {
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`${bin} did not get there:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const pids = processGroup(npm);
  const cli = pids.find((p) => commandLine(p).includes(`.bin/${bin}`));
  expect(cli, pids.map(commandLine).join('\n')).toBeDefined();
  expect(pids.length).toBeGreaterThanOrEqual(3); // npm, its shell, the CLI
  const ownShm = (name: string): boolean => name.startsWith(`perf_analyzer_ts_${String(cli)}_`);
  if (args.includes('--shared-memory')) {
    // The regions exist once the CLI has registered them; under load that can trail the log line.
    for (const until = Date.now() + 10_000; sharedMemoryObjects(ownShm).length === 0 && Date.now() < until;)
      await new Promise((r) => setTimeout(r, 50));
    expect(sharedMemoryObjects(ownShm).length).toBeGreaterThan(0);
  }
  await ready?.();
  const t0 = performance.now();
  process.kill(target === 'npm' ? npm : (cli as number), signal);
  await then?.(cli as number, () => stdout);
  const left = await waitUntilGone(pids, STOP_WITHIN_MS);
  const stopMs = performance.now() - t0;
  expect(left.map(commandLine), `${stdout}\n${stderr}`).toEqual([]);
  // `--shared-memory system` objects of the CLI (perf_analyzer_ts_<pid>_…) are gone too.
  expect(sharedMemoryObjects(ownShm)).toEqual([]);
  return { stdout, stderr, exit: await exit, stopMs, cli: cli as number };
}

const hostPort = (url: string): string => url.replace(/^http:\/\//, '');
const PERF = [
  '-m',
  'simple',
  '--concurrency-range',
  '1:64',
  '-p',
  '300',
  '-s',
  '100',
  '--shared-memory',
  'system',
];
const MEASURING = /concurrency 2: measuring/;

describe('npx perf-analyzer-ts stops cleanly', () => {
  it('SIGINT to npx: the run stops as on Ctrl+C and reports what was measured', async () => {
    const r = await npxStopped(
      'perf-analyzer-ts',
      [...PERF, '-u', hostPort(embedded.url)],
      MEASURING,
      'npm',
      'SIGINT',
    );
    expect(r.stdout).toMatch(/\(pid \d+\), which started this process, received SIGINT\.\n/);
    expect(r.stdout).toContain('Waiting for in-flight inferences to complete.\n');
    expect(r.stdout).toContain('Concurrency: 1, throughput: ');
    expect(r.stdout).not.toContain('Request concurrency: 4');
    expect(r.exit).toEqual({ code: null, signal: 'SIGINT' });
    expect(r.stopMs).toBeLessThan(STOP_WITHIN_MS);
  });

  it('SIGTERM and SIGHUP to npx (npm and its shell die at once): the run stops', async () => {
    for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
      const r = await npxStopped(
        'perf-analyzer-ts',
        [...PERF, '-u', hostPort(embedded.url)],
        MEASURING,
        'npm',
        signal,
      );
      expect(r.stdout).toMatch(/\(pid \d+\), which started this process, exited\.\n/);
      expect(r.stdout).toContain('Waiting for in-flight inferences to complete.\n');
      expect(r.exit.signal).toBe(signal);
    }
  });

  it('SIGTERM to the CLI: the same clean stop, exit 0', async () => {
    const r = await npxStopped(
      'perf-analyzer-ts',
      [...PERF, '-u', hostPort(embedded.url)],
      MEASURING,
      'cli',
      'SIGTERM',
    );
    expect(r.stdout).toContain(
      'Interrupt signal (15) received.\nWaiting for in-flight inferences to complete.\n',
    );
    expect(r.stdout).toContain('Concurrency: 1, throughput: ');
    expect(r.exit).toEqual({ code: 0, signal: null });
  });
});

describe('npx perf-analyzer-ts stops at once on a second request', () => {
  it('SIGTERM to npx, then SIGTERM to the CLI while 6-second requests are in flight: exit 143 at once', async () => {
    let forcedAt = 0;
    const r = await npxStopped(
      'perf-analyzer-ts',
      ['-m', 'slow_stop', '-u', hostPort(embedded.url), '--shape', 'INPUT0:4', '--shared-memory', 'system'],
      /concurrency 1: measuring/,
      'npm',
      'SIGTERM',
      async (cli, output) => {
        // npm and its shell are gone at once; the CLI notices within a tick and waits for the request
        // in flight. The second request must come after the first one's 1 s merge window and while
        // that request still runs (it started just before the first request: see below).
        const deadline = Date.now() + 10_000;
        while (!output().includes('Waiting for in-flight inferences to complete.') && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 5));
        }
        await new Promise((r) => setTimeout(r, 1200));
        forcedAt = performance.now();
        process.kill(cli, 'SIGTERM');
      },
      // The first stop request comes right after a request completes: the CLI's next request (one
      // at a time) then has its whole 6 s ahead of it.
      async () => {
        const done = async (): Promise<number> => {
          const stats = await client.getInferenceStatistics('slow_stop');
          return stats.model_stats.reduce((n, m) => n + Number(m.inference_stats.success.count), 0);
        };
        const before = await done();
        const deadline = Date.now() + 15_000;
        while ((await done()) === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      },
    );
    expect(r.stdout).toContain('Waiting for in-flight inferences to complete.\n');
    expect(r.stdout).toContain('Interrupt signal (15) received.\nExiting immediately...\n');
    // Well before the request in flight could have finished.
    expect(performance.now() - forcedAt).toBeLessThan(1500);
  });
});

describe('npx model-analyzer-ts stops cleanly', () => {
  const tuneArgs = (dir: string): string[] => [
    '-m',
    'tune_stop',
    '-u',
    embedded.url,
    '--instance-counts',
    '1,2,3',
    '--max-batch-sizes',
    '4',
    '--dynamic-batching',
    'off',
    '--concurrency',
    '2',
    '--output-dir',
    join(out, dir),
    '-p',
    '300',
    '-s',
    '100',
    '--shape',
    'INPUT0:4',
  ];

  it('SIGINT and SIGHUP to npx: the model configuration is restored, what was measured reported', async () => {
    const before = settingsOf(await client.getModelConfig('tune_stop'));
    for (const signal of ['SIGINT', 'SIGHUP'] as const) {
      const r = await npxStopped(
        'model-analyzer-ts',
        tuneArgs(signal),
        /2\/3 tune_stop_config_0: /,
        'npm',
        signal,
      );
      expect(r.stderr).toMatch(
        /\(pid \d+\), which started this process, (received SIGINT|exited): finishing/,
      );
      expect(r.stderr).toContain("the model's own configuration is loaded again");
      expect(r.stderr).toContain('stopped early: the measurements so far are reported');
      expect(r.exit.signal).toBe(signal);
      expect(settingsOf(await client.getModelConfig('tune_stop'))).toEqual(before);
    }
  });
});

describe('the stop-request modules', () => {
  it('are the same files in packages/perf and packages/server', () => {
    for (const name of ['launcher-watch.ts', 'stop-requests.ts']) {
      const perf = readFileSync(fileURLToPath(new URL(`../src/cli/${name}`, import.meta.url)), 'utf8');
      const server = readFileSync(join(root, 'packages/server/src/process', name), 'utf8');
      expect(perf, name).toBe(server);
    }
  });
});
