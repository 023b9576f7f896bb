/**
 * `npm run bench` (packages/server): throughput and latency of the embedded server on the demo food
 * model, with and without dynamic batching, with 1 and 2 instances, at concurrency 1, 4 and 16, and
 * the raw in-process onnxruntime-node ceiling at its best batch size. Also the server's peak RSS.
 *
 * Each server variant runs in its own process on a temporary model repository (the food model's
 * `model.onnx` linked in, a generated `config.pbtxt`), with each instance's session in its own worker
 * thread (`createWorkerInstances`); two rows show main-thread sessions for comparison. Threads: the host's cores are split between
 * instances (`intra_op_thread_count` = cores / instances), and the raw ceiling uses all cores.
 * Dynamic batching uses the food model's own settings (`preferred_batch_size: [4, 8, 16]`,
 * `max_queue_delay_microseconds: 2000`). The host is shared, so every level runs BENCH_ROUNDS times
 * (variants interleaved) and the best round per cell is reported.
 * Env: BENCH_SECONDS (measured seconds per level, default 4), BENCH_WARMUP_SECONDS (default 1),
 * BENCH_ROUNDS (default 2).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { buildInferBody, runLoad, type LoadResult } from './load.js';
import { rawOrtThroughput } from './raw-ort.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../../..');
const modelDir = path.join(repoRoot, 'models_staging', 'food_classifier_onnx');
const modelPath = path.join(modelDir, '1', 'model.onnx');
const MODEL = 'food_classifier_onnx';
const INPUT = 'input';
const OUTPUT = 'output';
const DIMS = [3, 224, 224];
const MAX_BATCH = 16;
const CONCURRENCY = [1, 4, 16];
const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 1);
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
const cores = Math.max(1, os.availableParallelism());

interface Variant {
  readonly label: string;
  readonly dynamicBatching: boolean;
  readonly instances: number;
  /** Where sessions run: one worker thread per instance (default) or the main thread. */
  readonly hosting: 'worker' | 'main';
}

const VARIANTS: readonly Variant[] = [
  { label: 'no batching, 1 instance', dynamicBatching: false, instances: 1, hosting: 'worker' },
  { label: 'dynamic batching, 1 instance', dynamicBatching: true, instances: 1, hosting: 'worker' },
  { label: 'no batching, 2 instances', dynamicBatching: false, instances: 2, hosting: 'worker' },
  { label: 'dynamic batching, 2 instances', dynamicBatching: true, instances: 2, hosting: 'worker' },
  { label: 'no batching, 2 inst., main thread', dynamicBatching: false, instances: 2, hosting: 'main' },
  { label: 'dyn. batching, 2 inst., main thread', dynamicBatching: true, instances: 2, hosting: 'main' },
];

function configFor(v: Variant): string {
  const threads = Math.max(1, Math.floor(cores / v.instances));
  return [
    `name: "${MODEL}"`,
    'backend: "onnxruntime"',
    `max_batch_size: ${MAX_BATCH}`,
    `input [ { name: "${INPUT}" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [ ${DIMS.join(', ')} ] } ]`,
    `output [ { name: "${OUTPUT}" data_type: TYPE_FP32 dims: [ 11 ] } ]`,
    `instance_group [ { count: ${v.instances} kind: KIND_CPU } ]`,
    v.dynamicBatching
      ? 'dynamic_batching { preferred_batch_size: [ 4, 8, 16 ] max_queue_delay_microseconds: 2000 }'
      : '',
    `parameters: { key: "intra_op_thread_count" value: { string_value: "${threads}" } }`,
    `parameters: { key: "inter_op_thread_count" value: { string_value: "1" } }`,
    '',
  ].join('\n');
}

async function makeRepository(v: Variant): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'tsbench-'));
  await mkdir(path.join(root, MODEL, '1'), { recursive: true });
  await symlink(modelPath, path.join(root, MODEL, '1', 'model.onnx'));
  await writeFile(path.join(root, MODEL, 'config.pbtxt'), configFor(v));
  return root;
}

function peakRssMb(pid: number): number {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m?.[1] === undefined ? NaN : Number(m[1]) / 1024;
  } catch {
    return NaN;
  }
}

async function withServer<T>(
  repository: string,
  hosting: Variant['hosting'],
  fn: (port: number, pid: number) => Promise<T>,
): Promise<T> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(here, 'server-child.ts'), repository, hosting],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout });
      lines.once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
      child.once('exit', (code) => reject(new Error(`server exited with code ${code}`)));
    });
    return await fn(port, child.pid ?? -1);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

const fmt = (n: number, d = 1): string => (Number.isFinite(n) ? n.toFixed(d) : '–');

