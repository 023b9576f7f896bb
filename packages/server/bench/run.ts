/**
 * `npm run bench` (packages/server): throughput and latency of the embedded server on the demo food
 * model, with and without dynamic batching, with 1 and 2 instances, at concurrency 1, 4 and 16, and
 * the raw in-process onnxruntime-node ceiling at its best batch size. Also the server's peak RSS.
 *
 * Each server variant runs in its own process on a temporary model repository (the food model's
 * `model.onnx` linked in, a generated `config.pbtxt`), each instance's session in its own worker
 * thread (the core's default); two rows show main-thread sessions for comparison. Each instance has
 * one intra-op thread (the server's default). The raw ceiling is measured under the same thread
 * budgets — one session with 1 or all intra-op threads, and one 1-thread session per core side by
 * side in worker threads — over batch sizes 1..16, both per wall-clock second and per CPU second.
 * CPU time of the server process (all its threads, from /proc) and of the load generator is
 * sampled around every measured window. Dynamic
 * batching uses the food model's own settings (`preferred_batch_size: [4, 8, 16]`,
 * `max_queue_delay_microseconds: 2000`). Requests are one FP32 [1,3,224,224] image each,
 * sent with the binary tensor extension over keep-alive HTTP by closed-loop clients.
 *
 * The host is shared with other work whose load changes by the minute, so the run is interleaved:
 * every server is started up front, and each round measures every cell (variant × concurrency, and
 * the raw ceiling per batch size) for a short slice; the table reports the median over rounds and
 * the ratios compare those medians.
 *
 * A second suite (`python-suite.ts`) measures the Python backend, the ensemble and the stub round
 * trip against their ONNX / built-in counterparts; a third (`simple-suite.ts`) the server's
 * throughput on Triton's tiny `simple` model against a bare `node:http` floor; a fourth
 * (`mnist-suite.ts`, issue 11) dynamic batching against no batching on a generated MNIST-sized CNN
 * (`mnist-model.ts`), where per-execution overhead rather than compute dominates, with the raw
 * onnxruntime floor at batch 1 and 16 and the same servers' core in-process without HTTP.
 * `npm run bench` runs all four, one after the other.
 * A fifth (`sequence-suite.ts`, issue 28) the sequence batcher's Oldest strategy against Direct at 16
 * concurrent sequences, the load generator in its own process.
 * Env: BENCH_SUITE (`all` (default), `onnx`, `python`, `simple`, `mnist`, `sequence`, `cache` (`cache-suite.ts`: response cache hits against the plain path on `simple`) or `grpc-food` (`grpc-food-suite.ts`, issue 31: HTTP against gRPC on the food model with the perf CLI, bare node:http / grpc-js floors and raw compute); also `--suite=<name>`),
 * BENCH_SECONDS (measured seconds per slice, default 1.5), BENCH_WARMUP_SECONDS (default 0.5),
 * BENCH_ROUNDS (default 3). The defaults keep the suites together at about 9 minutes on 2 cores
 * (`simple`: ~30 s, `mnist`: ~2 min).
 */
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

import {
  cpuSecondsOf,
  fmt,
  loadAverage,
  median,
  medianSlice,
  ownCpuSeconds,
  peakRssMb,
  repoRoot,
  startChild,
  type ServerChild,
} from './common.js';
import { buildInferBody, runLoad, type LoadResult } from './load.js';
import { runCacheSuite } from './cache-suite.js';
import { runGrpcFoodSuite } from './grpc-food-suite.js';
import { runMnistSuite } from './mnist-suite.js';
import { runPythonSuite } from './python-suite.js';
import { RawOrt } from './raw-ort.js';
import { runSequenceSuite } from './sequence-suite.js';
import { runSimpleSuite } from './simple-suite.js';

