/**
 * The CLI process (from source, under tsx) on bad `--http-restricted-api`, `--grpc-restricted-protocol`
 * and `--trace-config` values: tritonserver's `Bad option: "--<flag>".` line, its message, exit 1.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

function run(...args: string[]): { status: number | null; stderr: string } {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', cli, '--model-repository=/nonexistent', ...args],
    {
      encoding: 'utf8',
      timeout: 30_000,
    },
  );
  return { status: r.status, stderr: r.stderr };
}

describe('startup validation of the restriction and trace flags', () => {
  it.each([
    [
      '--http-restricted-api=model-repository',
      `Bad option: "--http-restricted-api".\n--http-restricted-api option format is '<config name>:<setting>=<value>'. Got model-repository\n`,
    ],
    [
      '--http-restricted-api=everything:k=v',
      `Bad option: "--http-restricted-api".\nunknown restricted api 'everything' \n`,
    ],
    [
      '--http-restricted-api=health,health:k=v',
      `Bad option: "--http-restricted-api".\nrestricted api 'health' can not be specified in multiple config groups\n`,
    ],
    [
      '--grpc-restricted-protocol=health',
      `Bad option: "--grpc-restricted-protocol".\n--grpc-restricted-protocol option format is '<config name>:<setting>=<value>'. Got health\n`,
    ],
    [
      '--grpc-restricted-protocol=everything:k=v',
      `Bad option: "--grpc-restricted-protocol".\nunknown restricted protocol 'everything' \n`,
    ],
    [
      '--trace-config=level=LOUD',
      `Bad option: "--trace-config level".\ninvalid value for trace level option: loud\n`,
    ],
  ])('%s exits 1 with tritonserver’s message', (flag, message) => {
    const r = run(flag);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(message);
  });
});
