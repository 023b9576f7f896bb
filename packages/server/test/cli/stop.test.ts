// `npx tritonserver-ts` stopped every way a user stops it (issue 30): SIGINT, SIGTERM and SIGHUP to
// npx's own process, to the whole process group (Ctrl+C, a closed terminal), and to the CLI. npm
// runs the command as `sh -c 'tritonserver-ts …'` and forwards only SIGINT and SIGTERM, only to that
// shell, which holds SIGINT until its command ends and dies of SIGTERM: before the fix, a signal to
// npx left the server, its Python stubs and its ports behind, and Ctrl+C printed a KeyboardInterrupt
// traceback from every stub as error lines. Each case checks that every process of the command is
// gone within seconds, the ports are free, and the output has no traceback and no error line. The
// server serves two Python models (two stub processes) with /usr/bin/python3.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  addSubPythonModel,
  commandLine,
  faultPythonModel,
  listeningPorts,
  processGroup,
  waitUntilGone,
  writePythonModels,
} from '../../src/testing/index.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
/** How long a stop may take (the server has nothing in flight: it takes well under a second). */
const STOP_WITHIN_MS = 8000;

let repository: string;
beforeAll(async () => {
  repository = await mkdtemp(join(tmpdir(), 'tritonserver-ts-stop-'));
  await writePythonModels(repository, [addSubPythonModel('py_add'), faultPythonModel('py_fault')]);
});
afterAll(async () => {
  for (const group of started) for (const pid of processGroup(group)) process.kill(pid, 'SIGKILL');
  await rm(repository, { recursive: true, force: true });
});

/** Process groups started, killed at the end whatever happened. */
const started: number[] = [];

/** A user's environment: no npm_* variables, no node_modules/.bin on PATH (npx finds the bin). */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('npm_')) env[key] = value;
  env.PATH = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((d) => !d.includes('node_modules'))
    .join(delimiter);
  return env;
}