const modelPath = path.join(repoRoot, 'models_staging', 'food_classifier_onnx', '1', 'model.onnx');
const MODEL = 'food_classifier_onnx';
const INPUT = 'input';
const OUTPUT = 'output';
const DIMS = [3, 224, 224];
const MAX_BATCH = 16;
const CONCURRENCY = [1, 4, 16];
const RAW_BATCHES = [1, 2, 4, 8, 16];
const seconds = Number(process.env.BENCH_SECONDS ?? 1.5);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 0.5);
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const SUITES = ['all', 'onnx', 'python', 'simple', 'mnist', 'sequence', 'cache', 'grpc-food'] as const;
const suiteArg = process.argv.find((a) => a.startsWith('--suite='))?.slice('--suite='.length);
const suite = suiteArg ?? process.env.BENCH_SUITE ?? 'all';
if (!(SUITES as readonly string[]).includes(suite)) {
  process.stderr.write(`unknown bench suite '${suite}' (${SUITES.join(', ')})\n`);
  process.exit(2);
}
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
  // One intra-op thread per instance (the server's default): the raw rows show that a second
  // intra-op thread in one session loses on this 2-core host, and the main thread (HTTP) and the
  // load generator need the other core.
  const threads = 1;
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
  // A copy, not a link: the server refuses model files that resolve outside the model directory.
  await copyFile(modelPath, path.join(root, MODEL, '1', 'model.onnx'));
  await writeFile(path.join(root, MODEL, 'config.pbtxt'), configFor(v));
  return root;
}

/** A raw onnxruntime-node session in a worker thread (`raw-worker.ts`). */
class RawWorker {
  private constructor(private readonly worker: Worker) {}

  static async create(intraOpThreads: number): Promise<RawWorker> {
    // The bench runs from sources under tsx: the worker registers tsx in its own thread first.
    const target = new URL('./raw-worker.ts', import.meta.url).href;
    const bootstrap = `import { register } from 'tsx/esm/api'; register(); await import(${JSON.stringify(target)});`;
    const worker = new Worker(bootstrap, {
      eval: true,
      workerData: { modelPath, input: INPUT, dims: DIMS, intraOpThreads },
    });
    await new Promise<void>((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('error', reject);
    });
    return new RawWorker(worker);
  }

  measure(batch: number, durationMs: number): Promise<{ images: number; seconds: number }> {
    return new Promise((resolve) => {
      this.worker.once('message', resolve);
      this.worker.postMessage({ batch, durationMs });
    });
  }

  release(): Promise<number> {
    return this.worker.terminate();
  }
}

/** One raw measurement: images per wall-clock second and per CPU second of this process. */
interface RawSlice {
  readonly ips: number;
  readonly perCpuSecond: number;
}

/** CPU use around one load slice's measured window. */
interface CpuSlice {
  /** Server process CPU seconds per request. */
  readonly serverCpuPerRequest: number;
  /** Load generator (this process) CPU seconds per request. */
  readonly clientCpuPerRequest: number;
}

function startServerChild(repository: string, hosting: Variant['hosting']): Promise<ServerChild> {
  return startChild('server-child.ts', [repository, hosting]);
}

