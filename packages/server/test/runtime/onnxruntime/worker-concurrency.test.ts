/**
 * The core's default instances: onnxruntime instances in worker threads execute at the same time,
 * the HTTP front end keeps answering while they run, workers end on unload and shutdown, and a
 * worker that dies fails its execution with a clear error and is restarted.
 *
 * No wall-clock thresholds: the worker reports when each execution ran (`process.hrtime.bigint()`,
 * one monotonic clock for every thread), and the assertions compare those instants with each other
 * and with when the test's own liveness round trips were sent and answered.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { OnnxGraphBuilder } from '@tritonserver-ts/onnx-builder';

import { startServer, type RunningServer } from '../../../src/index.js';
import type { RuntimeModelInstance } from '../../../src/runtime/backends.js';
import { createWorkerInstances } from '../../../src/runtime/index.js';
import {
  WorkerModelInstance,
  type ExecutionSpan,
} from '../../../src/runtime/onnxruntime/worker-instances.js';
import { infer } from '../../helpers/server.js';

const WIDTH = 512;
const LAYERS = 32;
/** Rows per request: LAYERS × ROWS × WIDTH² multiply-adds (~8.6 G), hundreds of ms on one core. */
const ROWS = 1024;

/** Y = X·W·W·…·W (LAYERS times), W = 1/WIDTH everywhere: an all-ones X gives an all-ones Y. */
function buildHeavyOnnx(): Uint8Array {
  const g = new OnnxGraphBuilder({ name: 'heavy' });
  g.addInput('X', 'FLOAT', ['rows', WIDTH]);
  g.addInitializer('W', {
    type: 'FLOAT',
    dims: [WIDTH, WIDTH],
    data: new Float32Array(WIDTH * WIDTH).fill(1 / WIDTH),
  });
  let previous = 'X';
  for (let i = 0; i < LAYERS; i++) {
    const next = i === LAYERS - 1 ? 'Y' : `H${i}`;
    g.addNode('MatMul', [previous, 'W'], [next]);
    previous = next;
  }
  g.addOutput('Y', 'FLOAT', ['rows', WIDTH]);
  return g.toBytes();
}

const CONFIG = `name: "heavy"
backend: "onnxruntime"
max_batch_size: 0
input [ { name: "X" data_type: TYPE_FP32 dims: [ -1, ${WIDTH} ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ -1, ${WIDTH} ] } ]
instance_group [ { count: 2 kind: KIND_CPU } ]
`;

let repository: string;
let server: RunningServer;
const created: RuntimeModelInstance[] = [];

const heavyInput = [
  {
    name: 'X',
    datatype: 'FP32' as const,
    shape: [ROWS, WIDTH],
    data: new Float32Array(ROWS * WIDTH).fill(1),
  },
];

beforeAll(async () => {
  repository = await mkdtemp(path.join(os.tmpdir(), 'worker-concurrency-'));
  await mkdir(path.join(repository, 'heavy', '1'), { recursive: true });
  await writeFile(path.join(repository, 'heavy', '1', 'model.onnx'), buildHeavyOnnx());
  await writeFile(path.join(repository, 'heavy', 'config.pbtxt'), CONFIG);
  server = await startServer({
    modelRepositories: [repository],
    httpPort: 0,
    httpAddress: '127.0.0.1',
    modelControlMode: 'explicit',
    loadModels: ['heavy'],
    logSink: () => undefined,
    // The core's default factory, observed: the test needs the instances it created.
    services: {
      createInstances: async (...args) => {
        const instances = await createWorkerInstances(...args);
        created.push(...instances);
        return instances;
      },
    },
  });
}, 60_000);

afterAll(async () => {
  await server.close();
  await rm(repository, { recursive: true, force: true });
});

function loaded(): WorkerModelInstance[] {
  return created.filter((i): i is WorkerModelInstance => i instanceof WorkerModelInstance && i.running);
}

