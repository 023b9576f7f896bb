/**
 * `node --import tsx bench/profile.ts` (packages/server): one server variant of the ONNX suite under
 * one load, for profiling rather than tables. The server (food model, no batching, 1 instance in its
 * worker thread, unless `--batching` / `--instances=N`) runs in a child process started with
 * `--node-flags` (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`); during the measured window it reports
 * the CPU time of every server thread (`/proc/<pid>/task/<tid>/stat`, by thread name), the server's
 * own compute statistics and the time beyond compute (server-side: the statistics' success
 * duration minus compute_infer; client-side: mean latency minus compute_infer), VmRSS over time
 * (first and last tenth, maximum, VmHWM) and the child's `process.memoryUsage()` (rss, heap,
 * external, arrayBuffers), then raw onnxruntime-node (1 session, 1 thread, batch 1) in this process
 * for the same-run floor and the ratio of server CPU per request to raw CPU per image.
 *
 * Options: `--concurrency=N` (1), `--seconds=S` (10; the 10-minute flatness run is 600),
 * `--warmup=S` (2), `--batching`, `--instances=N` (1), `--node-flags="…"`, `--raw-seconds=S` (5; 0
 * skips the raw floor), `--main` (sessions on the main thread), `--bare` (the bare `node:http` floor instead of the server),
 * `--simple` (Triton's `simple` model as the simple suite sends it, its own config; no raw floor),
 * `--trace` (every request traced, Triton's TIMESTAMPS level, into a temporary trace file: per-request
 * medians of each span from the body's arrival to the response, see `trace-breakdown.ts`). Extra
 * environment for the server (e.g. `MALLOC_ARENA_MAX=2`) passes through from this process;
 * `PROFILE_DIAG_FILE` keeps the child's other stdout lines (e.g. `--trace-gc`) of the window.
 */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

import { benchDir, fmt, ownCpuSeconds, repoRoot } from './common.js';
import { buildInferBody, runLoad } from './load.js';
import { RawOrt } from './raw-ort.js';
import { simpleBody } from './simple-suite.js';
import { traceBreakdown } from './trace-breakdown.js';
import { writeTestModelRepository } from '../src/testing/index.js';

const arg = (name: string, fallback: string): string =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const concurrency = Number(arg('concurrency', '1'));
const seconds = Number(arg('seconds', '10'));
const warmup = Number(arg('warmup', '2'));
const rawSeconds = process.argv.includes('--simple') ? 0 : Number(arg('raw-seconds', '5'));
const instances = Number(arg('instances', '1'));
const batching = process.argv.includes('--batching');
/** `--bare`: the bare `node:http` floor (bench/bare-http-child.ts) instead of the server. */
const bare = process.argv.includes('--bare');
/** `--main`: the sessions on the main thread (server-child.ts `main`) instead of worker threads. */
const hosting = process.argv.includes('--main') ? 'main' : 'worker';
const nodeFlags = arg('node-flags', '')
  .split(' ')
  .filter((f) => f.length > 0);

/** `--simple`: the `simple` model (simple-suite.ts's request) instead of the food model. */
const simple = process.argv.includes('--simple');
/** `--trace`: the server traces every request; the spans' medians are printed after the window. */
const traced = process.argv.includes('--trace');
const MODEL = simple ? 'simple' : 'food_classifier_onnx';
const DIMS = [3, 224, 224];
const modelPath = path.join(repoRoot, 'models_staging', MODEL, '1', 'model.onnx');

function threadTimes(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(`${name}#${tid}`, (Number(f[11]) + Number(f[12])) / 100);
    } catch {
      // thread gone
    }
  }
  return out;
}

function vm(pid: number, key: string): number {
  const m = new RegExp(`^${key}:\\s+(\\d+)\\s+kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? NaN) / 1024;
}

interface Stats {
  success: number;
  /** Summed request durations of the successes (the core's request time, from arrival). */
  successNs: number;
  computeInfer: number;
  computeInput: number;
  computeOutput: number;
  queue: number;
  executions: number;
}

async function stats(port: number): Promise<Stats> {
  const r = (await (await fetch(`http://127.0.0.1:${port}/v2/models/${MODEL}/stats`)).json()) as {
    model_stats: {
      execution_count: number;
      inference_stats: Record<string, { count: number; ns: number }>;
    }[];
  };
  const s = r.model_stats[0];
  const d = (k: string): number => Number(s?.inference_stats[k]?.ns ?? 0);
  return {
    success: Number(s?.inference_stats.success?.count ?? 0),
    successNs: d('success'),
    computeInfer: d('compute_infer'),
    computeInput: d('compute_input'),
    computeOutput: d('compute_output'),
    queue: d('queue'),
    executions: Number(s?.execution_count ?? 0),
  };
}