async function main(): Promise<void> {
  if (!existsSync(modelPath)) {
    process.stdout.write(
      `bench skipped: ${path.relative(repoRoot, modelPath)} is missing; build it with ` +
        '`npm run model:ensure -w @gourmetgram/food-model`\n',
    );
    return;
  }
  process.stdout.write(
    `food_classifier_onnx, FP32 [1,3,224,224] per request, binary HTTP; ${cores} cores; ` +
      `${seconds}s measured + ${warmupSeconds}s warmup per level, best of ${rounds} rounds\n\n`,
  );
  const image = new Float32Array(DIMS.reduce((a, b) => a * b, 1)).map(() => Math.random());
  const body = buildInferBody(INPUT, OUTPUT, DIMS, image);

  const results = new Map<string, LoadResult[]>();
  let peakRss = 0;
  for (let round = 1; round <= rounds; round++) {
    for (const v of VARIANTS) {
      const repository = await makeRepository(v);
      try {
        await withServer(repository, v.hosting, async (port, pid) => {
          const best = results.get(v.label) ?? [];
          for (const [i, concurrency] of CONCURRENCY.entries()) {
            const r = await runLoad({
              port,
              model: MODEL,
              body,
              concurrency,
              warmupMs: warmupSeconds * 1000,
              durationMs: seconds * 1000,
            });
            const previous = best[i];
            if (previous === undefined || r.rps > previous.rps) best[i] = r;
            process.stdout.write(
              `round ${round} ${v.label.padEnd(36)} c=${String(concurrency).padEnd(3)} ${fmt(r.rps).padStart(7)} req/s  ` +
                `p50 ${fmt(r.p50Ms).padStart(6)} ms  p99 ${fmt(r.p99Ms).padStart(6)} ms  errors ${r.errors}\n`,
            );
          }
          results.set(v.label, best);
          peakRss = Math.max(peakRss, peakRssMb(pid));
        });
      } finally {
        await rm(repository, { recursive: true, force: true });
      }
    }
  }

  const raw: { batch: number; imagesPerSecond: number }[] = [];
  for (let round = 1; round <= rounds; round++) {
    const r = await rawOrtThroughput({
      modelPath,
      input: INPUT,
      dims: DIMS,
      batches: [1, 4, 8, 16],
      intraOpThreads: cores,
      durationMs: seconds * 1000,
    });
    for (const x of r) {
      const at = raw.findIndex((y) => y.batch === x.batch);
      if (at < 0) raw.push(x);
      else if (x.imagesPerSecond > (raw[at]?.imagesPerSecond ?? 0)) raw[at] = x;
    }
  }
  const best = raw.reduce((a, b) => (b.imagesPerSecond > a.imagesPerSecond ? b : a));

  process.stdout.write(
    '\n| server variant | c=1 req/s | c=1 p50/p99 ms | c=4 req/s | c=4 p50/p99 ms | c=16 req/s | c=16 p50/p99 ms |\n',
  );
  process.stdout.write('| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n');
  for (const [label, rows] of results) {
    const cells = rows.map((r) => `${fmt(r.rps)} | ${fmt(r.p50Ms)} / ${fmt(r.p99Ms)}`);
    process.stdout.write(`| ${label} | ${cells.join(' | ')} |\n`);
  }
  process.stdout.write(
    `\nraw onnxruntime-node (in-process, ${cores} intra-op threads): ` +
      raw.map((r) => `batch ${r.batch}: ${fmt(r.imagesPerSecond)} img/s`).join(', ') +
      `; best batch ${best.batch}\n`,
  );
  const at16 = (label: string): number => results.get(label)?.[2]?.rps ?? NaN;
  const dyn1 = at16('dynamic batching, 1 instance');
  const none1 = at16('no batching, 1 instance');
  const dyn2 = at16('dynamic batching, 2 instances');
  const none2 = at16('no batching, 2 instances');
  const bestServer = Math.max(dyn1, none1, dyn2, none2);
  process.stdout.write(
    `dynamic batching speed-up at c=16: ${fmt(dyn1 / none1, 2)}x (1 instance), ${fmt(dyn2 / none2, 2)}x (2 instances); goal ≥ 1.5x\n` +
      `best server / raw ceiling at c=16: ${fmt(bestServer, 1)} / ${fmt(best.imagesPerSecond, 1)} = ${fmt(bestServer / best.imagesPerSecond, 2)}; goal ≥ 0.9\n` +
      `server peak RSS (VmHWM, largest over variants): ${fmt(peakRss, 0)} MiB\n`,
  );
}

await main();
