/**
 * `npm run bench`: in one run,
 *  1. binary vs JSON encode+decode of one [1,3,224,224] FP32 request and its [1,11] FP32 response
 *     (client encode → server decode → server encode → client decode, all with the shared codec);
 *  2. client round trips per second against the embedded server (in a worker thread of this
 *     process, so client and server each have an event loop; 127.0.0.1, port 0) on the tiny
 *     `simple` model at concurrency 1 and 16.
 * The embedded server is imported from the workspace (`@tritonserver-ts/server`, built by turbo
 * before the bench); it is not a dependency of the client package.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import {
  TritonClient,
  decodeInferRequest,
  decodeInferResponse,
  encodeInferRequest,
  encodeInferResponse,
  outputWantsBinary,
  type DecodedInferRequest,
} from '../src/index.js';

/** Starts the embedded server in a worker thread (its own event loop) and returns its URL. */
async function startServerThread(only: string[]): Promise<{ url: string; close(): Promise<void> }> {
  const worker = new Worker(new URL('./server-worker.mjs', import.meta.url), { workerData: { only } });
  const url = await new Promise<string>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (m: { url: string }) => resolve(m.url));
  });
  return {
    url,
    close: async () => {
      const closed = new Promise<void>((resolve) => worker.once('message', () => resolve()));
      worker.postMessage('close');
      await closed;
      await worker.terminate();
    },
  };
}

/** Builds the embedded server (and what it depends on) when its dist is missing, e.g. on a fresh clone. */
function ensureServerBuilt(): void {
  const root = fileURLToPath(new URL('../../../', import.meta.url));
  if (existsSync(join(root, 'packages/server/dist/testing/index.js'))) return;
  console.log('building @tritonserver-ts/server for the round-trip benchmark…');
  const r = spawnSync(
    'npx',
    ['turbo', 'run', 'build', '--filter=@tritonserver-ts/server...', '--output-logs=errors-only'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
  if (r.status !== 0) throw new Error('building @tritonserver-ts/server failed');
}

const REQUEST_SHAPE = [1, 3, 224, 224];
const RESPONSE_SHAPE = [1, 11];

function timeIt(
  fn: () => void,
  minMs: number,
  minIterations: number,
): { medianMs: number; iterations: number } {
  for (let i = 0; i < 3; i++) fn(); // warm up
  const samples: number[] = [];
  const started = performance.now();
  while (samples.length < minIterations || performance.now() - started < minMs) {
    const t0 = performance.now();
    fn();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return { medianMs: samples[Math.floor(samples.length / 2)] as number, iterations: samples.length };
}

function codecRoundTrip(image: Float32Array, probs: Float32Array, binary: boolean): void {
  const req = encodeInferRequest(
    [{ name: 'image', datatype: 'FP32', shape: REQUEST_SHAPE, data: image, binaryData: binary }],
    {
      outputs: [{ name: 'probs', binaryData: binary }],
    },
  );
  const decodedReq = decodeInferRequest(req.body, req.headerLength) as DecodedInferRequest;
  if ((decodedReq.inputs[0]?.data as Float32Array).length !== image.length)
    throw new Error('bad request decode');
  const res = encodeInferResponse({
    modelName: 'food_classifier',
    modelVersion: '1',
    outputs: [
      {
        tensor: { name: 'probs', datatype: 'FP32', shape: RESPONSE_SHAPE, data: probs },
        binary: outputWantsBinary(decodedReq, 'probs'),
      },
    ],
  });
  const decodedRes = decodeInferResponse(res.body, res.headerLength);
  if ((decodedRes.outputs[0]?.data as Float32Array).length !== 11) throw new Error('bad response decode');
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function roundTrips(client: TritonClient, concurrency: number, durationMs: number) {
  const a = Int32Array.from({ length: 16 }, (_, i) => i);
  const inputs = [
    { name: 'INPUT0', datatype: 'INT32' as const, shape: [1, 16], data: a },
    { name: 'INPUT1', datatype: 'INT32' as const, shape: [1, 16], data: a },
  ];
  const run = async (ms: number) => {
    const latencies: number[] = [];
    const deadline = performance.now() + ms;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < deadline) {
          const t0 = performance.now();
          const r = await client.infer('simple', inputs);
          if (r.asTypedArray('OUTPUT0', 'INT32')[15] !== 30) throw new Error('wrong result');
          latencies.push(performance.now() - t0);
        }
      }),
    );
    return latencies;
  };
  await run(500); // warm up connections and the model
  const started = performance.now();
  const latencies = await run(durationMs);
  const elapsed = performance.now() - started;
  latencies.sort((x, y) => x - y);
  return {
    rps: latencies.length / (elapsed / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    n: latencies.length,
  };
}

async function main(): Promise<void> {
  const image = Float32Array.from({ length: 3 * 224 * 224 }, (_, i) => Math.sin(i) * 2.5);
  const probs = Float32Array.from({ length: 11 }, (_, i) => (i + 1) / 66);
  const binary = timeIt(() => codecRoundTrip(image, probs, true), 1500, 50);
  const json = timeIt(() => codecRoundTrip(image, probs, false), 3000, 10);
  const ratio = json.medianMs / binary.medianMs;

  const rows: string[] = [];
  ensureServerBuilt();
  const server = await startServerThread(['simple']);
  try {
    const client = new TritonClient({ url: server.url });
    for (const concurrency of [1, 16]) {
      const r = await roundTrips(client, concurrency, 3000);
      rows.push(
        `| round trips, simple INT32 [1,16], concurrency ${String(concurrency).padEnd(2)} | ${r.rps.toFixed(0)} req/s | p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms (${r.n} requests) |`,
      );
    }
    await client.close();
  } finally {
    await server.close();
  }

  console.log(`\n@tritonserver-ts/client benchmark (Node ${process.version}, ${new Date().toISOString()})\n`);
  console.log('| measurement | result | detail |');
  console.log('| --- | --- | --- |');
  console.log(
    `| codec, binary: [1,3,224,224] FP32 request + [1,11] response, encode+decode both ends | ${binary.medianMs.toFixed(3)} ms | median of ${binary.iterations} |`,
  );
  console.log(
    `| codec, JSON: same tensors | ${json.medianMs.toFixed(2)} ms | median of ${json.iterations} |`,
  );
  console.log(
    `| binary speed-up over JSON | ${ratio.toFixed(0)}x | goal ≥ 10x: ${ratio >= 10 ? 'met' : 'NOT met'} |`,
  );
  for (const row of rows) console.log(row);
}

await main();