const root = await mkdtemp(path.join(os.tmpdir(), 'tsprof-'));
const traceFile = traced ? path.join(root, 'trace.json') : undefined;
if (simple) await writeTestModelRepository(root, { only: ['simple'] });
else await mkdir(path.join(root, MODEL, '1'), { recursive: true });
if (!simple) await copyFile(modelPath, path.join(root, MODEL, '1', 'model.onnx'));
if (!simple)
  await writeFile(
    path.join(root, MODEL, 'config.pbtxt'),
    [
      `name: "${MODEL}"`,
      'backend: "onnxruntime"',
      'max_batch_size: 16',
      `input [ { name: "input" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [ 3, 224, 224 ] } ]`,
      `output [ { name: "output" data_type: TYPE_FP32 dims: [ 11 ] } ]`,
      `instance_group [ { count: ${instances} kind: KIND_CPU } ]`,
      batching
        ? 'dynamic_batching { preferred_batch_size: [ 4, 8, 16 ] max_queue_delay_microseconds: 2000 }'
        : '',
      'parameters: { key: "intra_op_thread_count" value: { string_value: "1" } }',
      'parameters: { key: "inter_op_thread_count" value: { string_value: "1" } }',
      '',
    ].join('\n'),
  );

const child = spawn(
  process.execPath,
  [
    ...nodeFlags,
    '--import',
    'tsx',
    ...(bare
      ? [path.join(benchDir, 'bare-http-child.ts')]
      : [path.join(benchDir, 'server-child.ts'), root, hosting]),
  ],
  {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      BENCH_MEMORY_USAGE: '1',
      ...(traceFile !== undefined ? { BENCH_TRACE_FILE: traceFile } : {}),
    },
  },
);
const memoryLines: string[] = [];
createInterface({ input: child.stderr }).on('line', (line) => {
  if (line.startsWith('memoryUsage ')) memoryLines.push(line);
  else process.stderr.write(`${line}\n`);
});
const exited = new Promise((resolve) => child.once('exit', resolve));
// Other stdout lines are the child's own diagnostics (e.g. `--trace-gc`), counted in the window.
let measuring = false;
const gcLines: string[] = [];
const port = await new Promise<number>((resolve, reject) => {
  createInterface({ input: child.stdout }).on('line', (l) => {
    if (l.startsWith('{"port"')) resolve((JSON.parse(l) as { port: number }).port);
    else if (measuring) gcLines.push(l);
  });
  child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
});
const pid = child.pid ?? -1;

const image = new Float32Array(DIMS.reduce((a, b) => a * b, 1)).map(() => Math.random());
const body = simple ? simpleBody() : buildInferBody('input', 'output', DIMS, image);

