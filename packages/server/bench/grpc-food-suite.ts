/**
 * The `grpc-food` suite of `npm run bench` (packages/server, issue 31): HTTP against gRPC on
 * image-sized tensors. One embedded server process serves the food model
 * (`food_classifier_onnx`, FP32 [1,3,224,224] = 602,112 bytes per request; 2 CPU instances of one
 * intra-op thread, no batching) on both front ends; the project's own perf CLI
 * (`perf-analyzer-ts -i http|grpc --concurrency-range 8`, random input data, binary tensors over
 * HTTP) runs in its own process as the load generator. Beside it, measured in the same rounds:
 *
 * - the bare HTTP floor (`bare-http-child.ts`): `node:http` reading the same body and answering the
 *   server's own reply bytes;
 * - the bare gRPC floor (`bare-grpc-child.ts`): grpc-js (the server's channel options) reassembling
 *   the same `ModelInferRequest` and answering the server's own `ModelInferResponse` bytes;
 * - a second server process and a second gRPC floor with 4 MiB / 16 MiB HTTP/2 receive windows
 *   (`src/grpc/flow-control.ts`; the others keep HTTP/2's 64 KiB, the front end's default);
 * - raw onnxruntime-node compute in this process (one session, one intra-op thread, batch 1): CPU
 *   per image.
 *
 * The floors forward the load generator's metadata / config / statistics calls to the real server
 * so the same perf CLI drives them. Each cell: start the perf CLI, wait until requests flow, let it
 * run `BENCH_WARMUP_SECONDS` (at least 1 s), then read the target's CPU (/proc, every thread) and
 * its count of answered requests (the server's statistics endpoint, the floors' counters), wait
 * `BENCH_SECONDS`, read them again, stop the perf CLI. Cells run in interleaved rounds
 * (`BENCH_ROUNDS`, at least 3); the table shows the median and range over rounds. "CPU beyond
 * compute" = server CPU per request − raw compute CPU per image (of the same round).
 * `BENCH_GRPC_TARGETS` (e.g. `grpc,bareGrpc`) measures only some cells, `BENCH_CHILD_NODE_FLAGS`
 * (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) starts the server and floors with those Node flags,
 * `BENCH_GRPC_CONCURRENCY` changes the concurrency (8).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFile, mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client, credentials } from '@grpc/grpc-js';
import { encodeModelInferRequest } from '@tritonserver-ts/protocol/grpc';

import { cpuSecondsOf, fmt, loadAverage, median, ownCpuSeconds, repoRoot, startChild } from './common.js';
import type { ServerChild } from './common.js';
import { buildInferBody } from './load.js';
import { RawOrt } from './raw-ort.js';

/** Slice length, warm-up and rounds (from run.ts). */
export interface GrpcFoodSuiteSettings {
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly rounds: number;
}

const MODEL = 'food_classifier_onnx';
const INPUT = 'input';
const OUTPUT = 'output';
const DIMS = [3, 224, 224];
const CONCURRENCY = Number(process.env.BENCH_GRPC_CONCURRENCY ?? 8);
const modelPath = path.join(repoRoot, 'models_staging', MODEL, '1', 'model.onnx');
const perfBin = path.join(repoRoot, 'packages', 'perf', 'bin', 'perf-analyzer-ts.js');

type Target = 'http' | 'grpc' | 'grpcWin' | 'httpV8' | 'grpcV8' | 'bareHttp' | 'bareGrpc' | 'bareGrpcWin';
const ALL_TARGETS: readonly Target[] = [
  'http',
  'grpc',
  'grpcWin',
  'httpV8',
  'grpcV8',
  'bareHttp',
  'bareGrpc',
  'bareGrpcWin',
];
/** `BENCH_GRPC_TARGETS=grpc,bareGrpc`: only those cells (e.g. for a profile of one wire). */
const TARGETS: readonly Target[] =
  process.env.BENCH_GRPC_TARGETS === undefined
    ? ALL_TARGETS
    : ALL_TARGETS.filter((t) => (process.env.BENCH_GRPC_TARGETS ?? '').split(',').includes(t));
/** The children's environment (`BENCH_CHILD_NODE_FLAGS` passes through to `startChild`). */
const childEnv = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ ...process.env, ...extra });
const LABEL: Record<Target | 'raw', string> = {
  http: 'server, HTTP',
  grpc: 'server, gRPC',
  grpcWin: 'server, gRPC, 4/16 MiB windows',
  httpV8: "server, HTTP, V8's heap growth",
  grpcV8: "server, gRPC, V8's heap growth",
  bareHttp: 'bare node:http floor',
  bareGrpc: 'bare grpc-js floor',
  bareGrpcWin: 'bare grpc-js, 4/16 MiB windows',
  raw: 'raw onnxruntime compute',
};

