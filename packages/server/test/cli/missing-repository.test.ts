/**
 * Issue 26: the CLI process (from source, under tsx) started with a model repository path that does
 * not exist, alone or beside a good one. With `--exit-on-error=false` it logs the failure and serves
 * on HTTP and gRPC: live, but not ready (Triton 2.73, `test_parse_error_noexit` in qa/L0_lifecycle,
 * run with `--strict-readiness=true`; a server that failed to initialize is not ready under either
 * setting). With `--exit-on-error=true` (the default) it exits 1 with the reason.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { GrpcTestClient } from '../grpc/helpers.js';
import { makeRepository } from '../helpers/server.js';

const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
const missing = join(tmpdir(), `tritonserver-ts-missing-${process.pid}`);
let good: string;

beforeAll(async () => {
  good = await makeRepository(['identity_fp32']);
});
afterAll(async () => {
  await rm(good, { recursive: true, force: true });
});

interface Cli {
  readonly child: ChildProcess;
  readonly url: string;
  readonly grpc: string;
  readonly stderr: () => string;
}

/** Starts the CLI on free ports; resolves once both front ends are serving. */
function startCli(args: readonly string[]): Promise<Cli> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      cli,
      '--http-port=0',
      '--grpc-port=0',
      '--allow-metrics=false',
      '--http-address=127.0.0.1',
      '--grpc-address=127.0.0.1',
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`CLI did not start:\n${err}`)), 30_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      const http = /Started HTTPService at [^:\s]+:(\d+)/.exec(err);
      const grpc = /Started GRPCInferenceService at [^:\s]+:(\d+)/.exec(err);
      if (http !== null && grpc !== null) {
        clearTimeout(timer);
        resolve({
          child,
          url: `http://127.0.0.1:${http[1]}`,
          grpc: `127.0.0.1:${grpc[1]}`,
          stderr: () => err,
        });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`CLI exited with ${code}:\n${err}`));
    });
  });
}

async function stop(c: Cli): Promise<void> {
  const exited = new Promise((resolve) => c.child.once('exit', resolve));
  c.child.kill('SIGTERM');
  await exited;
}

/** Live and ready on both wires. */
async function health(c: Cli): Promise<{ http: [number, number]; grpc: [boolean, boolean] }> {
  const live = (await fetch(`${c.url}/v2/health/live`)).status;
  const ready = (await fetch(`${c.url}/v2/health/ready`)).status;
  const client = new GrpcTestClient(c.grpc);
  try {
    const grpcLive = (await client.call<{ live: boolean }>('ServerLive', {})).live;
    const grpcReady = (await client.call<{ ready: boolean }>('ServerReady', {})).ready;
    return { http: [live, ready], grpc: [grpcLive, grpcReady] };
  } finally {
    client.close();
  }
}

describe('a model repository path that does not exist', () => {
  it.each([
    ['alone', () => [`--model-repository=${missing}`]],
    ['beside a good one', () => [`--model-repository=${good}`, `--model-repository=${missing}`]],
  ])(
    '%s, --exit-on-error=false --strict-readiness=true: logged, live, not ready, on HTTP and gRPC',
    async (_, repositories) => {
      const c = await startCli([...repositories(), '--exit-on-error=false', '--strict-readiness=true']);
      try {
        expect(c.stderr()).toContain(`failed to read model repository '${missing}'`);
        expect(await health(c)).toEqual({ http: [200, 400], grpc: [true, false] });
        // The server metadata is served too.
        expect(((await (await fetch(`${c.url}/v2`)).json()) as { name: string }).name).toBe('triton');
      } finally {
        await stop(c);
      }
    },
    40_000,
  );

  it('with --strict-readiness=false it is live and still not ready (it failed to initialize)', async () => {
    const c = await startCli([
      `--model-repository=${missing}`,
      '--exit-on-error=false',
      '--strict-readiness=false',
    ]);
    try {
      expect(await health(c)).toEqual({ http: [200, 400], grpc: [true, false] });
    } finally {
      await stop(c);
    }
  }, 40_000);

  it('with --exit-on-error=true (the default) the CLI exits 1 with the reason', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', cli, `--model-repository=${missing}`], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `error: creating server: Internal - failed to read model repository '${missing}'`,
    );
  });
});
