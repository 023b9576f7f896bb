/**
 * `npm run bench` (packages/server): throughput and latency of the embedded server on the demo food
 * model, with and without dynamic batching, with 1 and 2 instances, at concurrency 1, 4 and 16, and
 * the raw in-process onnxruntime-node ceiling at its best batch size. Also the server's peak RSS.
 *
 * Each server variant runs in its own process on a temporary model repository (the food model's
 * `model.onnx` linked in, a generated `config.pbtxt`), each instance's session in its own worker
 * thread (`createWorkerInstances`); two rows show main-thread sessions for comparison. The host's
 * cores are split between instances (`intra_op_thread_count` = cores / instances); the raw ceiling
 * is the best of one session with all cores or with 1 intra-op thread, over batch sizes. Dynamic
 * batching uses the food model's own settings (`preferred_batch_size: [4, 8, 16]`,
 * `max_queue_delay_microseconds: 2000`). Requests are one FP32 [1,3,224,224] image each,
 * sent with the binary tensor extension over keep-alive HTTP by closed-loop clients.
 *
 * The host is shared with other work whose load changes by the minute, so the run is interleaved:
 * every server is started up front, and each round measures every cell (variant × concurrency, and
 * the raw ceiling per batch size) for a short slice; the table reports the median over rounds and
 * the ratios compare those medians.
 * Env: BENCH_SECONDS (measured seconds per slice, default 2), BENCH_WARMUP_SECONDS (default 0.5),
 * BENCH_ROUNDS (default 5).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { buildInferBody, runLoad, type LoadResult } from './load.js';
import { RawOrt } from './raw-ort.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../../..');
const modelPath = path.join(repoRoot, 'models_staging', 'food_classifier_onnx', '1', 'model.onnx');
const MODEL = 'food_classifier_onnx';
const INPUT = 'input';
const OUTPUT = 'output';
const DIMS = [3, 224, 224];
const MAX_BATCH = 16;
const CONCURRENCY = [1, 4, 16];
const RAW_BATCHES = [1, 4, 8, 16];
const seconds = Number(process.env.BENCH_SECONDS ?? 2);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 0.5);
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
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
    'parameters: { key: "inter_op_thread_count" value: { string_value: "1" } }',
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

interface ServerChild {
  readonly port: number;
  readonly pid: number;
  stop(): Promise<void>;
}

async function startServerChild(repository: string, hosting: Variant['hosting']): Promise<ServerChild> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(here, 'server-child.ts'), repository, hosting],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', (line) =>
      resolve((JSON.parse(line) as { port: number }).port),
    );
    child.once('exit', (code) => reject(new Error(`server exited with code ${code}`)));
  });
  return {
    port,
    pid: child.pid ?? -1,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
}

/** The slice with the median throughput (its latencies are reported with it). */
function medianSlice(slices: readonly LoadResult[]): LoadResult | undefined {
  const sorted = [...slices].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

const fmt = (n: number | undefined, d = 1): string =>
  n !== undefined && Number.isFinite(n) ? n.toFixed(d) : '–';

async function main(): Promise<void> {
  if (!existsSync(modelPath)) {
    process.stdout.write(
      `bench skipped: ${path.relative(repoRoot, modelPath)} is missing; build it with ` +
        '`npm run model:ensure -w @gourmetgram/food-model`\n',
    );
    return;
  }
  const load = (): string =>
    os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
  process.stdout.write(
    `food_classifier_onnx, FP32 [1,3,224,224] per request, binary HTTP; ${cores} cores; ` +
      `${seconds}s measured + ${warmupSeconds}s warmup per slice, median of ${rounds} interleaved rounds; ` +
      `load average at start ${load()}\n\n`,
  );
  const image = new Float32Array(DIMS.reduce((a, b) => a * b, 1)).map(() => Math.random());
  const body = buildInferBody(INPUT, OUTPUT, DIMS, image);

  let peakRss = 0;
  const repositories: string[] = [];
  const servers: ServerChild[] = [];
  const slices = new Map<string, LoadResult[]>();
  const rawSlices = new Map<string, number[]>();
  const rawThreads = [...new Set([cores, 1])];
  const raws = await Promise.all(
    rawThreads.map((threads) =>
      RawOrt.create({ modelPath, input: INPUT, dims: DIMS, intraOpThreads: threads }),
    ),
  );
  try {
    for (const v of VARIANTS) {
      const repository = await makeRepository(v);
      repositories.push(repository);
      servers.push(await startServerChild(repository, v.hosting));
    }
    for (let round = 1; round <= rounds; round++) {
      for (const [i, v] of VARIANTS.entries()) {
        const server = servers[i] as ServerChild;
        for (const concurrency of CONCURRENCY) {
          const r = await runLoad({
            port: server.port,
            model: MODEL,
            body,
            concurrency,
            warmupMs: warmupSeconds * 1000,
            durationMs: seconds * 1000,
          });
          const key = `${v.label}|${concurrency}`;
          slices.set(key, [...(slices.get(key) ?? []), r]);
          process.stdout.write(
            `round ${round} ${v.label.padEnd(36)} c=${String(concurrency).padEnd(3)} ${fmt(r.rps).padStart(7)} req/s  ` +
              `p50 ${fmt(r.p50Ms).padStart(6)} ms  p99 ${fmt(r.p99Ms).padStart(6)} ms  errors ${r.errors}\n`,
          );
        }
      }
      for (const [t, raw] of raws.entries()) {
        for (const batch of RAW_BATCHES) {
          const ips = await raw.measure(batch, seconds * 1000);
          const key = `${rawThreads[t]}|${batch}`;
          rawSlices.set(key, [...(rawSlices.get(key) ?? []), ips]);
          process.stdout.write(
            `round ${round} raw onnxruntime-node ${rawThreads[t]} thread(s) batch ${batch}: ${fmt(ips)} img/s\n`,
          );
        }
      }
    }
  } finally {
    for (const s of servers) peakRss = Math.max(peakRss, peakRssMb(s.pid));
    await Promise.all(servers.map((s) => s.stop()));
    await Promise.all(repositories.map((r) => rm(r, { recursive: true, force: true })));
    await Promise.all(raws.map((r) => r.release()));
  }

  const cell = (label: string, concurrency: number): LoadResult | undefined =>
    medianSlice(slices.get(`${label}|${concurrency}`) ?? []);
  process.stdout.write(
    '\n| server variant (median) | c=1 req/s | c=1 p50/p99 ms | c=4 req/s | c=4 p50/p99 ms | c=16 req/s | c=16 p50/p99 ms |\n',
  );
  process.stdout.write('| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n');
  for (const v of VARIANTS) {
    const cells = CONCURRENCY.map((c) => {
      const r = cell(v.label, c);
      return `${fmt(r?.rps)} | ${fmt(r?.p50Ms)} / ${fmt(r?.p99Ms)}`;
    });
    process.stdout.write(`| ${v.label} | ${cells.join(' | ')} |\n`);
  }
  const rawMedians = rawThreads.flatMap((threads) =>
    RAW_BATCHES.map((batch) => ({
      threads,
      batch,
      imagesPerSecond: median(rawSlices.get(`${threads}|${batch}`) ?? []),
    })),
  );
  const best = rawMedians.reduce((a, b) => (b.imagesPerSecond > a.imagesPerSecond ? b : a));
  for (const threads of rawThreads) {
    process.stdout.write(
      `\nraw onnxruntime-node (in-process, one session, ${threads} intra-op thread(s), median): ` +
        rawMedians
          .filter((r) => r.threads === threads)
          .map((r) => `batch ${r.batch}: ${fmt(r.imagesPerSecond)} img/s`)
          .join(', '),
    );
  }
  process.stdout.write(`\nraw ceiling: batch ${best.batch} with ${best.threads} thread(s)\n`);
  const at16 = (label: string): number => cell(label, 16)?.rps ?? NaN;
  const dyn1 = at16('dynamic batching, 1 instance');
  const none1 = at16('no batching, 1 instance');
  const dyn2 = at16('dynamic batching, 2 instances');
  const none2 = at16('no batching, 2 instances');
  const bestServer = Math.max(...VARIANTS.map((v) => at16(v.label)));
  process.stdout.write(
    `dynamic batching speed-up at c=16: ${fmt(dyn1 / none1, 2)}x (1 instance), ${fmt(dyn2 / none2, 2)}x (2 instances); goal ≥ 1.5x\n` +
      `best server / raw ceiling at c=16: ${fmt(bestServer)} / ${fmt(best.imagesPerSecond)} = ` +
      `${fmt(bestServer / best.imagesPerSecond, 2)}; goal ≥ 0.9\n` +
      `server peak RSS (VmHWM, largest server process): ${fmt(peakRss, 0)} MiB; load average at end ${load()}\n`,
  );
}

await main();
