/**
 * `npm run bench` (packages/client): in one run,
 *  1. binary vs JSON encode+decode of one [1,3,224,224] FP32 request and its [1,11] response
 *     (`codec.ts`);
 *  2. HTTP vs gRPC inferences per second through `TritonClient` against the embedded server (its own
 *     process, 127.0.0.1, free ports): Triton's `simple` (INT32 [1,16] × 2) at concurrency 1 and 16
 *     and the food model's FP32 [1,3,224,224] request at concurrency 1 and 8; `ModelStreamInfer`
 *     with 16 (simple) or 8 (food) requests in flight on one stream; and, as floors, the same
 *     requests encoded once and sent by a bare undici `Pool` and a bare @grpc/grpc-js channel
 *     (unary and streaming) that do not decode the answers.
 *     For every cell: requests/s, latency, CPU per call of this process (the client) and of the
 *     server process (/proc/<pid>/stat).
 * The host is shared, so the cells are interleaved: each round measures every cell for a short
 * window; the table gives the median over rounds, and the ratios compare those medians.
 * Env: BENCH_SECONDS (per window, default 2), BENCH_WARMUP_SECONDS (default 0.5), BENCH_ROUNDS
 * (default 3), BENCH_ONLY (comma-separated substrings of cell ids, e.g. `simple/grpc`; skips the
 * codec part), BENCH_JSON (result file; default <tmpdir>/tritonserver-ts-client-bench.json).
 * BENCH_SUITE=decoupled runs `decoupled.ts` instead: a decoupled model's events over HTTP
 * generate_stream against the gRPC stream.
 */
import { writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connections, callersFor, foodWorkload, simpleWorkload, type Callers } from './cells.js';
import { measureCodec, type CodecResult } from './codec.js';
import { measurementOrder, pairedRatios, type PairedRatio } from './paired.js';
import { loadAverage, measureClosedLoop, measureStream, median, type Window } from './measure.js';
import { ensureBuilt, startServerChild } from './server.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 2);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 0.5);
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const only = process.env.BENCH_ONLY?.split(',').filter((s) => s !== '');
const jsonPath = process.env.BENCH_JSON ?? join(tmpdir(), 'tritonserver-ts-client-bench.json');

type CallerName = keyof Callers;
const CALLERS: readonly CallerName[] = [
  'httpClient',
  'httpFloor',
  'grpcClient',
  'grpcFloor',
  'grpcStream',
  'grpcStreamFloor',
];
const isStream = (c: CallerName): boolean => c === 'grpcStream' || c === 'grpcStreamFloor';

/** Workloads with their concurrencies (closed loop) and stream window (requests in flight). */
const PLAN = [
  { workload: simpleWorkload(), concurrency: [1, 16], window: 16 },
  { workload: foodWorkload(), concurrency: [1, 8], window: 8 },
];

interface Cell {
  readonly id: string;
  readonly workload: string;
  readonly caller: CallerName;
  /** Closed-loop callers, or requests in flight on the stream. */
  readonly concurrency: number;
  readonly windows: Window[];
}

interface Summary {
  readonly id: string;
  readonly workload: string;
  readonly caller: CallerName;
  readonly concurrency: number;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly clientCpuUsPerCall: number;
  readonly serverCpuUsPerCall: number;
  readonly windows: Window[];
}

function summarise(cell: Cell): Summary {
  const w = cell.windows;
  return {
    id: cell.id,
    workload: cell.workload,
    caller: cell.caller,
    concurrency: cell.concurrency,
    rps: median(w.map((x) => x.calls / x.seconds)),
    p50Ms: median(w.map((x) => x.p50Ms ?? NaN)),
    p99Ms: median(w.map((x) => x.p99Ms ?? NaN)),
    clientCpuUsPerCall: median(w.map((x) => (x.clientCpu / x.calls) * 1e6)),
    serverCpuUsPerCall: median(w.map((x) => (x.serverCpu / x.calls) * 1e6)),
    windows: w,
  };
}

const fmt = (v: number, digits = 0): string => (Number.isFinite(v) ? v.toFixed(digits) : '–');

