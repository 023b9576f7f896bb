/**
 * `npm run bench` (packages/perf): what the load generator costs, and the tuner on the food model.
 *
 * Part 1, the generator. The embedded server runs in a child process on a temporary repository with
 * `simple` (INT32 [1,16] × 2, the classic Triton test model) and `food_classifier_onnx` (FP32
 * [1,3,224,224], 602 KB per request), its HTTP and gRPC front ends on free ports of 127.0.0.1. For
 * each wire (HTTP, gRPC) × model × concurrency 1, 4 and 16, two loads take turns:
 * - the floor (bench/floor.ts): a bare loop sending one request encoded once up front with the
 *   client's library for the wire, decoding no answer: undici `dispatch` posting the binary-tensor
 *   body (HTTP); a grpc-js `Client` sending the `ModelInferRequest` bytes perf sends, through one
 *   channel with the client's channel options (gRPC);
 * - the perf engine: `runPerf` with the command line `-m <model> --concurrency-range <c> -p <ms>`,
 *   plus `-i grpc -u 127.0.0.1:<gRPC port>` over gRPC (random input data, binary tensors, as
 *   `perf-analyzer-ts` runs it).
 * The generator's CPU per request is `process.cpuUsage()` over the loop (floor) or the engine's own
 * figure over its reported windows (`generator.cpuUsPerRequest`, which the CLI prints); the server's
 * is read from `/proc/<pid>/stat` of the child: around the floor loop, and for the perf engine
 * between its window ends (the windows after the first, at most the last 3, requests = each window's
 * throughput × its length). Cells run in interleaved rounds (round → wire → model → concurrency);
 * the table shows medians over rounds, and one line per (wire, model, concurrency) gives the
 * engine's generator CPU per request over the floor's (issue 30's figure; the target over gRPC is
 * at most 1.2×) with each round's own ratio.
 *
 * Part 2, the tuner: `tune` on the food model with the sweep of the README (1–2 instances × max batch
 * 1/8 × dynamic batching off/on, concurrency 1/4/8, p99 budget 200 ms), its table, the winner, the
 * time it took, and the report files.
 *
 * Env: BENCH_SECONDS (seconds per floor loop and per perf window × 3, at least 0.5 s per window for
 * `simple` and 2 s for the food model; default 3), BENCH_ROUNDS (default 2), BENCH_WIRES (comma
 * list of `http` and `grpc`; default both), BENCH_MODELS (comma list of `simple` and
 * `food_classifier_onnx`; default both), BENCH_TUNE (`0` skips the tuner), BENCH_OUTPUT_DIR (tuner
 * report, default a temporary directory). With the defaults on 2 cores: about 5 minutes for the
 * generator half (a 3 s warm-up loop per wire and model, then 2 wires × 2 models × 3 concurrencies
 * × 2 rounds = 24 cells of 8–15 s: a 1 + 3 s floor loop, then the engine's 3–6 windows of 1 s,
 * 2 s for the food model) and about 3.5 for the tuner.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import type { InferInput } from '@tritonserver-ts/client';
import { applyHeapGrowingPercent } from '@tritonserver-ts/protocol';
import { writeTestModelRepository } from '@tritonserver-ts/server/testing';

import { parsePerfArgs } from '../src/options/parse-perf-args.js';
import { runPerf } from '../src/perf.js';
import { formatTuneTable, summarySentence } from '../src/tune/results-table.js';
import { tuneOptions } from '../src/tune/tune-options.js';
import { tune } from '../src/tune/tuner.js';
import { writeTuneOutputs } from '../src/tune/write-outputs.js';
import type { LoadLevelResult, PerfProgress } from '../src/types.js';
import { bareGrpcLoop, bareHttpLoop } from './floor.js';
import { loadAverage, median, ownCpuSeconds, processCpuSeconds } from './proc.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(benchDir, '../../..');
const foodDir = path.join(repoRoot, 'models_staging', 'food_classifier_onnx');
const FOOD = 'food_classifier_onnx';
const SIMPLE = 'simple';
const CONCURRENCY = [1, 4, 16] as const;
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const runTuner = process.env.BENCH_TUNE !== '0';

/** The wire a cell runs over. */
type Wire = 'http' | 'grpc';

/** The members of `allowed` named by the comma list in env `name`, in its order (all when unset). */
function envList<T extends string>(name: string, allowed: readonly T[]): T[] {
  const text = process.env[name];
  if (text === undefined || text.trim() === '') return [...allowed];
  const picked = text.split(',').map((item) => item.trim());
  for (const item of picked) {
    if (!(allowed as readonly string[]).includes(item)) {
      throw new Error(`${name}: '${item}' is not one of ${allowed.join(', ')}`);
    }
  }
  return picked as T[];
}

