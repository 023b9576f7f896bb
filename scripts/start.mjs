#!/usr/bin/env node
// `npm start`: build what is missing (packages, the web app, the demo food model), start the embedded
// Triton-compatible server on models_staging/ and the production web app, and print the URL.
//
// Environment:
//   PORT                web app port (default 3000)
//   TRITON_HTTP_PORT    embedded server HTTP port (default 8000); metrics on TRITON_METRICS_PORT (8002)
//   TRITON_HTTP_ADDRESS embedded server (and metrics) bind address (default 127.0.0.1: loopback only)
//   TRITON_SERVER_URL   when set, no embedded server is started: the app talks to that server
//                       (a real Triton, `host:port` or a URL), exactly as in production.
//   TRITON_PROTOCOL     http (default) or grpc: how the web app talks to the server; with the
//                       embedded one it is given both addresses (TRITON_GRPC_URL for gRPC).
//   TRITONSERVER_TS_PYTHON  the Python the embedded server runs food_classifier's model.py with
//                       (needs numpy and Pillow); unset: the first of `python3` on PATH and
//                       /usr/bin/python3 that imports both (scripts/embedded-server.mjs).
//
// Stopping. package.json runs this script with `exec`, so npm's shell hands over to it and the
// SIGINT / SIGTERM npm forwards reach it. SIGINT, SIGTERM or SIGHUP (to npm, to this process, or to
// the whole process group as Ctrl+C or a closed terminal do), or npm exiting without a word
// (this process gets a new parent): the build step or the children (the server and the web app)
// are asked to stop (SIGINT / SIGTERM; SIGHUP becomes SIGTERM) and, once all have exited, this
// process ends with the same signal (npm then exits 130 / 143 / 129, silently). The children also
// stop by themselves if this process dies (they hold an IPC channel to it). Signals less than a
// second apart are one (Ctrl+C reaches this process twice: from the terminal and from npm); a
// second one later, or children still running after STOP_TIMEOUT_MS, stops them at once (the
// server exits, the web app's Next.js server is killed and its shared-memory objects removed).
// A build step (npx turbo, npm run) runs in a process group of its own, which gets the signal as a
// whole: npx and npm would pass it only to the `sh -c` they run their command in, which keeps it.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { embeddedServerCommand } from './embedded-server.mjs';

const root = new URL('..', import.meta.url).pathname;
const env = {
  ...process.env,
  TURBO_TELEMETRY_DISABLED: '1',
  TURBO_NO_UPDATE_NOTIFIER: '1',
  DO_NOT_TRACK: '1',
};

/** Stop requests closer together than this are one. */
const MERGE_MS = 1000;
/** After a stop request, children still running this long are stopped at once. */
const STOP_TIMEOUT_MS = 10_000;

/** Running child processes (a build step, or the server and the web app), with their names. */
const children = new Map();
/** The first stop request: the signal this process ends with, and the exit code otherwise. */
let stop;
let stopCount = 0;
let lastStopAt = -Infinity;

/** The signal a child is asked to stop with. */
const forChild = (signal) => (signal === 'SIGHUP' ? 'SIGTERM' : signal);

/** Sends `signal` to a child: to the whole process group of a build step. */
function signalChild(child, name, signal) {
  try {
    if (name === 'build') process.kill(-child.pid, signal);
    else child.kill(signal);
  } catch {
    // Gone already.
  }
}

function stopNow() {
  for (const [child, name] of children) {
    // The server and the web app stop at once on a second signal (the web app kills Next.js and
    // removes its shared memory); a build step is killed.
    signalChild(child, name, name === 'build' ? 'SIGKILL' : stop?.signal === 'SIGINT' ? 'SIGINT' : 'SIGTERM');
  }
  setTimeout(() => {
    for (const [child, name] of children) signalChild(child, name, 'SIGKILL');
  }, 3000).unref();
}

/**
 * A stop request: `signal` (what this process ends with) or, for a child that failed, `code`.
 * @param {{ signal?: 'SIGINT' | 'SIGTERM' | 'SIGHUP', code?: number, why: string }} request
 */
function requestStop(request) {
  const now = performance.now();
  if (now - lastStopAt < MERGE_MS) return;
  lastStopAt = now;
  stopCount += 1;
  if (stopCount > 1) {
    console.error(`npm start: ${request.why} again: stopping at once`);
    stopNow();
    return;
  }
  stop = request;
  if (request.signal !== undefined) console.log(`\nnpm start: ${request.why}: stopping`);
  for (const [child, name] of children) signalChild(child, name, forChild(request.signal ?? 'SIGTERM'));
  setTimeout(() => {
    if (children.size > 0) {
      console.error(`npm start: still running after ${STOP_TIMEOUT_MS / 1000} s: stopping at once`);
      stopCount += 1;
      stopNow();
    }
  }, STOP_TIMEOUT_MS).unref();
  finishIfDone();
}