let t0: Map<string, number> | undefined;
let t1: Map<string, number> | undefined;
let s0: Promise<Stats> | undefined;
let s1: Promise<Stats> | undefined;
let c0 = 0;
let c1 = 0;
const rss: number[] = [];
const sampler = setInterval(() => rss.push(vm(pid, 'VmRSS')), 1000);
const latencies: number[] = [];
let serverCpuMs = NaN;
const windowUs: number[] = [];
let ended = false;
function window(edge: 'start' | 'end'): void {
  measuring = edge === 'start';
  // On the monotonic clock of .cpuprofile timestamps (µs), to cut profiles to the window.
  windowUs.push(Number(process.hrtime.bigint() / 1000n));
  if (edge === 'start') {
    t0 = threadTimes(pid);
    c0 = ownCpuSeconds();
    if (!bare) s0 = stats(port);
  } else {
    ended = true;
    t1 = threadTimes(pid);
    c1 = ownCpuSeconds();
    if (!bare) s1 = stats(port);
  }
}
const result = await runLoad({
  port,
  model: MODEL,
  body,
  concurrency,
  warmupMs: warmup * 1000,
  durationMs: seconds * 1000,
  onLatency: (ms) => latencies.push(ms),
  onWindow: (edge) => window(edge),
});
// The end timer can lose the race with the last request's completion.
if (!ended) window('end');
clearInterval(sampler);
process.stdout.write(`window (monotonic µs): ${windowUs.join(' ')}\n`);
const [a, b] = [await s0, await s1];
const n = result.requests;
const mean = latencies.reduce((x, y) => x + y, 0) / Math.max(1, latencies.length);
process.stdout.write(
  `c=${concurrency} ${fmt(result.rps)} req/s p50 ${fmt(result.p50Ms, 3)} ms mean ${fmt(mean, 3)} ms p99 ${fmt(result.p99Ms, 3)} ms errors ${result.errors}\n`,
);
if (a !== undefined && b !== undefined) {
  const k = b.success - a.success;
  const per = (x: number): number => x / Math.max(1, k) / 1e6;
  const infer = per(b.computeInfer - a.computeInfer);
  process.stdout.write(
    `server stats over ${k} requests, ${b.executions - a.executions} executions: queue ${fmt(per(b.queue - a.queue), 3)} ms, ` +
      `compute_input ${fmt(per(b.computeInput - a.computeInput), 3)} ms, compute_infer ${fmt(infer, 3)} ms, ` +
      `compute_output ${fmt(per(b.computeOutput - a.computeOutput), 3)} ms\n` +
      `time beyond compute: server-side (success duration - compute_infer, statistics) ${fmt((per(b.successNs - a.successNs) - infer) * 1000, 0)} µs; ` +
      `client-side (mean latency - compute_infer) ${fmt((mean - infer) * 1000, 0)} µs; ` +
      `(p50 - compute_infer): ${fmt((result.p50Ms - infer) * 1000, 0)} µs\n`,
  );
}
if (t0 !== undefined && t1 !== undefined) {
  let total = 0;
  const rows: [string, number][] = [];
  for (const [name, end] of t1) {
    const d = end - (t0.get(name) ?? 0);
    total += d;
    if (d > 0) rows.push([name, d]);
  }
  rows.sort((x, y) => y[1] - x[1]);
  // The busiest thread is the onnxruntime instance's (its worker, or the main thread when hosted there).
  const busiest = rows[0]?.[1] ?? 0;
  serverCpuMs = (total / n) * 1000;
  process.stdout.write(
    `server CPU per request ${fmt(serverCpuMs, 3)} ms, of which beyond the busiest (onnxruntime) thread ${fmt(((total - busiest) / n) * 1000, 3)} ms; by thread (ms/req):\n`,
  );
  for (const [name, d] of rows) process.stdout.write(`  ${name.padEnd(28)} ${fmt((d / n) * 1000, 3)}\n`);
  process.stdout.write(`load generator CPU per request ${fmt(((c1 - c0) / n) * 1000, 3)} ms\n`);
}
const tenth = Math.max(1, Math.floor(rss.length / 10));
const avg = (xs: readonly number[]): number => xs.reduce((x, y) => x + y, 0) / Math.max(1, xs.length);
process.stdout.write(
  `VmRSS MiB: first tenth of the run ${fmt(avg(rss.slice(0, tenth)), 0)}, last tenth ${fmt(avg(rss.slice(-tenth)), 0)}, ` +
    `max ${fmt(Math.max(...rss), 0)}; VmHWM ${fmt(vm(pid, 'VmHWM'), 0)}\n` +
    (rss.length <= 30 ? `VmRSS MiB per second: ${rss.map((r) => fmt(r, 0)).join(' ')}\n` : ''),
);
if (gcLines.length > 0) {
  const kinds = new Map<string, number>();
  for (const l of gcLines) {
    const isolate = /^\[\d+:(0x[0-9a-f]+)\]/.exec(l)?.[1] ?? '';
    const k = `${isolate} ${/(Scavenge|Mark-Compact|Mark-sweep|Minor Mark-Compact)/.exec(l)?.[1] ?? 'other'}`;
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  }
  process.stdout.write(
    `child diagnostics lines in the window: ${[...kinds].map(([k, v]) => `${k} ${v}`).join(', ')}; last: ${gcLines.at(-1)}\n`,
  );
  if (process.env.PROFILE_DIAG_FILE !== undefined)
    writeFileSync(process.env.PROFILE_DIAG_FILE, gcLines.join('\n'));
}
for (const line of memoryLines.slice(-3)) process.stdout.write(`${line}\n`);
child.kill('SIGTERM');
await exited;
if (traceFile !== undefined && windowUs.length === 2) {
  // The server writes its trace file out as it shuts down.
  const [from, to] = windowUs.map((u) => BigInt(u) * 1000n) as [bigint, bigint];
  const { requests, spans } = traceBreakdown(traceFile, from, to);
  process.stdout.write(
    `trace spans over the ${requests} requests started in the window (µs): p50 / p90 / mean\n`,
  );
  for (const s of spans)
    process.stdout.write(`  ${s.span.padEnd(66)} ${fmt(s.p50, 0)} / ${fmt(s.p90, 0)} / ${fmt(s.mean, 0)}\n`);
}
await rm(root, { recursive: true, force: true });

if (rawSeconds > 0) {
  const raw = await RawOrt.create({ modelPath, input: 'input', dims: DIMS, intraOpThreads: 1 });
  const cpu0 = ownCpuSeconds();
  const r = await raw.measureRun(1, rawSeconds * 1000);
  const cpu = ownCpuSeconds() - cpu0;
  process.stdout.write(
    `raw onnxruntime 1x1 batch 1: ${fmt(r.images / r.seconds)} img/s, ${fmt((cpu / r.images) * 1000, 3)} CPU ms/img, ` +
      `${fmt((r.seconds / r.images) * 1000, 3)} wall ms/img; server CPU per request / raw CPU per image ${fmt(serverCpuMs / ((cpu / r.images) * 1000), 2)}\n`,
  );
  await raw.release();
}