const wires = envList<Wire>('BENCH_WIRES', ['http', 'grpc']);
const models = envList('BENCH_MODELS', [SIMPLE, FOOD]);

/** One measured cell of one round. */
interface Cell {
  readonly rps: number;
  readonly generatorUsPerRequest: number;
  readonly serverUsPerRequest: number;
}

/** The embedded server in a child process. */
interface ServerChild {
  /** `host:port` of the HTTP front end. */
  readonly url: string;
  /** `host:port` of the gRPC front end. */
  readonly grpcUrl: string;
  readonly pid: number;
  stop(): Promise<void>;
}

async function startServerChild(repository: string, models: readonly string[]): Promise<ServerChild> {
  const args = ['--import', 'tsx', path.join(benchDir, 'server-child.ts'), '--model-repository', repository];
  for (const model of models) args.push('--load-model', model);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const ports = await new Promise<{ port: number; grpcPort: number }>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', (line) =>
      resolve(JSON.parse(line) as { port: number; grpcPort: number }),
    );
    child.once('exit', (code) => reject(new Error(`the server child exited with code ${String(code)}`)));
  });
  return {
    url: `127.0.0.1:${String(ports.port)}`,
    grpcUrl: `127.0.0.1:${String(ports.grpcPort)}`,
    pid: child.pid ?? -1,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The requests the floor loop posts: what the perf engine sends (random data) for each model. */
function floorInputs(model: string): InferInput[] {
  if (model === SIMPLE) {
    const values = (): Int32Array => Int32Array.from({ length: 16 }, () => Math.floor(Math.random() * 100));
    return [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: values() },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: values() },
    ];
  }
  const image = Float32Array.from({ length: 3 * 224 * 224 }, () => Math.random());
  return [{ name: 'input', datatype: 'FP32', shape: [1, 3, 224, 224], data: image }];
}

async function measureFloor(
  server: ServerChild,
  wire: Wire,
  model: string,
  concurrency: number,
): Promise<Cell> {
  const inputs = floorInputs(model);
  let server0 = NaN;
  let server1 = NaN;
  const marks = {
    start: () => (server0 = processCpuSeconds(server.pid)),
    end: () => (server1 = processCpuSeconds(server.pid)),
  };
  const result =
    wire === 'grpc'
      ? await bareGrpcLoop(server.grpcUrl, model, inputs, concurrency, 1, seconds, marks)
      : await bareHttpLoop(`http://${server.url}`, model, inputs, concurrency, 1, seconds, marks);
  const serverCpu = server1 - server0;
  return {
    rps: result.requests / result.seconds,
    generatorUsPerRequest: (result.cpuSeconds / result.requests) * 1e6,
    serverUsPerRequest: (serverCpu / result.requests) * 1e6,
  };
}

/** The server's CPU at each window end of a perf level, to charge it per request. */
interface WindowMark {
  readonly atMs: number;
  readonly serverCpu: number;
  readonly throughput: number;
}

/** Server CPU per request over the windows after the first (at most the last 3), from their marks. */
function serverUsPerRequest(marks: readonly WindowMark[]): number {
  const last = marks.length - 1;
  const first = Math.max(0, last - 3);
  let requests = 0;
  for (let i = first + 1; i <= last; i++) {
    const mark = marks[i];
    const previous = marks[i - 1];
    if (mark === undefined || previous === undefined) continue;
    requests += (mark.throughput * (mark.atMs - previous.atMs)) / 1000;
  }
  const cpu = (marks[last]?.serverCpu ?? NaN) - (marks[first]?.serverCpu ?? NaN);
  return requests > 0 ? (cpu / requests) * 1e6 : NaN;
}

