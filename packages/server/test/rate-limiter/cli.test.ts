/**
 * `--rate-limit` and `--rate-limit-resource`: parsing as tritonserver's command-line parser does
 * (its messages), and the CLI process (from source, under tsx) exiting 1 on a bad value and on a
 * startup model whose instance needs more than the flags give.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { CliUsageError, parseArgs } from '../../src/cli-args.js';
import { parseRateLimitResource } from '../../src/cli-rate-limit.js';
import { delayedRateLimitedModel, writePythonModels } from '../../src/testing/index.js';

const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

function parse(...flags: string[]) {
  return parseArgs(['--model-repository=/models', ...flags]);
}

function usageError(...flags: string[]): string {
  try {
    parse(...flags);
  } catch (error) {
    expect(error).toBeInstanceOf(CliUsageError);
    return (error as Error).message;
  }
  throw new Error('no error');
}

describe('--rate-limit and --rate-limit-resource', () => {
  it('defaults to off, which hands the server no limiter (and warns about resources given anyway)', () => {
    const off = parse();
    expect(off.server.rateLimit).toBeUndefined();
    expect(off.warnings).toEqual([]);
    const ignored = parse('--rate-limit=off', '--rate-limit-resource=R:2');
    expect(ignored.server.rateLimit).toBeUndefined();
    expect(ignored.warnings).toContain('--rate-limit-resource has no effect with --rate-limit=off');
  });

  it('passes execution_count (any case) and every resource, device -1 when none is given', () => {
    const on = parse(
      '--rate-limit=EXECUTION_COUNT',
      '--rate-limit-resource=R1:10',
      '--rate-limit-resource=R2:5:0',
      '--rate-limit-resource',
      'R2:8:1',
    );
    expect(on.server.rateLimit).toBe('execution_count');
    expect(on.server.rateLimitResources).toEqual([
      { name: 'R1', count: 10, device: -1 },
      { name: 'R2', count: 5, device: 0 },
      { name: 'R2', count: 8, device: 1 },
    ]);
  });

  it('reads counts as std::stoi does (blanks and a sign before, anything after the digits ignored)', () => {
    expect(parseRateLimitResource('R: +3x')).toEqual({ name: 'R', count: 3, device: -1 });
    expect(parseRateLimitResource('R:3:2abc')).toEqual({ name: 'R', count: 3, device: 2 });
    expect(parseRateLimitResource('R:0')).toEqual({ name: 'R', count: 0, device: -1 });
  });

  it('refuses bad values with tritonserver’s messages', () => {
    expect(usageError('--rate-limit=on')).toBe(
      'Bad option: "--rate-limit".\ninvalid argument for --rate-limit',
    );
    const format = (arg: string): string =>
      `Bad option: "--rate-limit-resource".\n--rate-limit-resource option format is '<resource_name>:<count>:<device>' or '<resource_name>:<count>'. Got ${arg}`;
    expect(usageError('--rate-limit-resource=R')).toBe(format('R'));
    expect(usageError('--rate-limit-resource=R:1:0:2')).toBe(format('R:1:0:2'));
    expect(usageError('--rate-limit-resource=R:many')).toBe(
      'Bad option: "--rate-limit-resource".\nInvalid option value. Got many',
    );
    expect(usageError('--rate-limit-resource=R:1:')).toBe(
      'Bad option: "--rate-limit-resource".\nInvalid option value. Got ',
    );
    expect(usageError('--rate-limit-resource=R:99999999999')).toBe(
      'Bad option: "--rate-limit-resource".\nProvided option value is out of bound. Got 99999999999',
    );
    // tritonserver turns a negative count into 2^64 - 1; refused here.
    expect(usageError('--rate-limit-resource=R:-1')).toBe(
      'Bad option: "--rate-limit-resource".\nresource count must not be negative (tritonserver-ts). Got R:-1',
    );
  });
});

describe('the CLI process', () => {
  function run(args: string[]): { status: number | null; stderr: string } {
    const r = spawnSync(process.execPath, ['--import', 'tsx', cli, ...args], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { status: r.status, stderr: r.stderr };
  }

  it('exits 1 on a malformed --rate-limit-resource', () => {
    const r = run([
      '--model-repository=/nonexistent',
      '--rate-limit=execution_count',
      '--rate-limit-resource=R',
    ]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `Bad option: "--rate-limit-resource".\n--rate-limit-resource option format is '<resource_name>:<count>:<device>' or '<resource_name>:<count>'. Got R\n`,
    );
  });

  it('exits 1 when a startup model needs more of a resource than the flags give', async () => {
    const repository = await mkdtemp(join(tmpdir(), 'tritonserver-ts-rl-'));
    try {
      await writePythonModels(repository, [
        delayedRateLimitedModel({ name: 'needs4', resources: [{ name: 'resource1', count: 4 }] }),
      ]);
      const r = run([
        `--model-repository=${repository}`,
        '--http-port=0',
        '--grpc-port=0',
        '--allow-metrics=false',
        '--rate-limit=execution_count',
        '--rate-limit-resource=resource1:3',
      ]);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(
        'Resource count for "resource1" is limited to 3 which will prevent scheduling of one or more model instances, the minimum required count is 4',
      );
    } finally {
      await rm(repository, { recursive: true, force: true });
    }
  });
});
