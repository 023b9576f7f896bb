#!/usr/bin/env node
// `npm start`: build what is missing, then run the embedded Triton-compatible server on models_staging/.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const env = {
  ...process.env,
  TURBO_TELEMETRY_DISABLED: '1',
  TURBO_NO_UPDATE_NOTIFIER: '1',
  DO_NOT_TRACK: '1',
};

const build = spawnSync('npx', ['turbo', 'run', 'build'], { cwd: root, stdio: 'inherit', env });
if (build.status !== 0) process.exit(build.status ?? 1);
const model = spawnSync('npm', ['run', 'model:ensure', '-w', '@gourmetgram/food-model'], {
  cwd: root,
  stdio: 'inherit',
  env,
});
if (model.status !== 0) process.exit(model.status ?? 1);

const cli = join(root, 'packages/server/dist/cli.js');
if (!existsSync(cli)) {
  console.error(`missing ${cli}: the server build did not produce its CLI`);
  process.exit(1);
}
const server = spawn(process.execPath, [cli, `--model-repository=${join(root, 'models_staging')}`], {
  cwd: root,
  stdio: 'inherit',
  env,
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => server.kill(sig));
server.on('exit', (code) => process.exit(code ?? 0));
