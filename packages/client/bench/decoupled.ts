/**
 * `BENCH_SUITE=decoupled npm run bench` (packages/client): a decoupled model's responses over HTTP
 * `generate_stream` (Server-Sent Events, `client.generateStream`) against the gRPC stream
 * (`ModelStreamInfer`, the client's `openStream().inferAll`) on the same model in the same run:
 * events per second and the server process's CPU per event, and their ratios.
 *
 * The model is the server's test model `py_decoupled` (Python backend, /usr/bin/python3): IN = n →
 * n responses OUT = i from a thread, then the final flag. Each request asks for BENCH_EVENTS
 * responses (default 200); BENCH_CONCURRENCY (default `1,4`) requests run at once, each caller on
 * its own HTTP request or its own gRPC stream. The server's CPU is its own process's (/proc), not
 * the Python stub's, which does the same work for both wires. Cells are interleaved round by round
 * (BENCH_ROUNDS, default 3, of BENCH_SECONDS, default 2, after BENCH_WARMUP_SECONDS, default 0.5),
 * medians reported. BENCH_JSON: result file (default <tmpdir>/tritonserver-ts-client-bench-decoupled.json).
 */
import { writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { TritonClient } from '../src/index.js';
import { createGrpcClient } from '../src/grpc/index.js';
import { loadAverage, measureClosedLoop, median, type Call, type Window } from './measure.js';
import { ensureBuilt, startServerChild } from './server.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 2);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 0.5);
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const events = Math.max(1, Number(process.env.BENCH_EVENTS ?? 200));
const concurrencies = (process.env.BENCH_CONCURRENCY ?? '1,4')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const jsonPath = process.env.BENCH_JSON ?? join(tmpdir(), 'tritonserver-ts-client-bench-decoupled.json');

const MODEL = 'py_decoupled';

type Wire = 'httpGenerateStream' | 'grpcStream';

interface Cell {
  readonly id: string;
  readonly wire: Wire;
  readonly concurrency: number;
  readonly windows: Window[];
}

/** One request of `events` responses over HTTP generate_stream, every event read and counted. */
function httpCaller(client: TritonClient): Call {
  return async () => {
    let seen = 0;
    for await (const response of client.generateStream(MODEL, { IN: events })) {
      if (response.values.OUT !== seen)
        throw new Error(`event ${seen} carried OUT = ${String(response.values.OUT)}`);
      seen++;
    }
    if (seen !== events) throw new Error(`generate_stream gave ${seen} events, not ${events}`);
  };
}

/** One request of `events` responses on this caller's own gRPC stream. */
function grpcCaller(grpc: ReturnType<typeof createGrpcClient>): Call {
  let stream: ReturnType<(typeof grpc)['transport']['openStream']> | undefined;
  const input = [{ name: 'IN', datatype: 'INT32' as const, shape: [1], data: Int32Array.of(events) }];
  return async () => {
    stream ??= grpc.transport.openStream();
    const responses = await stream.inferAll(MODEL, input);
    // n responses and the empty final one.
    if (responses.length !== events + 1) throw new Error(`the stream gave ${responses.length - 1} responses`);
  };
}

/**
 * One call function over `concurrency` callers made by `make` (each gRPC caller has its own
 * stream): measureClosedLoop runs `concurrency` loops over it, and each call takes an idle caller
 * and gives it back when done, so no two loops share a caller at once.
 */
function closedLoopOf(make: () => Call, concurrency: number): Call {
  const idle = Array.from({ length: concurrency }, make);
  return async () => {
    const caller = idle.pop();
    if (caller === undefined) throw new Error('more loops than callers');
    try {
      await caller();
    } finally {
      idle.push(caller);
    }
  };
}

function summarise(cell: Cell) {
  const w = cell.windows;
  return {
    id: cell.id,
    wire: cell.wire,
    concurrency: cell.concurrency,
    eventsPerSecond: median(w.map((x) => (x.calls * events) / x.seconds)),
    serverCpuUsPerEvent: median(w.map((x) => (x.serverCpu / (x.calls * events)) * 1e6)),
    clientCpuUsPerEvent: median(w.map((x) => (x.clientCpu / (x.calls * events)) * 1e6)),
    windows: w,
  };
}

const fmt = (v: number, digits = 0): string => (Number.isFinite(v) ? v.toFixed(digits) : '–');

/** Runs the suite and prints its tables. */
export async function runDecoupledSuite(): Promise<void> {
  const started = new Date().toISOString();
  const loadAtStart = loadAverage();
  ensureBuilt();
  const server = await startServerChild({ decoupled: true });
  const http = new TritonClient({ url: server.url, timeoutMs: 0 });
  const grpc = createGrpcClient({ url: server.grpcUrl });
  const cells: Cell[] = [];
  try {
    const runs: { cell: Cell; call: Call }[] = [];
    for (const n of concurrencies) {
      // gRPC: one stream per caller, kept across calls (as a client holding a stream open would).
      for (const [wire, call] of [
        ['httpGenerateStream', closedLoopOf(() => httpCaller(http), n)],
        ['grpcStream', closedLoopOf(() => grpcCaller(grpc), n)],
      ] as const) {
        const cell: Cell = { id: `${MODEL}/${wire}/${n}`, wire, concurrency: n, windows: [] };
        cells.push(cell);
        runs.push({ cell, call });
      }
    }
    for (let round = 1; round <= rounds; round++) {
      for (const { cell, call } of runs) {
        const w = await measureClosedLoop(call, cell.concurrency, seconds, warmupSeconds, server.pid);
        cell.windows.push(w);
        process.stderr.write(
          `round ${round}/${rounds} ${cell.id}: ${fmt((w.calls * events) / w.seconds)} events/s, server ${fmt((w.serverCpu / (w.calls * events)) * 1e6, 1)} µs/event\n`,
        );
      }
    }
  } finally {
    await http.close();
    await grpc.close();
    await server.stop();
  }
  const summaries = cells.map(summarise);
  const loadAtEnd = loadAverage();
  console.log(
    `\n@tritonserver-ts/client decoupled benchmark (Node ${process.version}, ${started}, ${availableParallelism()} cores, load average ${loadAtStart} at start, ${loadAtEnd} at end; ${events} events per request; median of ${rounds} rounds of ${seconds} s)\n`,
  );
  console.log('| wire | concurrent requests | events/s | server CPU µs/event | client CPU µs/event |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  for (const s of summaries) {
    console.log(
      `| ${s.wire} | ${s.concurrency} | ${fmt(s.eventsPerSecond)} | ${fmt(s.serverCpuUsPerEvent, 1)} | ${fmt(s.clientCpuUsPerEvent, 1)} |`,
    );
  }
  const ratios = concurrencies.map((n) => {
    const of = (wire: Wire) => summaries.find((s) => s.wire === wire && s.concurrency === n);
    const h = of('httpGenerateStream');
    const g = of('grpcStream');
    return {
      concurrency: n,
      eventsPerSecondHttpOverGrpc: (h?.eventsPerSecond ?? NaN) / (g?.eventsPerSecond ?? NaN),
      serverCpuPerEventHttpOverGrpc: (h?.serverCpuUsPerEvent ?? NaN) / (g?.serverCpuUsPerEvent ?? NaN),
    };
  });
  console.log(
    '\n| concurrent requests | generate_stream ÷ gRPC stream events/s | generate_stream ÷ gRPC stream server CPU per event |',
  );
  console.log('| ---: | ---: | ---: |');
  for (const r of ratios) {
    console.log(
      `| ${r.concurrency} | ${fmt(r.eventsPerSecondHttpOverGrpc, 2)}× | ${fmt(r.serverCpuPerEventHttpOverGrpc, 2)}× |`,
    );
  }
  writeFileSync(
    jsonPath,
    `${JSON.stringify(
      {
        started,
        node: process.version,
        cores: availableParallelism(),
        loadAverage: { start: loadAtStart, end: loadAtEnd },
        settings: { seconds, warmupSeconds, rounds, events, concurrencies },
        cells: summaries,
        ratios,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nJSON: ${jsonPath}`);
}
