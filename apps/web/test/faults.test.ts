/**
 * The gateway when the inference server misbehaves: the real server runs as a child process (the
 * built CLI on models_staging/) so it can be killed, frozen (SIGSTOP), slowed (stopped briefly) and
 * restarted on the same ports. Each case asserts the gateway's status, stable code and how fast it
 * answers or recovers, over HTTP and over gRPC (TRITON_PROTOCOL=grpc, the server's gRPC port).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GET as health } from '../src/app/api/health/route';
import { POST } from '../src/app/api/predict/route';
import type { ApiError } from '../src/lib/types';
import { json, MODELS, photo, PROTOCOLS, PYTHON, ROOT, uploadRequest, useEnv } from './helpers';

const CLI = join(ROOT, 'packages/server/dist/cli.js');
const DEADLINE_MS = 1500;

let port = 0;
let grpcPort = 0;
let server: ChildProcess | undefined;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Starts the inference server on `port`; resolves when it is ready. */
async function startServer(): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      CLI,
      `--model-repository=${MODELS}`,
      `--http-port=${port}`,
      `--grpc-port=${grpcPort}`,
      '--http-address=127.0.0.1',
      '--grpc-address=127.0.0.1',
      '--allow-metrics=false',
      // food_classifier's model.py needs numpy and Pillow: Debian's python3 has both.
      `--backend-config=python,python-interpreter=${PYTHON}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`inference server exited (${child.exitCode}):\n${err}`);
    const ready = await fetch(`http://127.0.0.1:${port}/v2/health/ready`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`inference server not ready:\n${err}`);
}

function stop(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGCONT');
    child.kill(signal);
  });
}

async function predict(signal?: AbortSignal): Promise<{ status: number; code?: string; ms: number }> {
  const started = performance.now();
  const res = await POST(uploadRequest(photo('P005'), signal ? { signal } : {}));
  const ms = performance.now() - started;
  if (res.status === 200) return { status: 200, ms };
  return { status: res.status, code: (await json<ApiError>(res)).error.code, ms };
}

beforeAll(async () => {
  port = await freePort();
  grpcPort = await freePort();
  server = await startServer();
}, 90_000);

afterEach(async () => {
  // Every case leaves a healthy server behind for the next one.
  if (server?.exitCode !== null || server.signalCode !== null) server = await startServer();
  else server.kill('SIGCONT');
}, 90_000);

afterAll(async () => {
  await stop(server);
});

describe.each(PROTOCOLS)('inference server faults over %s', (protocol) => {
  beforeAll(async () => {
    useEnv({
      TRITON_PROTOCOL: protocol,
      TRITON_SERVER_URL: `127.0.0.1:${protocol === 'http' ? port : grpcPort}`,
      TRITON_GRPC_URL: undefined,
      FOOD11_MODEL_NAME: 'food_classifier_onnx',
      INFERENCE_TIMEOUT_MS: String(DEADLINE_MS),
      FEEDBACK_STORAGE: 'none',
      GATEWAY_LOG: 'false',
    });
    expect((await predict()).status).toBe(200);
  }, 90_000);

  it('killed: 503 INFERENCE_UNAVAILABLE at once, health says so; predictions recover after a restart', async () => {
    await stop(server);
    const down = await predict();
    expect(down).toMatchObject({ status: 503, code: 'INFERENCE_UNAVAILABLE' });
    expect(down.ms).toBeLessThan(1000);
    expect((await health()).status).toBe(503);

    const restarted = performance.now();
    server = await startServer();
    let up = await predict();
    while (up.status !== 200 && performance.now() - restarted < 30_000) up = await predict();
    expect(up.status).toBe(200);
    // Once the server is ready again, the gateway needs no more than one more request to recover.
    expect((await predict()).status).toBe(200);
    expect((await health()).status).toBe(200);
  }, 90_000);

  it('frozen: 504 INFERENCE_TIMEOUT at the deadline (not before, not much after); recovers when it thaws', async () => {
    server?.kill('SIGSTOP');
    const frozen = await predict();
    server?.kill('SIGCONT');
    expect(frozen).toMatchObject({ status: 504, code: 'INFERENCE_TIMEOUT' });
    expect(frozen.ms).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(frozen.ms).toBeLessThan(DEADLINE_MS + 1500);
    const thawed = performance.now();
    let up = await predict();
    while (up.status !== 200 && performance.now() - thawed < 10_000) up = await predict();
    expect(up.status).toBe(200);
  }, 60_000);

  it('slow (stalled for less than the deadline): the prediction still succeeds, late', async () => {
    server?.kill('SIGSTOP');
    const pending = predict();
    await new Promise((r) => setTimeout(r, 400));
    server?.kill('SIGCONT');
    const slow = await pending;
    expect(slow.status).toBe(200);
    expect(slow.ms).toBeGreaterThanOrEqual(350);
  }, 60_000);

  it('killed while requests are in flight: each gets a clear 5xx code, none hangs', async () => {
    server?.kill('SIGSTOP');
    const inFlight = Array.from({ length: 4 }, () => predict());
    await new Promise((r) => setTimeout(r, 200));
    await stop(server);
    const answers = await Promise.all(inFlight);
    for (const a of answers) {
      expect([502, 503, 504]).toContain(a.status);
      expect(['INFERENCE_UNAVAILABLE', 'INFERENCE_TIMEOUT', 'INFERENCE_FAILED']).toContain(a.code);
      expect(a.ms).toBeLessThan(DEADLINE_MS + 1500);
    }
  }, 60_000);

  it('the caller goes away while the server is stalled: 499 CLIENT_CLOSED_REQUEST at once, not at the deadline', async () => {
    server?.kill('SIGSTOP');
    const ac = new AbortController();
    const pending = predict(ac.signal);
    await new Promise((r) => setTimeout(r, 200));
    ac.abort();
    const aborted = performance.now();
    const res = await pending;
    const afterAbort = performance.now() - aborted;
    server?.kill('SIGCONT');
    expect(res).toMatchObject({ status: 499, code: 'CLIENT_CLOSED_REQUEST' });
    expect(afterAbort).toBeLessThan(300);
    expect(res.ms).toBeLessThan(DEADLINE_MS);
    // The server, thawed, still serves the next prediction.
    expect((await predict()).status).toBe(200);
  }, 60_000);
});
