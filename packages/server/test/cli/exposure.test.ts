/**
 * The CLI's startup warning for a model-repository API open to the network (the load API runs
 * arbitrary Python by design): the real CLI process, its stderr read up to tritonserver's banner.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { isLoopbackAddress } from '../../src/repository-exposure.js';
import { makeRepository } from '../helpers/server.js';

const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
let repository: string;

beforeAll(async () => {
  if (!existsSync(cli)) throw new Error(`build the package first (${cli} is missing)`);
  repository = await makeRepository(['identity_fp32']);
});

afterAll(async () => {
  await rm(repository, { recursive: true, force: true });
});

/** Runs the CLI until it has started both services, then stops it; resolves with its stderr. */
function startupLog(args: readonly string[]): Promise<string> {
  const child = spawn(
    process.execPath,
    [
      cli,
      `--model-repository=${repository}`,
      '--http-port=0',
      '--grpc-port=0',
      '--allow-metrics=false',
      ...args,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`CLI did not start:\n${err}`));
    }, 20_000);
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      if (/Started HTTPService at /.test(err)) {
        clearTimeout(timer);
        child.once('exit', () => resolve(err));
        child.kill('SIGTERM');
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (!/Started HTTPService at /.test(err)) reject(new Error(`CLI exited with ${code}:\n${err}`));
    });
  });
}

const warningLines = (log: string): string[] =>
  log.split('\n').filter((l) => l.includes('model repository API'));

describe('startup warning: model repository API reachable beyond loopback', () => {
  it('warns for each service on 0.0.0.0 in explicit mode without restrictions', async () => {
    const log = await startupLog(['--model-control-mode=explicit']);
    const lines = warningLines(log);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^W.*The model repository API of the HTTP service at 0\.0\.0\.0:\d+ is reachable beyond loopback and is not restricted: .*'file:1\/model\.py'.* \(--http-address=127\.0\.0\.1\) or restrict it \(--http-restricted-api=model-repository:<key>=<secret>\)\.$/,
    );
    expect(lines[1]).toMatch(
      /^W.*The model repository API of the GRPC service at 0\.0\.0\.0:\d+ .*\(--grpc-restricted-protocol=model-repository:<key>=<secret>\)\.$/,
    );
  });

  it('warns only for the service whose API stays open', async () => {
    const log = await startupLog([
      '--model-control-mode=explicit',
      '--http-restricted-api=model-repository,inference:admin-key=secret',
    ]);
    const lines = warningLines(log);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('GRPC service at 0.0.0.0:');
  });

  it.each([
    [
      'both restricted',
      ['--http-restricted-api=model-repository:k=v', '--grpc-restricted-protocol=model-repository:k=v'],
    ],
    ['both on loopback', ['--http-address=127.0.0.1', '--grpc-address=::1']],
  ])('does not warn when %s', async (_, extra) => {
    const log = await startupLog(['--model-control-mode=explicit', ...extra]);
    expect(log).toContain('Started GRPCInferenceService at');
    expect(warningLines(log)).toEqual([]);
  });

  it('does not warn outside explicit mode (the load API loads nothing there)', async () => {
    const log = await startupLog([]);
    expect(warningLines(log)).toEqual([]);
  });
});

describe('isLoopbackAddress', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['0:0:0:0:0:0:0:1', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.5', false],
    ['::ffff:10.0.0.1', false],
    ['example.com', false],
  ])('%s → %s', (address, expected) => {
    expect(isLoopbackAddress(address)).toBe(expected);
  });
});