async function measurePerf(
  server: ServerChild,
  wire: Wire,
  model: string,
  concurrency: number,
): Promise<Cell> {
  // A window must see requests finish (perf_analyzer fails a window in which the model's queue count
  // did not grow): at least 2 s for the food model, about 25 requests a second on this host.
  const windowMs = Math.max(model === FOOD ? 2000 : 500, Math.round((seconds * 1000) / 3));
  const options = parsePerfArgs([
    '-m',
    model,
    ...(wire === 'grpc' ? ['-i', 'grpc', '-u', server.grpcUrl] : ['-u', server.url]),
    '--concurrency-range',
    String(concurrency),
    '-p',
    String(windowMs),
    '-s',
    '20',
    '-r',
    '6',
  ]);
  if ('help' in options) throw new Error('unexpected help request');
  const marks: WindowMark[] = [];
  const onProgress = (event: PerfProgress): void => {
    if (event.kind !== 'window') return;
    marks.push({
      atMs: performance.now(),
      serverCpu: processCpuSeconds(server.pid),
      throughput: event.throughput,
    });
  };
  const run = await runPerf(options, { onProgress });
  const level: LoadLevelResult | undefined = run.results[0];
  if (level === undefined)
    throw new Error(`perf measured nothing for ${model} at concurrency ${String(concurrency)}`);
  if (level.client.errorCount > 0)
    throw new Error(`perf saw ${String(level.client.errorCount)} failed requests`);
  return {
    rps: level.client.throughput,
    generatorUsPerRequest: level.generator.cpuUsPerRequest,
    serverUsPerRequest: serverUsPerRequest(marks),
  };
}

const fmt = (n: number, digits = 0): string => (Number.isFinite(n) ? n.toFixed(digits) : '–');

/** The rounds of one (wire, model, concurrency). */
interface CellRounds {
  readonly wire: Wire;
  readonly model: string;
  readonly concurrency: number;
  readonly floor: Cell[];
  readonly perf: Cell[];
}

/** The median over `list` of `pick`. */
const med = (list: readonly Cell[], pick: (c: Cell) => number): number => median(list.map(pick));

function generatorTable(cells: Iterable<CellRounds>): string {
  const rows = [
    '| wire | model | concurrency | floor req/s | perf req/s | floor generator CPU µs/req | perf generator CPU µs/req | perf / floor | server CPU µs/req (floor load) | server CPU µs/req (perf load) | perf generator / server |',
    '| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: |',
  ];
  for (const { wire, model, concurrency, floor, perf } of cells) {
    const floorGen = med(floor, (c) => c.generatorUsPerRequest);
    const perfGen = med(perf, (c) => c.generatorUsPerRequest);
    const perfServer = med(perf, (c) => c.serverUsPerRequest);
    rows.push(
      `| ${wire} | ${model} | ${String(concurrency)} | ${fmt(
        med(floor, (c) => c.rps),
        1,
      )} | ` +
        `${fmt(
          med(perf, (c) => c.rps),
          1,
        )} | ${fmt(floorGen)} | ${fmt(perfGen)} | ${fmt(perfGen / floorGen, 2)}× | ` +
        `${fmt(med(floor, (c) => c.serverUsPerRequest))} | ${fmt(perfServer)} | ${fmt(perfGen / perfServer, 2)} |`,
    );
  }
  return rows.join('\n');
}

/**
 * One line per cell: the perf engine's generator CPU per request over the floor's (medians), and
 * each round's own ratio (the floor and the engine of the same round).
 */
function ratioLines(cells: Iterable<CellRounds>): string {
  const lines = ['perf / floor generator CPU per request (issue 30: within 1.2× over gRPC):'];
  for (const { wire, model, concurrency, floor, perf } of cells) {
    const ratio = med(perf, (c) => c.generatorUsPerRequest) / med(floor, (c) => c.generatorUsPerRequest);
    const perRound = perf.map((p, i) => p.generatorUsPerRequest / (floor[i]?.generatorUsPerRequest ?? NaN));
    lines.push(
      `- ${wire} ${model} c=${String(concurrency)}: ${fmt(ratio, 2)}× ` +
        `(rounds: ${perRound.map((r) => `${fmt(r, 2)}×`).join(', ')})`,
    );
  }
  return lines.join('\n');
}

/** Seconds of the unmeasured floor loop per (wire, model) before the first round. */
const WARMUP_SECONDS = 3;