async function main(): Promise<void> {
  if (!existsSync(modelPath)) {
    process.stdout.write(
      `bench skipped: ${path.relative(repoRoot, modelPath)} is missing; build it with ` +
        '`npm run model:ensure -w @gourmetgram/food-model`\n',
    );
    return;
  }
  const load = loadAverage;
  process.stdout.write(
    `food_classifier_onnx, FP32 [1,3,224,224] per request, binary HTTP; ${cores} cores; ` +
      `${seconds}s measured + ${warmupSeconds}s warmup per slice, median of ${rounds} interleaved rounds; ` +
      `load average at start ${load()}\n\n`,
  );
  const image = new Float32Array(DIMS.reduce((a, b) => a * b, 1)).map(() => Math.random());
  const body = buildInferBody(INPUT, OUTPUT, DIMS, image);

  let peakRss = 0;
  const peakRssByVariant = new Map<string, number>();
  const repositories: string[] = [];
  const servers: ServerChild[] = [];
  const slices = new Map<string, LoadResult[]>();
  const cpuSlices = new Map<string, CpuSlice[]>();
  const rawSlices = new Map<string, RawSlice[]>();
  // Raw ceilings under the server's thread budgets: one session with 1 or all intra-op threads (in
  // this thread), and one 1-thread session per core side by side in worker threads (as the server
  // with one 1-thread instance per core).
  const rawThreads = [...new Set([1, cores])];
  const raws = await Promise.all(
    rawThreads.map((threads) =>
      RawOrt.create({ modelPath, input: INPUT, dims: DIMS, intraOpThreads: threads }),
    ),
  );
  const rawParallel =
    cores > 1 ? await Promise.all(Array.from({ length: cores }, () => RawWorker.create(1))) : [];
  const rawConfigs: { readonly label: string; readonly run: (batch: number) => Promise<number> }[] = [
    ...raws.map((raw, i) => ({
      label: `1 session × ${rawThreads[i]} thread(s)`,
      run: (batch: number) => raw.measure(batch, seconds * 1000),
    })),
    ...(rawParallel.length > 1
      ? [
          {
            label: `${rawParallel.length} sessions × 1 thread (workers)`,
            run: async (batch: number) => {
              const runs = await Promise.all(rawParallel.map((w) => w.measure(batch, seconds * 1000)));
              return runs.reduce((a, r) => a + r.images / r.seconds, 0);
            },
          },
        ]
      : []),
  ];
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
          let startCpu: { server: number; own: number } | undefined;
          let endCpu: { server: number; own: number } | undefined;
          const sample = (): { server: number; own: number } => ({
            server: cpuSecondsOf(server.pid),
            own: ownCpuSeconds(),
          });
          const r = await runLoad({
            port: server.port,
            model: MODEL,
            body,
            concurrency,
            warmupMs: warmupSeconds * 1000,
            durationMs: seconds * 1000,
            onWindow: (edge) => {
              if (edge === 'start') startCpu = sample();
              else endCpu = sample();
            },
          });
          endCpu ??= sample();
          const key = `${v.label}|${concurrency}`;
          slices.set(key, [...(slices.get(key) ?? []), r]);
          if (startCpu !== undefined && r.requests > 0) {
            cpuSlices.set(key, [
              ...(cpuSlices.get(key) ?? []),
              {
                serverCpuPerRequest: (endCpu.server - startCpu.server) / r.requests,
                clientCpuPerRequest: (endCpu.own - startCpu.own) / r.requests,
              },
            ]);
          }
          process.stdout.write(
            `round ${round} ${v.label.padEnd(36)} c=${String(concurrency).padEnd(3)} ${fmt(r.rps).padStart(7)} req/s  ` +
              `p50 ${fmt(r.p50Ms).padStart(6)} ms  p99 ${fmt(r.p99Ms).padStart(6)} ms  errors ${r.errors}\n`,
          );
        }
      }
      for (const config of rawConfigs) {
        for (const batch of RAW_BATCHES) {
          const cpu0 = ownCpuSeconds();
          const ips = await config.run(batch);
          const cpu = ownCpuSeconds() - cpu0;
          const perCpuSecond = (ips * seconds) / cpu;
          const key = `${config.label}|${batch}`;
          rawSlices.set(key, [...(rawSlices.get(key) ?? []), { ips, perCpuSecond }]);
          process.stdout.write(
            `round ${round} raw ${config.label} batch ${batch}: ${fmt(ips)} img/s, ${fmt(perCpuSecond)} img/CPU-s\n`,
          );
        }
      }
    }
  } finally {
    for (const [i, s] of servers.entries()) {
      const rss = peakRssMb(s.pid);
      peakRssByVariant.set(VARIANTS[i]?.label ?? '', rss);
      peakRss = Math.max(peakRss, rss);
    }
    await Promise.all(servers.map((s) => s.stop()));
    await Promise.all(repositories.map((r) => rm(r, { recursive: true, force: true })));
    await Promise.all(raws.map((r) => r.release()));
    await Promise.all(rawParallel.map((r) => r.release()));
  }

  const cell = (label: string, concurrency: number): LoadResult | undefined =>
    medianSlice(slices.get(`${label}|${concurrency}`) ?? []);
  const cpuCell = (label: string, concurrency: number): { server: number; client: number } => {
    const c = cpuSlices.get(`${label}|${concurrency}`) ?? [];
    return {
      server: median(c.map((x) => x.serverCpuPerRequest)),
      client: median(c.map((x) => x.clientCpuPerRequest)),
    };
  };
  process.stdout.write(
    '\n| server variant (median) | c=1 req/s | c=1 p50/p99 ms | c=4 req/s | c=4 p50/p99 ms | c=16 req/s | c=16 p50/p99 ms | c=16 server CPU ms/req | c=16 req per server CPU-s | c=16 load-gen CPU ms/req | peak RSS MiB |\n',
  );
  process.stdout.write('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n');
  for (const v of VARIANTS) {
    const cells = CONCURRENCY.map((c) => {
      const r = cell(v.label, c);
      return `${fmt(r?.rps)} | ${fmt(r?.p50Ms)} / ${fmt(r?.p99Ms)}`;
    });
    const cpu = cpuCell(v.label, 16);
    process.stdout.write(
      `| ${v.label} | ${cells.join(' | ')} | ${fmt(cpu.server * 1000, 2)} | ${fmt(1 / cpu.server)} | ${fmt(cpu.client * 1000, 2)} | ${fmt(peakRssByVariant.get(v.label), 0)} |\n`,
    );
  }
  const rawMedians = rawConfigs.flatMap((config) =>
    RAW_BATCHES.map((batch) => {
      const r = rawSlices.get(`${config.label}|${batch}`) ?? [];
      return {
        label: config.label,
        batch,
        ips: median(r.map((x) => x.ips)),
        perCpuSecond: median(r.map((x) => x.perCpuSecond)),
      };
    }),
  );
  process.stdout.write(
    `\n| raw onnxruntime-node, in-process (median img/s; img per CPU-s) | ${RAW_BATCHES.map((b) => `batch ${b}`).join(' | ')} |\n`,
  );
  process.stdout.write(`| --- | ${RAW_BATCHES.map(() => '---:').join(' | ')} |\n`);
  for (const config of rawConfigs) {
    const row = rawMedians
      .filter((r) => r.label === config.label)
      .map((r) => `${fmt(r.ips)}; ${fmt(r.perCpuSecond)}`);
    process.stdout.write(`| ${config.label} | ${row.join(' | ')} |\n`);
  }
  const best = rawMedians.reduce((a, b) => (b.ips > a.ips ? b : a));
  const bestCpu = rawMedians.reduce((a, b) => (b.perCpuSecond > a.perCpuSecond ? b : a));
  const singleSession = rawMedians.filter((r) => r.label.startsWith('1 session'));
  const bestSingle = singleSession.reduce((a, b) => (b.ips > a.ips ? b : a));
  const at16 = (label: string): number => cell(label, 16)?.rps ?? NaN;
  const dyn1 = at16('dynamic batching, 1 instance');
  const none1 = at16('no batching, 1 instance');
  const dyn2 = at16('dynamic batching, 2 instances');
  const none2 = at16('no batching, 2 instances');
  const bestVariant = VARIANTS.reduce((a, b) => (at16(b.label) > at16(a.label) ? b : a));
  const bestServer = at16(bestVariant.label);
  const bestServerPerCpu = Math.max(...VARIANTS.map((v) => 1 / cpuCell(v.label, 16).server));
  process.stdout.write(
    `\nraw ceiling (wall clock): ${fmt(best.ips)} img/s (${best.label}, batch ${best.batch}); ` +
      `one session only: ${fmt(bestSingle.ips)} img/s (${bestSingle.label}, batch ${bestSingle.batch})\n` +
      `raw ceiling (per CPU second): ${fmt(bestCpu.perCpuSecond)} img/CPU-s (${bestCpu.label}, batch ${bestCpu.batch})\n` +
      `dynamic batching speed-up at c=16: ${fmt(dyn1 / none1, 2)}x (1 instance), ${fmt(dyn2 / none2, 2)}x (2 instances); goal ≥ 1.5x\n` +
      `best server at c=16 (${bestVariant.label}) / raw ceiling: ${fmt(bestServer)} / ${fmt(best.ips)} = ` +
      `${fmt(bestServer / best.ips, 2)} (vs one-session ceiling: ${fmt(bestServer / bestSingle.ips, 2)}); goal ≥ 0.9\n` +
      `best server req per server CPU-s at c=16 / raw img per CPU-s: ${fmt(bestServerPerCpu)} / ${fmt(bestCpu.perCpuSecond)} = ` +
      `${fmt(bestServerPerCpu / bestCpu.perCpuSecond, 2)}\n` +
      `server peak RSS (VmHWM, largest server process): ${fmt(peakRss, 0)} MiB; load average at end ${load()}\n`,
  );
}

if (suite === 'all' || suite === 'onnx') await main();
if (suite === 'all' || suite === 'python') {
  await runPythonSuite({ seconds, warmupSeconds, rounds, concurrency: CONCURRENCY });
}
if (suite === 'all' || suite === 'simple') await runSimpleSuite({ seconds, warmupSeconds, rounds });
if (suite === 'all' || suite === 'sequence') await runSequenceSuite({ seconds, warmupSeconds, rounds });
if (suite === 'all' || suite === 'cache') await runCacheSuite({ seconds, warmupSeconds, rounds });
if (suite === 'all' || suite === 'grpc-food') await runGrpcFoodSuite({ seconds, warmupSeconds, rounds });
if (suite === 'all' || suite === 'mnist') {
  await runMnistSuite({ seconds, warmupSeconds, rounds, concurrency: CONCURRENCY });
}
