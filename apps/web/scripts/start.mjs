#!/usr/bin/env node
// `npm start` in apps/web: the production server from the standalone build
// (.next/standalone/apps/web/server.js), with the static assets it needs copied next to it.
// Env: PORT (default 3000), HOSTNAME (default 0.0.0.0), and the app's own variables (see README).
//
// Stopping: SIGINT or SIGTERM is passed on to Next.js (which closes its server, and the gateway
// unregisters and removes its shared-memory regions), SIGHUP as SIGTERM (Next.js has no SIGHUP
// handler); so is the parent going away: the root `npm start` launcher, which holds an IPC channel
// to this process, or npm (this process gets a new parent). Signals less than a second apart are
// one (Ctrl+C reaches Next.js directly too); a second one later kills Next.js. Once Next.js has
// exited, shared-memory objects it left in /dev/shm (killed before its cleanup ran) are removed,
// and this process ends with the signal it was stopped by.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = fileURLToPath(new URL('..', import.meta.url));
const standalone = join(web, '.next/standalone/apps/web');
const server = join(standalone, 'server.js');
if (!existsSync(server)) {
  console.error(`missing ${server}: run \`npm run build -w @gourmetgram/web\` first`);
  process.exit(1);
}
// `next build` leaves static files and public/ outside the standalone folder.
cpSync(join(web, '.next/static'), join(standalone, '.next/static'), { recursive: true });
if (existsSync(join(web, 'public')))
  cpSync(join(web, 'public'), join(standalone, 'public'), { recursive: true });

const port = process.env.PORT ?? '3000';
const hostname = process.env.HOSTNAME_BIND ?? '0.0.0.0';
const child = spawn(process.execPath, [server], {
  cwd: standalone,
  stdio: 'inherit',
  env: { NODE_ENV: 'production', ...process.env, PORT: port, HOSTNAME: hostname },
});
console.log(
  `GourmetGram web app: http://localhost:${port} (inference server: ${process.env.TRITON_SERVER_URL ?? 'localhost:8000'})`,
);

/** The gateway's shared-memory objects of process `pid` (names as in src/server/shm-names.ts). */
function removeShmOf(pid) {
  const name = new RegExp(`^gourmetgram_web_[A-Za-z0-9-]+_${pid}_[0-9a-f]{8}_`);
  try {
    for (const file of readdirSync('/dev/shm'))
      if (name.test(file)) rmSync(join('/dev/shm', file), { force: true });
  } catch {
    // No /dev/shm: nothing was created.
  }
}

let stopSignal;
let lastStopAt = -Infinity;
function requestStop(signal) {
  const now = performance.now();
  if (now - lastStopAt < 1000) return;
  lastStopAt = now;
  if (stopSignal !== undefined) {
    child.kill('SIGKILL');
    return;
  }
  stopSignal = signal;
  child.kill(signal === 'SIGHUP' ? 'SIGTERM' : signal);
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => requestStop(signal));
if (process.channel !== undefined) {
  process.channel.unref();
  process.once('disconnect', () => requestStop('SIGHUP'));
}
if (process.env.npm_lifecycle_event !== undefined) {
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    requestStop('SIGHUP');
  }, 250);
  watch.unref();
}

child.on('exit', (code, signal) => {
  if (child.pid !== undefined) removeShmOf(child.pid);
  if (stopSignal === undefined) process.exit(code ?? (signal === null ? 0 : 1));
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.removeAllListeners(s);
  process.kill(process.pid, stopSignal);
});
