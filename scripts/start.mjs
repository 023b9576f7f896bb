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
import { spawn, spawnSync } from 'node:child_process';
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

function step(label, cmd, args) {
  console.log(`\n=== ${label}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env });
  if (r.status !== 0) {
    console.error(`npm start: ${label} failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
}

step('build packages and the web app', 'npx', ['turbo', 'run', 'build']);
step('ensure the demo food model', 'npm', ['run', 'model:ensure', '-w', '@gourmetgram/food-model']);

const children = [];
let stopping = false;
function stopAll(code) {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  setTimeout(() => process.exit(code), 200).unref();
}
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => stopAll(0));

function launch(name, args, extraEnv) {
  const child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit', env: { ...env, ...extraEnv } });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`npm start: ${name} exited (${code ?? signal}); stopping`);
      stopAll(code ?? 1);
    }
  });
  children.push(child);
  return child;
}

async function waitReady(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
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

let tritonUrl = process.env.TRITON_SERVER_URL;
/** The web app's variables beside TRITON_SERVER_URL: the embedded server's gRPC address. */
const webEnv = {};
if (tritonUrl === undefined || tritonUrl === '') {
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
  if (!(await waitReady(`${base}/v2/health/ready`, 120_000))) {
    console.error(`npm start: the embedded server at ${base} did not become ready within 120 s`);
    stopAll(1);
  }
} else {
  console.log(`\nTRITON_SERVER_URL=${tritonUrl}: using that server, not starting the embedded one.`);
}

const port = process.env.PORT ?? '3000';
launch('web app', [join(root, 'apps/web/scripts/start.mjs')], {
  PORT: port,
  TRITON_SERVER_URL: tritonUrl,
  ...webEnv,
});
if (await waitReady(`http://127.0.0.1:${port}/api/health`, 120_000)) {
  console.log(`\nGourmetGram is running: http://localhost:${port}  (inference server: ${tritonUrl})`);
  console.log('Press Ctrl+C to stop.');
} else {
  console.error(`npm start: the web app did not answer /api/health on port ${port} within 120 s`);
}
