#!/usr/bin/env node
// The `tritonserver-ts` command. It runs the compiled CLI (dist/cli.js). In a source checkout where
// the package has not been built yet (right after `npm ci`), it builds it first, once, with the
// monorepo's own build (turbo builds the workspace packages the server depends on).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(fileURLToPath(cli))) {
  const root = fileURLToPath(new URL('../../../', import.meta.url));
  const turbo = fileURLToPath(new URL('../../../node_modules/turbo/bin/turbo', import.meta.url));
  if (!existsSync(turbo)) {
    process.stderr.write(
      `tritonserver-ts: ${fileURLToPath(cli)} is missing and this is not a source checkout to build it in\n`,
    );
    process.exit(1);
  }
  process.stderr.write('tritonserver-ts: first run in this checkout, building the server (once)…\n');
  const built = spawnSync(
    process.execPath,
    [turbo, 'run', 'build', '--filter=@tritonserver-ts/server...', '--output-logs=errors-only'],
    {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: {
        ...process.env,
        TURBO_TELEMETRY_DISABLED: '1',
        TURBO_NO_UPDATE_NOTIFIER: '1',
        DO_NOT_TRACK: '1',
      },
    },
  );
  if (built.status !== 0 || !existsSync(fileURLToPath(cli))) {
    process.stderr.write(
      'tritonserver-ts: the build failed; run `npm run build` at the repository root to see why\n',
    );
    process.exit(1);
  }
}
await import(cli.href);
