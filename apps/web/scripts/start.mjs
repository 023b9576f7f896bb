#!/usr/bin/env node
// `npm start` in apps/web: the production server from the standalone build
// (.next/standalone/apps/web/server.js), with the static assets it needs copied next to it.
// Env: PORT (default 3000), HOSTNAME (default 0.0.0.0), and the app's own variables (see README).
import { spawn } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
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
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code) => process.exit(code ?? 0));