describe('onnxruntime instances in worker threads (the core default)', () => {
  it('runs two executions at the same time while /v2/health/live keeps answering', async () => {
    const instances = loaded();
    expect(instances).toHaveLength(2);
    let settled = 0;
    const requests = [infer(server.url, 'heavy', heavyInput), infer(server.url, 'heavy', heavyInput)].map(
      (p) => p.finally(() => (settled += 1)),
    );
    // Liveness round trips for as long as the executions run, each timed on the shared clock.
    const probes: { sentNs: bigint; answeredNs: bigint; status: number }[] = [];
    while (settled < 2) {
      const sentNs = process.hrtime.bigint();
      const res = await fetch(`${server.url}/v2/health/live`);
      await res.arrayBuffer();
      probes.push({ sentNs, answeredNs: process.hrtime.bigint(), status: res.status });
    }
    const results = await Promise.all(requests);
    for (const r of results) {
      expect(r.status).toBe(200);
      const y = r.decoded?.outputs.find((o) => o.name === 'Y');
      expect(y?.shape).toEqual([ROWS, WIDTH]);
      expect((y?.data as Float32Array)[0]).toBeCloseTo(1, 3);
    }

    // Each instance ran one of the two requests, and the two executions overlapped in time.
    const [a, b] = instances.map((i) => i.lastExecution) as [ExecutionSpan, ExecutionSpan];
    expect(a).toBeDefined();
    expect(b).toBeDefined();
    expect(a.startNs < b.endNs && b.startNs < a.endNs).toBe(true);

    // Some liveness request was both sent and answered while a model execution was running: with
    // sessions on the main thread, the event loop could not even accept it until the run ended.
    expect(probes.every((p) => p.status === 200)).toBe(true);
    const during = probes.filter((p) =>
      [a, b].some((span) => p.sentNs > span.startNs && p.answeredNs < span.endNs),
    );
    expect(during.length).toBeGreaterThan(0);
  }, 120_000);

  it('fails the executions a dying worker held with a clear error, then restarts the worker', async () => {
    const instances = loaded();
    expect(instances).toHaveLength(2);
    const small = {
      name: 'X',
      datatype: 'FP32' as const,
      shape: [1, WIDTH],
      data: new Float32Array(WIDTH).fill(1),
    };
    const [first] = instances as [WorkerModelInstance];
    const restartsBefore = first.restarts;
    // The worker dies (uncaught error) with an execution sent to it and not answered.
    first.crashWorkerForTesting();
    await expect(first.execute(new Map([['X', small]]))).rejects.toMatchObject({
      code: 'EXECUTION_FAILED',
      message: expect.stringMatching(
        /^the worker thread of model instance 'heavy_0_0' failed: crash requested by a test; the instance is being restarted$/,
      ) as unknown,
    });
    expect(first.restarts).toBe(restartsBefore + 1);
    // Executions sent while it restarts wait for the new worker, which executes again.
    const again = await first.execute(new Map([['X', small]]));
    expect((again.outputs.get('Y')?.data as Float32Array)[0]).toBeCloseTo(1, 3);
    expect(first.running).toBe(true);

    // Over HTTP: both workers are armed to die on their next execution, so whichever gets the
    // request dies with it pending; the client gets Triton's INTERNAL (500)
    // with that message, the server stays live, and the next requests are served again.
    for (const i of instances) i.crashWorkerForTesting();
    const failed = await infer(server.url, 'heavy', [small]);
    expect(failed.status).toBe(500);
    expect(failed.error).toMatch(/worker thread of model instance 'heavy_0_[01]' failed: .*being restarted/);
    expect((await fetch(`${server.url}/v2/health/live`)).status).toBe(200);
    // The instance that did not get the request is still armed (a restarted worker is not).
    for (const i of instances) i.crashWorkerForTesting(false);
    expect(instances.map((i) => i.restarts).reduce((a, b) => a + b)).toBe(restartsBefore + 2);
    for (let n = 0; n < 3; n++) expect((await infer(server.url, 'heavy', [small])).status).toBe(200);
  }, 120_000);

  it('terminates every worker thread when the model is unloaded', async () => {
    const instances = loaded();
    expect(instances.length).toBeGreaterThan(0);
    await server.server.unloadModel('heavy');
    expect(instances.every((i) => !i.running)).toBe(true);
  }, 60_000);
});

describe('process exit with worker instances', () => {
  it('exits on its own after shutdown, and even when the server is never shut down', async () => {
    const here = path.dirname(fileURLToPath(import.meta.url));
    const script = path.join(here, 'fixtures', 'exit-child.ts');
    const run = (mode: string): Promise<{ code: number | null; out: string }> =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', script, repository, mode], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        // A hang is the failure this test looks for: kill the child rather than wait forever.
        const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
        child.once('error', reject);
        child.once('exit', (code) => {
          clearTimeout(timer);
          resolve({ code, out });
        });
      });
    const [shutdown, forgotten] = await Promise.all([run('shutdown'), run('forget')]);
    expect(shutdown).toEqual({ code: 0, out: 'inferred 200\nshut down\n' });
    expect(forgotten).toEqual({ code: 0, out: 'inferred 200\n' });
  }, 120_000);
});