function printCodec(codec: CodecResult): void {
  const speedUp = codec.jsonMs / codec.binaryMs;
  console.log('| codec: [1,3,224,224] FP32 request + [1,11] response, encode+decode both ends | median |');
  console.log('| --- | ---: |');
  console.log(`| binary | ${codec.binaryMs.toFixed(3)} ms (${codec.binaryIterations} runs) |`);
  console.log(`| JSON | ${codec.jsonMs.toFixed(2)} ms (${codec.jsonIterations} runs) |`);
  console.log(`| binary speed-up over JSON (goal ≥ 10×) | ${speedUp.toFixed(0)}× |\n`);
}

function printCells(summaries: readonly Summary[]): void {
  console.log(
    '| workload | caller | concurrency / in flight | req/s | p50 ms | p99 ms | client CPU µs/call | server CPU µs/call |',
  );
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const s of summaries) {
    console.log(
      `| ${s.workload} | ${s.caller} | ${s.concurrency} | ${fmt(s.rps)} | ${fmt(s.p50Ms, 2)} | ${fmt(s.p99Ms, 2)} | ${fmt(s.clientCpuUsPerCall)} | ${fmt(s.serverCpuUsPerCall)} |`,
    );
  }
}

interface Ratios {
  /** `simple`, `food`, or `… stream` (gRPC over ModelStreamInfer, HTTP unary at the same concurrency). */
  readonly workload: string;
  readonly concurrency: number;
  readonly grpcOverHttpRps: number;
  readonly grpcOverHttpClientCpu: number;
  readonly httpClientOverFloorCpu: number;
  readonly grpcClientOverFloorCpu: number;
  readonly httpClientOverFloorRps: number;
  readonly grpcClientOverFloorRps: number;
  /** Stream rows: stream req/s ÷ unary gRPC req/s at the same concurrency. */
  readonly streamOverUnaryRps: number | undefined;
}

function ratiosOf(summaries: readonly Summary[]): Ratios[] {
  const value = (workload: string, caller: CallerName, n: number, pick: (s: Summary) => number): number => {
    const s = summaries.find((x) => x.workload === workload && x.caller === caller && x.concurrency === n);
    return s === undefined ? NaN : pick(s);
  };
  const rps = (s: Summary): number => s.rps;
  const cpu = (s: Summary): number => s.clientCpuUsPerCall;
  const out: Ratios[] = [];
  for (const { workload, concurrency, window } of PLAN) {
    const k = workload.key;
    const rows: { label: string; n: number; grpc: CallerName; floor: CallerName }[] = [
      ...concurrency.map((n) => ({ label: k, n, grpc: 'grpcClient' as const, floor: 'grpcFloor' as const })),
      { label: `${k} stream`, n: window, grpc: 'grpcStream', floor: 'grpcStreamFloor' },
    ];
    for (const { label, n, grpc, floor } of rows) {
      const stream = grpc === 'grpcStream';
      out.push({
        workload: label,
        concurrency: n,
        grpcOverHttpRps: value(k, grpc, n, rps) / value(k, 'httpClient', n, rps),
        grpcOverHttpClientCpu: value(k, grpc, n, cpu) / value(k, 'httpClient', n, cpu),
        httpClientOverFloorCpu: value(k, 'httpClient', n, cpu) / value(k, 'httpFloor', n, cpu),
        grpcClientOverFloorCpu: value(k, grpc, n, cpu) / value(k, floor, n, cpu),
        httpClientOverFloorRps: value(k, 'httpClient', n, rps) / value(k, 'httpFloor', n, rps),
        grpcClientOverFloorRps: value(k, grpc, n, rps) / value(k, floor, n, rps),
        streamOverUnaryRps: stream ? value(k, grpc, n, rps) / value(k, 'grpcClient', n, rps) : undefined,
      });
    }
  }
  return out;
}

function printPairedRatios(paired: readonly PairedRatio[]): void {
  if (paired.length === 0) return;
  console.log('\n| client CPU per call ÷ its floor, paired by round | median | min – max |');
  console.log('| --- | ---: | ---: |');
  for (const p of paired) {
    console.log(`| ${p.label} | ${p.median.toFixed(2)}× | ${p.min.toFixed(2)}× – ${p.max.toFixed(2)}× |`);
  }
}

