// Shared by the package's bins: builds the package in a source checkout when dist/ is missing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Returns `cli` after making sure it exists: in a source checkout right after `npm ci` it runs the
 * monorepo build for this package (once); elsewhere a missing file is an installation error.
 * @param {string} command the bin's name, for messages
 * @param {URL} cli the compiled entry point
 * @returns {URL}
 */
export function ensureBuilt(command, cli) {
  if (existsSync(fileURLToPath(cli))) return cli;
  const root = fileURLToPath(new URL('../../../', import.meta.url));
  const turbo = fileURLToPath(new URL('../../../node_modules/turbo/bin/turbo', import.meta.url));
  if (!existsSync(turbo)) {
    process.stderr.write(
      `${command}: ${fileURLToPath(cli)} is missing and this is not a source checkout to build it in\n`,
    );
    process.exit(1);
  }
  process.stderr.write(`${command}: first run in this checkout, building the package (once)…\n`);
  const built = spawnSync(
    process.execPath,
    [turbo, 'run', 'build', '--filter=@tritonserver-ts/perf...', '--output-logs=errors-only'],
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
      `${command}: the build failed; run \`npm run build\` at the repository root to see why\n`,
    );
    process.exit(1);
  }
  return cli;
}