const isServer = (t: Target): boolean => !t.startsWith('bare');
const isGrpc = (t: Target): boolean => t === 'grpc' || t === 'grpcWin' || t === 'grpcV8';

function config(): string {
  return [
    `name: "${MODEL}"`,
    'backend: "onnxruntime"',
    'max_batch_size: 16',
    `input [ { name: "${INPUT}" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [ ${DIMS.join(', ')} ] } ]`,
    `output [ { name: "${OUTPUT}" data_type: TYPE_FP32 dims: [ 11 ] } ]`,
    'instance_group [ { count: 2 kind: KIND_CPU } ]',
    'parameters: { key: "intra_op_thread_count" value: { string_value: "1" } }',
    'parameters: { key: "inter_op_thread_count" value: { string_value: "1" } }',
    '',
  ].join('\n');
}

/** One cell of one round. */
interface Cell {
  readonly rps: number;
  /** Target process CPU seconds per request. */
  readonly cpu: number;
  /** Load generator (perf CLI process) CPU seconds per request. */
  readonly genCpu: number;
}

async function getJson(url: string): Promise<unknown> {
  const r = await fetch(url);
  return r.json();
}

/** Requests the target has answered so far. */
async function countOf(target: Target, child: ServerChild): Promise<number> {
  if (isServer(target)) {
    const stats = (await getJson(`http://127.0.0.1:${child.port}/v2/models/${MODEL}/stats`)) as {
      model_stats: { inference_stats: { success: { count: number } } }[];
    };
    return stats.model_stats.reduce((a, m) => a + m.inference_stats.success.count, 0);
  }
  const port = target === 'bareHttp' ? `${child.port}/bench/count` : `${child.info.countPort}/`;
  return ((await getJson(`http://127.0.0.1:${port}`)) as { count: number }).count;
}