function printRatios(ratios: readonly Ratios[]): void {
  console.log(
    '\n| workload | concurrency | gRPC/HTTP req/s | gRPC/HTTP client CPU per call | HTTP client/floor CPU | gRPC client/floor CPU | HTTP client/floor req/s | gRPC client/floor req/s | stream/unary gRPC req/s |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  const x = (v: number | undefined): string =>
    v !== undefined && Number.isFinite(v) ? `${v.toFixed(2)}×` : '–';
  for (const r of ratios) {
    console.log(
      `| ${r.workload} | ${r.concurrency} | ${x(r.grpcOverHttpRps)} | ${x(r.grpcOverHttpClientCpu)} | ${x(r.httpClientOverFloorCpu)} | ${x(r.grpcClientOverFloorCpu)} | ${x(r.httpClientOverFloorRps)} | ${x(r.grpcClientOverFloorRps)} | ${x(r.streamOverUnaryRps)} |`,
    );
  }
  console.log(
    '(stream rows: gRPC = one ModelStreamInfer stream with N requests in flight, its floor a bare grpc-js stream; HTTP = unary at concurrency N)',
  );
}

async function main(): Promise<void> {
  const started = new Date().toISOString();
  const loadAtStart = loadAverage();
  const codec = only === undefined ? measureCodec() : undefined;

  ensureBuilt();
  const server = await startServerChild();
  const connections = new Connections(server.url, server.grpcUrl);
  const cells: Cell[] = [];
  try {
    const runs: { cell: Cell; measure: () => Promise<Window> }[] = [];
    for (const { workload, concurrency, window } of PLAN) {
      const callers = callersFor(connections, workload);
      for (const { caller, n } of measurementOrder(CALLERS, concurrency, window, isStream)) {
        {
          const id = `${workload.key}/${caller}/${n}`;
          if (only !== undefined && !only.some((o) => id.includes(o))) continue;
          const cell: Cell = { id, workload: workload.key, caller, concurrency: n, windows: [] };
          cells.push(cell);
          const fn = callers[caller];
          runs.push({
            cell,
            measure: isStream(caller)
              ? () => measureStream(fn as Callers['grpcStream'], n, seconds, warmupSeconds, server.pid)
              : () => measureClosedLoop(fn as Callers['httpClient'], n, seconds, warmupSeconds, server.pid),
          });
        }
      }
    }
    // One untimed pass first: both processes' JIT tiers settle before round 1 (a cold first round
    // used to cost up to 2× the CPU per call of the later ones).
    for (const { cell, measure } of runs) {
      await measure();
      process.stderr.write(`warm-up ${cell.id}\n`);
    }
    for (let round = 1; round <= rounds; round++) {
      for (const { cell, measure } of runs) {
        const w = await measure();
        cell.windows.push(w);
        process.stderr.write(
          `round ${round}/${rounds} ${cell.id}: ${fmt(w.calls / w.seconds)} req/s, client ${fmt((w.clientCpu / w.calls) * 1e6)} µs/call\n`,
        );
      }
    }
  } finally {
    await connections.close();
    await server.stop();
  }

  const summaries = cells.map(summarise);
  const ratios = ratiosOf(summaries);
  const loadAtEnd = loadAverage();
  console.log(
    `\n@tritonserver-ts/client benchmark (Node ${process.version}, ${started}, ${availableParallelism()} cores, load average ${loadAtStart} at start, ${loadAtEnd} at end; median of ${rounds} rounds of ${seconds} s)\n`,
  );
  if (codec !== undefined) printCodec(codec);
  printCells(summaries);
  printRatios(ratios);
  const paired = pairedRatios(summaries);
  printPairedRatios(paired);
  writeFileSync(
    jsonPath,
    `${JSON.stringify(
      {
        started,
        node: process.version,
        cores: availableParallelism(),
        loadAverage: { start: loadAtStart, end: loadAtEnd },
        settings: { seconds, warmupSeconds, rounds, only },
        codec,
        cells: summaries,
        ratios,
        paired,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nJSON: ${jsonPath}`);
}

if (process.env.BENCH_SUITE === 'decoupled') {
  const { runDecoupledSuite } = await import('./decoupled.js');
  await runDecoupledSuite();
} else {
  await main();
}