async function generatorSuite(server: ServerChild): Promise<void> {
  // Without it the first cell of each wire finds both processes' code for that wire cold (the
  // server's front end, grpc-js or undici in the bench), which costs its floor more than the perf
  // engine that runs after it on code the floor warmed.
  for (const wire of wires) {
    for (const model of models) {
      const inputs = floorInputs(model);
      await (wire === 'grpc'
        ? bareGrpcLoop(server.grpcUrl, model, inputs, 4, WARMUP_SECONDS, 0)
        : bareHttpLoop(`http://${server.url}`, model, inputs, 4, WARMUP_SECONDS, 0));
    }
  }
  const cells = new Map<string, CellRounds>();
  for (let round = 1; round <= rounds; round++) {
    for (const wire of wires) {
      for (const model of models) {
        for (const concurrency of CONCURRENCY) {
          const key = `${wire} ${model}@${String(concurrency)}`;
          const entry = cells.get(key) ?? { wire, model, concurrency, floor: [], perf: [] };
          cells.set(key, entry);
          const floor = await measureFloor(server, wire, model, concurrency);
          const perf = await measurePerf(server, wire, model, concurrency).catch((error: unknown) => {
            // A stall of the shared host can fail a window (see measurePerf): one more try.
            process.stderr.write(
              `round ${String(round)} ${key}: perf failed (${String(error)}), once more\n`,
            );
            return measurePerf(server, wire, model, concurrency);
          });
          entry.floor.push(floor);
          entry.perf.push(perf);
          process.stderr.write(
            `round ${String(round)} ${key}: floor ${fmt(floor.rps)} req/s ${fmt(floor.generatorUsPerRequest)} µs/req; ` +
              `perf ${fmt(perf.rps)} req/s ${fmt(perf.generatorUsPerRequest)} µs/req; server ${fmt(perf.serverUsPerRequest)} µs/req\n`,
          );
        }
      }
    }
  }
  console.log(generatorTable(cells.values()));
  console.log(`\n${ratioLines(cells.values())}`);
}

async function tunerSuite(server: ServerChild): Promise<void> {
  const output = process.env.BENCH_OUTPUT_DIR ?? (await mkdtemp(path.join(os.tmpdir(), 'perf-bench-tune-')));
  const started = Date.now();
  const result = await tune(
    tuneOptions({
      modelName: FOOD,
      url: server.url,
      latencyBudgetMs: 200,
      space: {
        instanceCounts: [1, 2],
        maxBatchSizes: [1, 8],
        dynamicBatching: [
          { enabled: false },
          { enabled: true, preferredBatchSize: [], maxQueueDelayMicroseconds: 0 },
        ],
        concurrency: [1, 4, 8],
      },
      perf: { measurementIntervalMs: 1500, maxTrials: 6, stabilityPercentage: 15 },
    }),
    {
      onProgress: (event) => {
        if (event.kind === 'measurement') {
          const m = event.measurement;
          process.stderr.write(
            `tuner: ${m.variant} concurrency ${String(m.concurrency)}: ${fmt(m.throughput, 1)} infer/s\n`,
          );
        }
      },
    },
  );
  const files = await writeTuneOutputs(result, output);
  console.log(`\n### Tuner on ${FOOD} (${String(((Date.now() - started) / 1000).toFixed(0))} s)\n`);
  console.log(formatTuneTable(result));
  console.log(`\n${summarySentence(result)}`);
  console.log(`tuner run: ${(result.durationMs / 1000).toFixed(1)} s; report: ${files.report}`);
}

async function main(): Promise<void> {
  // As `perf-analyzer-ts` does (TRITONSERVER_TS_HEAP_GROWING_PERCENT=0: V8's own heuristics); the
  // floor loops run in this process too, so they get the same.
  const heapGrowingPercent = applyHeapGrowingPercent();
  const needsFood = runTuner || models.includes(FOOD);
  if (needsFood && !existsSync(path.join(foodDir, '1', 'model.onnx'))) {
    console.error('the food model is missing: run `npm run model:ensure -w @gourmetgram/food-model` first');
    process.exit(2);
  }
  const repository = await mkdtemp(path.join(os.tmpdir(), 'perf-bench-repo-'));
  await writeTestModelRepository(repository, { only: [SIMPLE] });
  if (needsFood) await cp(foodDir, path.join(repository, FOOD), { recursive: true });
  const server = await startServerChild(repository, needsFood ? [SIMPLE, FOOD] : [SIMPLE]);
  const cpu0 = ownCpuSeconds();
  try {
    console.log(
      `## perf generator bench (${new Date().toISOString()}, ${String(os.availableParallelism())} cores, ` +
        `Node ${process.version}; ${String(seconds)} s per loop, ${String(rounds)} rounds; ` +
        `wires ${wires.join(', ')}; models ${models.join(', ')}; concurrency ${CONCURRENCY.join(', ')}; ` +
        `V8 heap growing percent ${heapGrowingPercent === undefined ? "V8's own" : String(heapGrowingPercent)}; load average ${loadAverage()})\n`,
    );
    await generatorSuite(server);
    console.log(`\nload average after the generator suite: ${loadAverage()}`);
    if (runTuner) await tunerSuite(server);
    console.log(
      `\nbench process CPU ${fmt(ownCpuSeconds() - cpu0, 1)} s; load average at the end ${loadAverage()}`,
    );
  } finally {
    await server.stop();
    await rm(repository, { recursive: true, force: true });
  }
}

await main();