interface Npx {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly ports: number[];
  /** Every process of the command once it serves: npm, its shell, the CLI, two stubs. */
  readonly pids: number[];
  readonly cli: number;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `npx tritonserver-ts …` in its own process group, as a terminal runs a command. */
async function startNpx(): Promise<Npx> {
  const child = spawn(
    'npx',
    [
      'tritonserver-ts',
      `--model-repository=${repository}`,
      '--backend-config=python,python-interpreter=/usr/bin/python3',
      '--http-port=0',
      '--grpc-port=0',
      '--metrics-port=0',
      '--http-address=127.0.0.1',
      '--grpc-address=127.0.0.1',
    ],
    { cwd: root, env: userEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  if (child.pid === undefined) throw new Error('npx did not start');
  started.push(child.pid);
  let text = '';
  child.stdout?.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (text += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const deadline = Date.now() + 60_000;
  while (!/Started Metrics Service at \S+:\d+/.test(text)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`not serving:\n${text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const ports = [...text.matchAll(/Started \w+ at \S+:(\d+)/g)].map((m) => Number(m[1]));
  const pids = processGroup(child.pid);
  const cli = pids.find((p) => commandLine(p).includes('.bin/tritonserver-ts'));
  if (cli === undefined) throw new Error(`no CLI process among ${pids.map(commandLine).join('\n')}`);
  return { child, output: () => text, ports, pids, cli, exited };
}

/** The log's error lines (tritonserver's `E<date> …` format) and Python tracebacks. */
function problems(output: string): string[] {
  return output.split('\n').filter((l) => /^E\d{4} /.test(l) || l.includes('Traceback'));
}

/** Signals `target` and checks that everything stopped cleanly; answers npx's exit. */
async function stopAndCheck(
  npx: Npx,
  target: 'npm' | 'group' | 'cli',
  signal: NodeJS.Signals,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const npm = npx.child.pid as number;
  // npm, its shell, the CLI and the two stubs.
  expect(npx.pids.length, npx.pids.map(commandLine).join('\n')).toBeGreaterThanOrEqual(5);
  expect(npx.pids.filter((p) => commandLine(p).includes('tritonserver_ts_stub.py'))).toHaveLength(2);
  const t0 = performance.now();
  process.kill(target === 'group' ? -npm : target === 'npm' ? npm : npx.cli, signal);
  const left = await waitUntilGone(npx.pids, STOP_WITHIN_MS);
  const tookMs = performance.now() - t0;
  expect(
    left.map((p) => `${p} ${commandLine(p)}`),
    npx.output(),
  ).toEqual([]);
  const exit = await npx.exited;
  expect(listeningPorts(npx.ports)).toEqual([]);
  expect(problems(npx.output()), npx.output()).toEqual([]);
  expect(tookMs).toBeLessThan(STOP_WITHIN_MS);
  return exit;
}

describe('npx tritonserver-ts stops cleanly', () => {
  it('SIGINT to npx: the server stops (npm forwards it to its shell, which keeps it)', async () => {
    const npx = await startNpx();
    expect(await stopAndCheck(npx, 'npm', 'SIGINT')).toEqual({ code: null, signal: 'SIGINT' });
    expect(npx.output()).toMatch(/received SIGINT, waiting for in-flight requests/);
    expect(npx.output()).toContain('Server stopped');
  });

  it('SIGTERM to npx: the server stops (npm and its shell exit at once, the server follows)', async () => {
    const npx = await startNpx();
    expect(await stopAndCheck(npx, 'npm', 'SIGTERM')).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('SIGHUP to npx: the server stops (npm dies, its shell and the server are left)', async () => {
    const npx = await startNpx();
    expect(await stopAndCheck(npx, 'npm', 'SIGHUP')).toEqual({ code: null, signal: 'SIGHUP' });
  });

  it('Ctrl+C (SIGINT to the process group): no KeyboardInterrupt traceback from the stubs', async () => {
    const npx = await startNpx();
    expect(await stopAndCheck(npx, 'group', 'SIGINT')).toEqual({ code: null, signal: 'SIGINT' });
    expect(npx.output()).toContain('Received SIGINT, waiting for in-flight requests');
    expect(npx.output()).toContain('Server stopped');
  });

  it('SIGTERM and SIGHUP to the process group', async () => {
    const term = await startNpx();
    expect(await stopAndCheck(term, 'group', 'SIGTERM')).toEqual({ code: null, signal: 'SIGTERM' });
    const hup = await startNpx();
    expect((await stopAndCheck(hup, 'group', 'SIGHUP')).signal).toBe('SIGHUP');
  });

  it('SIGHUP to the CLI: a graceful stop, exit 0', async () => {
    const npx = await startNpx();
    expect(await stopAndCheck(npx, 'cli', 'SIGHUP')).toEqual({ code: 0, signal: null });
    expect(npx.output()).toContain('Received SIGHUP, waiting for in-flight requests');
  });

  it('a stop request during startup stops the server once it has started (not in the middle of a load)', async () => {
    // py_slow_init: initialize prints, then sleeps 1.5 s; SIGINT arrives during that sleep.
    const add = addSubPythonModel('py_slow_init');
    const py = (add.files['1/model.py'] as string)
      .replace('print("args keys: "', 'import time\n        print("args keys: "')
      .replace('flush=True)\n', 'flush=True)\n        time.sleep(1.5)\n');
    expect(py).toContain('time.sleep(1.5)');
    const slow = await mkdtemp(join(tmpdir(), 'tritonserver-ts-slow-init-'));
    try {
      await writePythonModels(slow, [{ name: 'py_slow_init', files: { ...add.files, '1/model.py': py } }]);
      const cli = spawn(
        process.execPath,
        [
          fileURLToPath(new URL('../../dist/cli.js', import.meta.url)),
          `--model-repository=${slow}`,
          '--backend-config=python,python-interpreter=/usr/bin/python3',
          '--http-port=0',
          '--allow-grpc=false',
          '--allow-metrics=false',
        ],
        { env: userEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let text = '';
      cli.stdout.on('data', (d: Buffer) => (text += d.toString()));
      cli.stderr.on('data', (d: Buffer) => (text += d.toString()));
      const exited = new Promise<number | null>((resolve) => cli.once('exit', (code) => resolve(code)));
      while (!text.includes('args keys:')) {
        expect(cli.exitCode, text).toBeNull();
        await new Promise((r) => setTimeout(r, 20));
      }
      cli.kill('SIGINT');
      expect(await exited, text).toBe(0);
      expect(text).toContain('Received SIGINT during startup: stopping once it has started');
      expect(text).toContain('Server stopped');
      expect(text).not.toContain('terminate called');
      expect(problems(text), text).toEqual([]);
    } finally {
      await rm(slow, { recursive: true, force: true });
    }
  });

  it('a second SIGINT to npx forces the stop while a request is in flight', async () => {
    const npx = await startNpx();
    const httpPort = Number(/Started HTTPService at \S+:(\d+)/.exec(npx.output())?.[1]);
    // INPUT0 = 2: execute sleeps 60 s; the graceful stop would wait --exit-timeout-secs (30 s).
    const inFlight = fetch(`http://127.0.0.1:${httpPort}/v2/models/py_fault/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1], datatype: 'INT32', data: [2] }] }),
    }).catch((error: unknown) => error);
    await new Promise((r) => setTimeout(r, 500));
    const npm = npx.child.pid as number;
    const t0 = performance.now();
    process.kill(npm, 'SIGINT');
    while (!npx.output().includes('waiting for in-flight requests')) {
      expect(performance.now() - t0).toBeLessThan(STOP_WITHIN_MS);
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 1500));
    expect(npx.pids.filter((p) => processGroup(npm).includes(p)).length).toBeGreaterThanOrEqual(4);
    process.kill(npm, 'SIGINT');
    const left = await waitUntilGone(npx.pids, 5000);
    expect(left.map(commandLine), npx.output()).toEqual([]);
    expect(performance.now() - t0).toBeLessThan(STOP_WITHIN_MS);
    expect(npx.output()).toContain('a second stop request, exiting immediately');
    expect(listeningPorts(npx.ports)).toEqual([]);
    await inFlight;
  });
});