/** Ends this process once a stop was requested and every child has exited. */
function finishIfDone() {
  if (stop === undefined || children.size > 0) return;
  if (stop.signal === undefined) process.exit(stop.code ?? 1);
  // End with the signal, as a process without a handler would: npm then exits the same way.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.removeAllListeners(signal);
  process.kill(process.pid, stop.signal);
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => requestStop({ signal, why: `received ${signal}` }));
}
// npm (this process's parent, thanks to `exec`) may die without signalling it: SIGHUP and SIGKILL
// are not forwarded. Only under npm: a user's `nohup node scripts/start.mjs &` may outlive its shell.
if (process.env.npm_lifecycle_event !== undefined) {
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    requestStop({ signal: 'SIGHUP', why: `npm (pid ${parent}), which started it, exited` });
  }, 250);
  watch.unref();
}

/** Whether process group `pgid` still has a process. */
function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts a child process; `name` 'build' for a build step, which gets a process group of its own
 * (and no stdin: a process group in the background must not read the terminal). Children other
 * than build steps get an IPC channel, so they stop when this process dies without stopping them.
 */
function run(name, cmd, args, extraEnv = {}) {
  const build = name === 'build';
  const child = spawn(cmd, args, {
    cwd: root,
    stdio: build ? ['ignore', 'inherit', 'inherit'] : ['inherit', 'inherit', 'inherit', 'ipc'],
    detached: build,
    env: { ...env, ...extraEnv },
  });
  children.set(child, name);
  child.once('exit', async () => {
    // A stopped build step is done when its whole group is (turbo's tasks may outlive npx).
    if (build && stop !== undefined) {
      const deadline = Date.now() + 5000;
      while (groupAlive(child.pid) && Date.now() < deadline) await sleep(100);
      signalChild(child, name, 'SIGKILL');
    }
    children.delete(child);
    finishIfDone();
  });
  // A child that could not be started emits 'error' and no 'exit'.
  child.once('error', (error) => {
    if (child.pid !== undefined) return;
    console.error(`npm start: could not start ${name}: ${error.message}`);
    children.delete(child);
    if (stop === undefined) requestStop({ code: 1, why: `${name} could not start` });
    finishIfDone();
  });
  return child;
}

async function step(label, cmd, args) {
  if (stop !== undefined) return;
  console.log(`\n=== ${label}`);
  const child = run('build', cmd, args);
  const [code, signal] = await new Promise((resolve) =>
    child.once('exit', (c, s) => resolve([c, s])).once('error', () => resolve([1, null])),
  );
  if (stop !== undefined) return;
  if (code !== 0) {
    console.error(`npm start: ${label} failed (exit ${code ?? signal})`);
    process.exit(code ?? 1);
  }
}

function launch(name, args, extraEnv) {
  const child = run(name, process.execPath, args, extraEnv);
  child.once('exit', (code, signal) => {
    if (stop === undefined) {
      console.error(`npm start: ${name} exited (${code ?? signal}); stopping`);
      requestStop({ code: code ?? 1, why: `${name} exited` });
    }
  });
  return child;
}

async function waitReady(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && stop === undefined) {
    try {
      const res = await fetch(url);
      if (res.status === 200) return true;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  return false;
}

await step('build packages and the web app', 'npx', ['turbo', 'run', 'build']);
await step('ensure the demo food model', 'npm', ['run', 'model:ensure', '-w', '@gourmetgram/food-model']);

let tritonUrl = process.env.TRITON_SERVER_URL;
/** The web app's variables beside TRITON_SERVER_URL: the embedded server's gRPC address. */
const webEnv = {};
if (stop === undefined && (tritonUrl === undefined || tritonUrl === '')) {
  const command = embeddedServerCommand(root, process.env);
  const cli = command.args[0];
  if (!existsSync(cli)) {
    console.error(`npm start: missing ${cli}: the server build did not produce its CLI`);
    process.exit(1);
  }
  if (command.pythonMissing) {
    console.warn(
      '\nnpm start: no Python with numpy and Pillow (tried python3 on PATH and /usr/bin/python3; set ' +
        'TRITONSERVER_TS_PYTHON, or install python3-numpy and python3-pil): food_classifier (the ' +
        'Python-backend model) will be UNAVAILABLE; food_classifier_onnx is served.',
    );
  } else {
    console.log(`\nPython-backend models run with ${command.python}`);
  }
  launch('embedded server', command.args);
  tritonUrl = command.tritonUrl;
  webEnv.TRITON_GRPC_URL = command.tritonGrpcUrl;
  const base = `http://${tritonUrl}`;
  if (!(await waitReady(`${base}/v2/health/ready`, 120_000)) && stop === undefined) {
    console.error(`npm start: the embedded server at ${base} did not become ready within 120 s`);
    requestStop({ code: 1, why: 'the embedded server did not become ready' });
  }
} else if (stop === undefined) {
  console.log(`\nTRITON_SERVER_URL=${tritonUrl}: using that server, not starting the embedded one.`);
}

if (stop === undefined) {
  const port = process.env.PORT ?? '3000';
  launch('web app', [join(root, 'apps/web/scripts/start.mjs')], {
    PORT: port,
    TRITON_SERVER_URL: tritonUrl,
    ...webEnv,
  });
  if (await waitReady(`http://127.0.0.1:${port}/api/health`, 120_000)) {
    console.log(`\nGourmetGram is running: http://localhost:${port}  (inference server: ${tritonUrl})`);
    console.log('Press Ctrl+C to stop.');
  } else if (stop === undefined) {
    console.error(`npm start: the web app did not answer /api/health on port ${port} within 120 s`);
  }
}