function startPerf(protocol: 'http' | 'grpc', port: number): ChildProcess {
  return spawn(
    process.execPath,
    [
      perfBin,
      '-m',
      MODEL,
      '-i',
      protocol,
      '-u',
      `127.0.0.1:${port}`,
      '--concurrency-range',
      String(CONCURRENCY),
      '-p',
      '600000',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
}

async function stopPerf(perf: ChildProcess): Promise<void> {
  if (perf.exitCode !== null || perf.signalCode !== null) return;
  const exited = new Promise((resolve) => perf.once('exit', resolve));
  perf.kill('SIGTERM');
  const timer = setTimeout(() => perf.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}

/** One measured cell: the perf CLI against `target` over `port`. */
async function measure(
  target: Target,
  child: ServerChild,
  port: number,
  seconds: number,
  warmupSeconds: number,
): Promise<Cell> {
  const perf = startPerf(
    target === 'http' || target === 'httpV8' || target === 'bareHttp' ? 'http' : 'grpc',
    port,
  );
  try {
    const before = await countOf(target, child);
    const deadline = performance.now() + 60_000;
    while ((await countOf(target, child)) === before) {
      if (perf.exitCode !== null) throw new Error(`perf CLI exited (${perf.exitCode}) against ${target}`);
      if (performance.now() > deadline) throw new Error(`no requests reached ${target}`);
      await sleep(100);
    }
    await sleep(Math.max(1, warmupSeconds) * 1000);
    const sample = async () => ({
      n: await countOf(target, child),
      cpu: cpuSecondsOf(child.pid),
      gen: cpuSecondsOf(perf.pid ?? -1),
      t: performance.now(),
    });
    const a = await sample();
    await sleep(seconds * 1000);
    const b = await sample();
    const n = Math.max(1, b.n - a.n);
    return { rps: (n * 1000) / (b.t - a.t), cpu: (b.cpu - a.cpu) / n, genCpu: (b.gen - a.gen) / n };
  } finally {
    await stopPerf(perf);
  }
}

/** The server's own reply to one gRPC food request (raw bytes), for the bare gRPC floor. */
async function grpcReply(port: number, image: Float32Array): Promise<Buffer> {
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  const raw = (b: Buffer): Buffer => b;
  const request = encodeModelInferRequest({
    modelName: MODEL,
    inputs: [{ name: INPUT, datatype: 'FP32', shape: [1n, ...DIMS.map(BigInt)] }],
    outputs: [{ name: OUTPUT }],
    rawInputContents: [new Uint8Array(image.buffer, image.byteOffset, image.byteLength)],
  });
  try {
    return await new Promise<Buffer>((resolve, reject) =>
      client.makeUnaryRequest('/inference.GRPCInferenceService/ModelInfer', raw, raw, request, (e, r) =>
        e === null && r !== undefined ? resolve(r) : reject(e ?? new Error('no reply')),
      ),
    );
  } finally {
    client.close();
  }
}

const spread = (values: readonly number[], scale: number, d: number): string =>
  values.length === 0
    ? '–'
    : `${fmt(median(values) * scale, d)} (${fmt(Math.min(...values) * scale, d)}–${fmt(Math.max(...values) * scale, d)})`;

/** Runs the suite and prints its rows and table. */
export async function runGrpcFoodSuite(settings: GrpcFoodSuiteSettings): Promise<void> {
  const seconds = Math.max(2, settings.seconds);
  const warmupSeconds = Math.max(1, settings.warmupSeconds);
  const rounds = Math.max(3, settings.rounds);
  process.stdout.write(
    `\ngrpc-food suite: ${MODEL}, FP32 [1,3,224,224] (602,112 bytes) per request, 2 CPU instances × 1 ` +
      `intra-op thread, no batching, perf-analyzer-ts c=${CONCURRENCY} in its own process; ` +
      `${os.availableParallelism()} cores; ${seconds}s measured after ${warmupSeconds}s per cell, ` +
      `${rounds} interleaved rounds; load average at start ${loadAverage()}\n\n`,
  );
  const repository = await mkdtemp(path.join(os.tmpdir(), 'tsbench-grpc-food-'));
  const children = new Map<Target, ServerChild>();
  const cells = new Map<Target | 'raw', Cell[]>();
  const raw = await RawOrt.create({ modelPath, input: INPUT, dims: DIMS, intraOpThreads: 1 });
  try {
    await mkdir(path.join(repository, MODEL, '1'), { recursive: true });
    await copyFile(modelPath, path.join(repository, MODEL, '1', 'model.onnx'));
    await writeFile(path.join(repository, MODEL, 'config.pbtxt'), config());
    const server = await startChild('server-child.ts', [repository], childEnv({ BENCH_GRPC: '1' }));
    children.set('http', server);
    children.set('grpc', server);
    const grpcPort = server.info.grpcPort as number;
    if (TARGETS.includes('grpcWin')) {
      children.set(
        'grpcWin',
        await startChild(
          'server-child.ts',
          [repository],
          childEnv({ BENCH_GRPC: '1', BENCH_GRPC_WINDOWS: '1' }),
        ),
      );
    }
    if (TARGETS.includes('httpV8') || TARGETS.includes('grpcV8')) {
      // The same server with V8's own heap growth heuristics instead of the commands' 300 %.
      const v8Default = await startChild(
        'server-child.ts',
        [repository],
        childEnv({ BENCH_GRPC: '1', TRITONSERVER_TS_HEAP_GROWING_PERCENT: '0' }),
      );
      children.set('httpV8', v8Default);
      children.set('grpcV8', v8Default);
    }
    const image = new Float32Array(DIMS.reduce((a, b) => a * b, 1)).map(() => Math.random());
    const body = buildInferBody(INPUT, OUTPUT, DIMS, image);
    const httpReply = await fetch(`http://127.0.0.1:${server.port}/v2/models/${MODEL}/infer`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/octet-stream',
        'Inference-Header-Content-Length': String(body.headerLength),
      },
      body: body.body,
    });
    const httpBytes = Buffer.from(await httpReply.arrayBuffer());
    const httpHeaderLength = httpReply.headers.get('inference-header-content-length') ?? '0';
    await writeFile(path.join(repository, 'reply.bin'), httpBytes);
    await writeFile(path.join(repository, 'reply.grpc'), await grpcReply(grpcPort, image));
    children.set(
      'bareHttp',
      await startChild(
        'bare-http-child.ts',
        [path.join(repository, 'reply.bin'), httpHeaderLength, String(server.port)],
        childEnv(),
      ),
    );
    for (const [target, windows] of [
      ['bareGrpc', '0'],
      ['bareGrpcWin', '1'],
    ] as const) {
      children.set(
        target,
        await startChild(
          'bare-grpc-child.ts',
          [path.join(repository, 'reply.grpc'), String(grpcPort)],
          childEnv({ BENCH_GRPC_WINDOWS: windows }),
        ),
      );
    }
    const portOf = (t: Target): number => {
      const c = children.get(t) as ServerChild;
      return isGrpc(t) ? (c.info.grpcPort as number) : c.port;
    };
    for (let round = 1; round <= rounds; round++) {
      for (const target of TARGETS) {
        const child = children.get(target) as ServerChild;
        const cell = await measure(target, child, portOf(target), seconds, warmupSeconds);
        cells.set(target, [...(cells.get(target) ?? []), cell]);
        process.stdout.write(
          `round ${round} ${LABEL[target].padEnd(24)} ${fmt(cell.rps).padStart(7)} req/s  ` +
            `server CPU ${fmt(cell.cpu * 1000, 2).padStart(6)} ms/req  perf CLI CPU ${fmt(cell.genCpu * 1000, 2)} ms/req  ` +
            `load ${loadAverage()}\n`,
        );
      }
      const cpu0 = ownCpuSeconds();
      const r = await raw.measureRun(1, seconds * 1000);
      const cpu = (ownCpuSeconds() - cpu0) / r.images;
      cells.set('raw', [...(cells.get('raw') ?? []), { rps: r.images / r.seconds, cpu, genCpu: NaN }]);
      process.stdout.write(
        `round ${round} ${LABEL.raw.padEnd(24)} ${fmt(r.images / r.seconds).padStart(7)} img/s  CPU ${fmt(cpu * 1000, 2)} ms/img\n`,
      );
    }
  } finally {
    const stopped = new Set<ServerChild>(children.values());
    await Promise.all([...stopped].map((c) => c.stop()));
    await raw.release();
    await rm(repository, { recursive: true, force: true });
  }

  const rawCpu = (cells.get('raw') ?? []).map((c) => c.cpu);
  process.stdout.write(
    `\n| grpc-food, c=${CONCURRENCY} (median (min–max) over ${rounds} rounds) | throughput (infer/s) | server CPU per request (ms) | CPU beyond compute (ms) | perf CLI CPU per request (ms) |\n` +
      '| --- | ---: | ---: | ---: | ---: |\n',
  );
  for (const target of TARGETS) {
    const c = cells.get(target) ?? [];
    // Beyond compute: each round's CPU per request less that round's raw compute per image.
    const beyond = isServer(target) ? c.map((x, i) => x.cpu - (rawCpu[i] ?? NaN)) : [];
    process.stdout.write(
      `| ${LABEL[target]} | ${spread(
        c.map((x) => x.rps),
        1,
        1,
      )} | ${spread(
        c.map((x) => x.cpu),
        1000,
        2,
      )} | ` +
        `${isServer(target) ? spread(beyond, 1000, 2) : '–'} | ${spread(
          c.map((x) => x.genCpu),
          1000,
          2,
        )} |\n`,
    );
  }
  const raws = cells.get('raw') ?? [];
  process.stdout.write(
    `| ${LABEL.raw} (batch 1, 1 thread) | ${spread(
      raws.map((x) => x.rps),
      1,
      1,
    )} img/s | ${spread(rawCpu, 1000, 2)} per image | – | – |\n`,
  );
  const per = (t: Target, f: (c: Cell) => number): number[] => (cells.get(t) ?? []).map(f);
  const ratios = (a: number[], b: number[]): number[] => a.map((x, i) => x / (b[i] ?? NaN));
  const diffs = (a: number[], b: number[]): number[] => a.map((x, i) => x - (b[i] ?? NaN));
  const ms = (values: number[]): string => spread(values, 1000, 2);
  const beyondFloor = (server: Target, floor: Target): string =>
    ms(
      diffs(
        diffs(
          per(server, (c) => c.cpu),
          rawCpu,
        ),
        per(floor, (c) => c.cpu),
      ),
    );
  const httpOf = (g: Target): Target => (g === 'grpcV8' ? 'httpV8' : 'http');
  const lines = (['grpc', 'grpcWin', 'grpcV8'] as const).map(
    (g) =>
      `${LABEL[g]} / ${LABEL[httpOf(g)]} throughput (per round): ${spread(
        ratios(
          per(g, (c) => c.rps),
          per(httpOf(g), (c) => c.rps),
        ),
        1,
        2,
      )} (goal ≥ 0.95); ` +
      `server CPU per request − HTTP's: ${ms(
        diffs(
          per(g, (c) => c.cpu),
          per(httpOf(g), (c) => c.cpu),
        ),
      )} ms (goal ≤ 0.3)\n`,
  );
  process.stdout.write(
    `\n${lines.join('')}` +
      `bare grpc-js − bare node:http CPU per request: ${ms(
        diffs(
          per('bareGrpc', (c) => c.cpu),
          per('bareHttp', (c) => c.cpu),
        ),
      )} ms; ` +
      `with 4/16 MiB windows ${ms(
        diffs(
          per('bareGrpcWin', (c) => c.cpu),
          per('bareHttp', (c) => c.cpu),
        ),
      )} ms\n` +
      `server beyond compute − its floor: HTTP ${beyondFloor('http', 'bareHttp')} ms, gRPC ${beyondFloor('grpc', 'bareGrpc')} ms, ` +
      `gRPC with 4/16 MiB windows ${beyondFloor('grpcWin', 'bareGrpcWin')} ms\n` +
      `load average at end ${loadAverage()}\n`,
  );
}
