/**
 * The `model-analyzer-ts` bin end to end: the real bin (node bin/model-analyzer-ts.js, which runs
 * dist/cli/tune-cli.js: build it first with `npx tsc -p packages/perf/tsconfig.build.json`) against
 * the embedded server in this process. Exit codes 0/1/2, gRPC, the output files, Ctrl+C restoring
 * the model's configuration. Timing: short windows (-p 300, -s 100); run under `flock /tmp/bench.lock`.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { TritonClient } from '@tritonserver-ts/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { settingsOf } from '../src/tune/search-space.js';
import { startEmbedded, type Embedded } from './helpers/embedded.js';

const BIN = fileURLToPath(new URL('../bin/model-analyzer-ts.js', import.meta.url));

let embedded: Embedded;
let client: TritonClient;
let out: string;

beforeAll(async () => {
  embedded = await startEmbedded({
    identity: [{ name: 'tune_cli', delayMs: 10, maxBatchSize: 4, dims: [4] }],
  });
  client = new TritonClient({ url: embedded.url });
  out = await mkdtemp(join(tmpdir(), 'tune-cli-'));
});

afterAll(async () => {
  await client?.close();
  await embedded?.close();
  if (out !== undefined) await rm(out, { recursive: true, force: true });
});

interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function modelAnalyzer(
  args: readonly string[],
  onStderr?: (text: string, pid: number) => void,
): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (child.pid !== undefined) onStderr?.(stderr, child.pid);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const QUICK = ['-p', '300', '-s', '100', '--shape', 'INPUT0:4'];

describe('model-analyzer-ts bin', () => {
  it('prints help (0) and refuses a bad command line (2)', async () => {
    const help = await modelAnalyzer(['profile', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: model-analyzer-ts profile -m <model>/);
    const bad = await modelAnalyzer(['profile', '--bogus']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      "model-analyzer-ts: unrecognized option '--bogus'\nRun 'model-analyzer-ts --help' for the list of options.\n",
    );
  });

  it('profiles over gRPC and writes report.html, results.csv, best/config.pbtxt (0)', async () => {
    const dir = join(out, 'grpc');
    const r = await modelAnalyzer([
      'profile',
      '-m',
      'tune_cli',
      '-i',
      'grpc',
      '-u',
      embedded.grpcUrl,
      '--instance-counts',
      '1,2',
      '--max-batch-sizes',
      '4',
      '--dynamic-batching',
      'on',
      '--concurrency',
      '4',
      '-q',
      '--output-dir',
      dir,
      ...QUICK,
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Model Config Path\s+Instance Group/);
    expect(r.stdout).toMatch(/delivers maximum throughput under the given constraints \(none\)/);
    expect(await readFile(join(dir, 'results.csv'), 'utf8')).toMatch(/^Model,Batch,Concurrency,/);
    expect(await readFile(join(dir, 'best', 'config.pbtxt'), 'utf8')).toMatch(/^name: "tune_cli"\n/);
    expect((await stat(join(dir, 'report.html'))).size).toBeGreaterThan(1000);
  });

  it('exits 1 when no configuration meets the constraints, or the server is unreachable', async () => {
    const none = await modelAnalyzer([
      '-m',
      'tune_cli',
      '-u',
      embedded.url,
      '--run-config-search-disable',
      '--concurrency',
      '1',
      '--latency-budget',
      '1',
      '-q',
      '--output-dir',
      join(out, 'none'),
      ...QUICK,
    ]);
    expect(none.code).toBe(1);
    expect(none.stdout).toMatch(/no configuration satisfies the constraints \(p99 latency <= 1 ms\)/);
    expect(none.stdout).toContain('Best config: not written (no configuration satisfies the constraints)');
    const down = await modelAnalyzer([
      '-m',
      'tune_cli',
      '-u',
      '127.0.0.1:9',
      '-q',
      '--output-dir',
      join(out, 'down'),
    ]);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^error: MODEL: cannot read the configuration of model 'tune_cli'/);
  });

  it('Ctrl+C: finishes the measurement, restores the configuration, reports what was measured (0)', async () => {
    const before = settingsOf(await client.getModelConfig('tune_cli'));
    let sent = false;
    const r = await modelAnalyzer(
      [
        '-m',
        'tune_cli',
        '-u',
        embedded.url,
        '--instance-counts',
        '1,2,3',
        '--max-batch-sizes',
        '4',
        '--dynamic-batching',
        'off',
        '--concurrency',
        '2',
        '--output-dir',
        join(out, 'sigint'),
        ...QUICK,
      ],
      (stderr, pid) => {
        // Interrupt while the second configuration (2 instances) is being measured.
        if (!sent && /2\/3 tune_cli_config_0: /.test(stderr)) {
          sent = true;
          process.kill(pid, 'SIGINT');
        }
      },
    );
    expect(sent).toBe(true);
    expect(r.stderr).toContain('Interrupt signal (2) received');
    expect(r.stderr).toContain("the model's own configuration is loaded again");
    expect(r.stderr).toContain('stopped early: the measurements so far are reported');
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('tune_cli_config_1');
    expect(settingsOf(await client.getModelConfig('tune_cli'))).toEqual(before);
  });
});
