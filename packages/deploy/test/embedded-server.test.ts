// The CPU-only deployment, run for real without Docker: the command docker-compose-cpu.yaml gives
// the embedded server (same relative path as inside the image), on the repository's models_staging/,
// then the compose and Dockerfile health checks executed as written, with only the port changed.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { commandOf, exposedPorts, last, parseDockerfile, type Stage } from '../src/dockerfile.js';
import { modelsDir, read, repoRoot } from '../src/repo.js';

interface Service {
  command: string[];
  healthcheck: { test: string[] };
  environment?: Record<string, string>;
}
const compose = parse(read('docker/docker-compose-cpu.yaml')) as { services: Record<string, Service> };
const server = compose.services.triton_server as Service;
const webModel = /:-([^}]+)\}/.exec(
  compose.services.gourmetgram_web?.environment?.FOOD11_MODEL_NAME ?? '',
)?.[1];
const serverImage = parseDockerfile(read('docker/Dockerfile.server')).stages.at(-1) as Stage;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Run a Docker CMD-style health check, with the server's ports moved to the test's ports. */
function runHealthcheck(test: string[], httpPort: number): number | null {
  const [form, ...command] = test[0] === 'CMD' || test[0] === 'CMD-SHELL' ? test : ['CMD', ...test];
  const argv = (form === 'CMD-SHELL' ? ['/bin/sh', '-c', command.join(' ')] : command).map((a) =>
    a.replaceAll(':8000/', `:${httpPort}/`),
  );
  const [program, ...args] = argv;
  const executable = program === 'node' ? process.execPath : (program ?? 'false');
  return spawnSync(executable, args, { stdio: 'ignore', timeout: 10_000 }).status;
}

let child: ChildProcess | undefined;
let httpPort = 0;
let metricsPort = 0;
let output = '';

beforeAll(async () => {
  const onnx = join(modelsDir, 'food_classifier_onnx', '1', 'model.onnx');
  if (!existsSync(onnx)) {
    throw new Error(
      `${onnx} is missing: run npm run model:ensure -w @gourmetgram/food-model (npm test does)`,
    );
  }
  httpPort = await freePort();
  metricsPort = await freePort();
  const [program, ...args] = server.command;
  expect(program).toBe('node');
  const argv = args.map((a) => (a === '--model-repository=/models' ? `--model-repository=${modelsDir}` : a));
  child = spawn(process.execPath, [...argv, `--http-port=${httpPort}`, `--metrics-port=${metricsPort}`], {
    cwd: repoRoot, // the image's WORKDIR /app holds the same packages/server/dist/cli.js
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}):\n${output}`);
    if (runHealthcheck(server.healthcheck.test, httpPort) === 0) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the compose health check never passed:\n${output}`);
}, 120_000);

afterAll(() => {
  child?.kill('SIGTERM');
});

describe('docker-compose-cpu.yaml against the real embedded server', () => {
  it("passes the compose health check (Triton's /v2/health/ready) with the web app's model ready", async () => {
    expect(runHealthcheck(server.healthcheck.test, httpPort)).toBe(0);
    const ready = await fetch(`http://127.0.0.1:${httpPort}/v2/models/${webModel}/ready`);
    expect(ready.status).toBe(200);
  });

  it('keeps running with the Python-backend model UNAVAILABLE and says why', async () => {
    const index = (await (
      await fetch(`http://127.0.0.1:${httpPort}/v2/repository/index`, { method: 'POST' })
    ).json()) as { name: string; state?: string; reason?: string }[];
    const python = index.find((m) => m.name === 'food_classifier');
    expect(python?.state).toBe('UNAVAILABLE');
    expect(python?.reason).toMatch(/python/);
    expect(index.find((m) => m.name === webModel)?.state).toBe('READY');
    // A backend that cannot run here does not hold back readiness (a broken model would).
    expect((await fetch(`http://127.0.0.1:${httpPort}/v2/health/ready`)).status).toBe(200);
  });

  it("passes the image's own HEALTHCHECK", () => {
    const check = commandOf(last(serverImage, 'HEALTHCHECK')?.args.replace(/^CMD\s+/, '') ?? '[]');
    expect(runHealthcheck(['CMD', ...check], httpPort)).toBe(0);
  });

  it("serves Prometheus metrics with the series the k8s HPA's adapter rule reads, on the image's metrics port", async () => {
    expect(exposedPorts(serverImage)).toContain(8002);
    const help = spawnSync(process.execPath, ['packages/server/dist/cli.js', '--help'], {
      cwd: repoRoot,
      encoding: 'utf8',
    });
    expect(help.stdout + help.stderr).toMatch(/--metrics-port=<port>\s+[^\n]*\(default: 8002\)/);
    expect(help.stdout + help.stderr).toMatch(/--http-port=<port>\s+[^\n]*\(default: 8000\)/);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toContain('nv_inference_queue_duration_us');
    expect(metrics).toContain('nv_inference_request_success');
  });
});
