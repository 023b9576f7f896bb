import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeRepository } from '../helpers/server.js';

const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
let repository: string;
let broken: string;

beforeAll(async () => {
  if (!existsSync(cli)) throw new Error(`build the package first (${cli} is missing)`);
  repository = await makeRepository(['slow_identity', 'identity_fp32', 'tensorrt_model']);
  broken = await makeRepository(['identity_fp32', 'broken_config']);
});

afterAll(async () => {
  await rm(repository, { recursive: true, force: true });
  await rm(broken, { recursive: true, force: true });
});

/** Starts the CLI and resolves with its HTTP base URL once it logs that it is serving. */
function startCli(args: string[]): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`CLI did not start:\n${err}`)), 20_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      const m = /Started HTTPService at [^:\s]+:(\d+)/.exec(err);
      if (m !== null) {
        clearTimeout(timer);
        resolve({ child, url: `http://127.0.0.1:${m[1]}`, stderr: () => err });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`CLI exited with ${code}:\n${err}`));
    });
  });
}

function exitCode(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

const body = JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, 1], datatype: 'FP32', data: [7] }] });

describe('tritonserver-ts CLI', () => {
  it('prints help and exits 0', () => {
    const r = spawnSync(process.execPath, [cli, '--help'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('--model-repository');
  });

  it('exits 1 with a clear message on an unknown flag', () => {
    const r = spawnSync(process.execPath, [cli, '--model-repository=/x', '--frobnicate=1'], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("unrecognized option '--frobnicate'");
  });

  it('exits 1 naming the variable when TRITONSERVER_TS_HEAP_GROWING_PERCENT is not a percent', () => {
    const r = spawnSync(process.execPath, [cli, `--model-repository=${repository}`, '--http-port=0'], {
      encoding: 'utf8',
      env: { ...process.env, TRITONSERVER_TS_HEAP_GROWING_PERCENT: '-5' },
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      "tritonserver-ts: TRITONSERVER_TS_HEAP_GROWING_PERCENT must be an integer from 0 to 1000, got '-5'",
    );
    expect(r.stderr).not.toContain('Started HTTPService');
  });

  it('exits 1 when a model fails to load and --exit-on-error is true', () => {
    const r = spawnSync(
      process.execPath,
      [cli, `--model-repository=${broken}`, '--http-port=0', '--allow-metrics=false'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('failed to load all models');
  });

  it('serves with an unsupported-backend model listed UNAVAILABLE, then on SIGTERM drains in-flight requests and exits 0', async () => {
    // Defaults: --exit-on-error=true and --strict-readiness=true. A tensorrt model is a capability gap
    // of this server, not a load error: it is listed UNAVAILABLE and the server is ready.
    const { child, url, stderr } = await startCli([
      `--model-repository=${repository}`,
      '--http-port=0',
      '--grpc-port=0',
      '--http-address=127.0.0.1',
      '--metrics-port=0',
    ]);
    const exited = exitCode(child);
    expect((await fetch(`${url}/v2/health/ready`)).status).toBe(200);
    expect(stderr()).toMatch(/tensorrt_model.*UNAVAILABLE.*backend 'tensorrt' is not supported/);
    // slow_identity has one instance and 50 ms per execution: three requests keep it busy ~150 ms.
    const inflight = [1, 2, 3].map(() =>
      fetch(`${url}/v2/models/slow_identity/infer`, { method: 'POST', body }).then(async (r) => ({
        status: r.status,
        json: (await r.json()) as { outputs: { data: number[] }[] },
      })),
    );
    await new Promise((r) => setTimeout(r, 30));
    child.kill('SIGTERM');
    const results = await Promise.all(inflight);
    for (const r of results) {
      expect(r.status).toBe(200);
      expect(r.json.outputs[0]?.data).toEqual([7]);
    }
    expect(await exited).toBe(0);
    await expect(fetch(`${url}/v2/health/live`)).rejects.toThrow();
  });
});
