/**
 * The `perf-analyzer-ts` bin end to end: the real bin (node bin/perf-analyzer-ts.js, which runs
 * dist/cli/perf-cli.js: build it first with `npx tsc -p packages/perf/tsconfig.build.json`) against
 * the embedded server in this process, on the generated `simple` model (INT32 [16] add/sub).
 * Checks perf_analyzer's stdout sections, the -f CSV and the --profile-export-file JSON, exit codes
 * for usage errors and failures, and Ctrl+C reporting what was measured.
 *
 * Timing: windows are short (-p 300) with a wide stability band (-s 100) so levels settle in three
 * windows on a loaded machine; run under `flock /tmp/bench.lock` with the other timing tests.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startEmbedded, type Embedded } from './helpers/embedded.js';

const BIN = fileURLToPath(new URL('../bin/perf-analyzer-ts.js', import.meta.url));

let embedded: Embedded;
let out: string;

beforeAll(async () => {
  embedded = await startEmbedded({ testModels: ['simple'] });
  out = await mkdtemp(join(tmpdir(), 'perf-cli-'));
});

afterAll(async () => {
  await embedded?.close();
  if (out !== undefined) await rm(out, { recursive: true, force: true });
});

interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the bin; `onStderr` sees stderr as it arrives (to send Ctrl+C at the right moment). */
function perfAnalyzer(
  args: readonly string[],
  onStderr?: (text: string, pid: number) => void,
): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (child.pid !== undefined) onStderr?.(stderr, child.pid);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const hostPort = (url: string): string => url.replace(/^http:\/\//, '');

const CSV_HEADER = [
  'Concurrency',
  'Inferences/Second',
  'Client Send',
  'Network+Server Send/Recv',
  'Server Queue',
  'Server Compute Input',
  'Server Compute Infer',
  'Server Compute Output',
  'Client Recv',
  'p50 latency',
  'p90 latency',
  'p95 latency',
  'p99 latency',
  'Avg latency',
  'request/response',
  'response wait',
];

describe('perf-analyzer-ts against the embedded server', () => {
  it('HTTP sweep 1:2: perf_analyzer console sections, CSV and profile export', async () => {
    const csvFile = join(out, 'http.csv');
    const jsonFile = join(out, 'http.json');
    const before = Date.now();
    const result = await perfAnalyzer([
      '-m',
      'simple',
      '-u',
      hostPort(embedded.url),
      '--concurrency-range',
      '1:2',
      '-p',
      '300',
      '-s',
      '100',
      '-f',
      csvFile,
      '--verbose-csv',
      '--profile-export-file',
      jsonFile,
    ]);
    const after = Date.now();
    expect(result.stderr).not.toContain('error:');
    expect(result.code).toBe(0);
    // Without -v, no per-window Pass lines (the level line is followed by its Client block).
    expect(result.stdout).not.toContain('Pass [');

    const lines = result.stdout.split('\n');
    expect(lines.slice(0, 9)).toEqual([
      '*** Measurement Settings ***',
      '  Batch size: 1',
      '  Service Kind: Triton',
      '  Using "time_windows" mode for stabilization',
      '  Stabilizing using average latency and throughput',
      '  Measurement window: 300 msec',
      '  Latency limit: 0 msec',
      '  Concurrency limit: 2 concurrent requests',
      '  Using synchronous calls for inference',
    ]);
    for (const level of [1, 2]) {
      const at = lines.indexOf(`Request concurrency: ${level}`);
      expect(at).toBeGreaterThan(0);
      expect(lines[at + 1]).toBe('  Client: ');
      expect(lines[at + 2]).toMatch(/^ {4}Request count: [1-9]\d*$/);
      expect(lines[at + 3]).toMatch(/^ {4}Throughput: [\d.e+]+ infer\/sec$/);
      expect(lines[at + 4]).toMatch(/^ {4}Avg latency: \d+ usec \(standard deviation \d+ usec\)$/);
      expect(lines.slice(at + 5, at + 9).map((l) => l.replace(/\d+ usec$/, 'N usec'))).toEqual([
        '    p50 latency: N usec',
        '    p90 latency: N usec',
        '    p95 latency: N usec',
        '    p99 latency: N usec',
      ]);
      expect(lines[at + 9]).toMatch(
        /^ {4}Avg HTTP time: \d+ usec \(send\/recv \d+ usec \+ response wait \d+ usec\)$/,
      );
      expect(lines[at + 10]).toBe('  Server: ');
      expect(lines[at + 11]).toMatch(/^ {4}Inference count: [1-9]\d*$/);
      expect(lines[at + 12]).toMatch(/^ {4}Execution count: [1-9]\d*$/);
      expect(lines[at + 13]).toMatch(/^ {4}Successful request count: [1-9]\d*$/);
      expect(lines[at + 14]).toMatch(
        /^ {4}Avg request latency: \d+ usec \(overhead \d+ usec \+ queue \d+ usec \+ compute input \d+ usec \+ compute infer \d+ usec \+ compute output \d+ usec\)$/,
      );
    }
    const summary = lines.indexOf('Inferences/Second vs. Client Average Batch Latency');
    expect(summary).toBeGreaterThan(lines.indexOf('Request concurrency: 2'));
    expect(lines[summary + 1]).toMatch(/^Concurrency: 1, throughput: [\d.e+]+ infer\/sec, latency \d+ usec$/);
    expect(lines[summary + 2]).toMatch(/^Concurrency: 2, throughput: [\d.e+]+ infer\/sec, latency \d+ usec$/);

    // The CSV: perf_analyzer's verbose header, one row per level sorted by throughput.
    const csv = (await readFile(csvFile, 'utf8')).trimEnd().split('\n');
    expect(csv[0]?.split(',')).toEqual(CSV_HEADER);
    const rows = csv.slice(1).map((row) => row.split(',').map(Number));
    expect(rows).toHaveLength(2);
    expect(rows.map((r) => r[0]).sort()).toEqual([1, 2]);
    for (const row of rows) for (const cell of row) expect(Number.isFinite(cell)).toBe(true);
    expect(rows[0]?.[1] ?? 0).toBeLessThanOrEqual(rows[1]?.[1] ?? 0);
    // The breakdown adds up to the average latency (µs truncation: at most 3 µs short), unless
    // the server accounted for more than the client waited (network column then 0).
    for (const row of rows) {
      const parts = row.slice(2, 9).reduce((a, b) => a + b, 0);
      const avg = row[13] ?? 0;
      if ((row[3] ?? 0) > 0) {
        expect(avg - parts).toBeGreaterThanOrEqual(0);
        expect(avg - parts).toBeLessThanOrEqual(3);
      }
      // Console and CSV agree on the level's latency.
      expect(result.stdout).toContain(`Concurrency: ${row[0]}, throughput: `);
    }

    // The profile export: one experiment per level, epoch-ns timestamps inside the run.
    const doc = JSON.parse(await readFile(jsonFile, 'utf8')) as {
      experiments: {
        experiment: { mode: string; value: number };
        requests: {
          timestamp: number;
          request_inputs: Record<string, unknown>;
          response_timestamps: number[];
        }[];
        window_boundaries: number[];
      }[];
      version: string;
      service_kind: string;
      endpoint: string;
    };
    expect(doc.service_kind).toBe('triton');
    expect(doc.endpoint).toBe('');
    expect(typeof doc.version).toBe('string');
    expect(doc.experiments.map((e) => e.experiment)).toEqual([
      { mode: 'concurrency', value: 1 },
      { mode: 'concurrency', value: 2 },
    ]);
    for (const experiment of doc.experiments) {
      expect(experiment.requests.length).toBeGreaterThan(0);
      // The reported windows (3 when stable), ascending; every request ended inside them.
      expect(experiment.window_boundaries.length).toBeGreaterThanOrEqual(2);
      const bounds = experiment.window_boundaries;
      expect([...bounds].sort((a, b) => a - b)).toEqual(bounds);
      const [first = 0, last = 0] = [bounds[0], bounds[bounds.length - 1]];
      for (const request of experiment.requests) {
        expect(request.timestamp / 1e6).toBeGreaterThanOrEqual(before - 5);
        expect(request.timestamp / 1e6).toBeLessThanOrEqual(after + 5);
        expect(request.response_timestamps).toHaveLength(1);
        expect(request.response_timestamps[0] ?? 0).toBeGreaterThanOrEqual(request.timestamp);
        // ns as JSON numbers lose up to 256 ns of precision on parse: compare in µs.
        expect((request.response_timestamps[0] ?? 0) / 1000).toBeGreaterThanOrEqual(first / 1000 - 1);
        expect((request.response_timestamps[0] ?? 0) / 1000).toBeLessThanOrEqual(last / 1000 + 1);
        expect(Object.keys(request.request_inputs).sort()).toEqual(['INPUT0', 'INPUT1']);
        expect(request.request_inputs['INPUT0']).toHaveLength(16);
      }
    }
  });

  it("-v: perf_analyzer's Pass line per window, numbered, figures that add up; warnings on stderr", async () => {
    const result = await perfAnalyzer([
      '-m',
      'simple',
      '-u',
      hostPort(embedded.url),
      '-p',
      '300',
      '-s',
      '100',
      '-v',
      // A CPU-only server has no GPU families: perf_analyzer's metrics warnings (PerfHooks.onWarning).
      '--collect-metrics',
      '--metrics-url',
      hostPort(embedded.metricsUrl),
      '--metrics-interval',
      '100',
    ]);
    expect(result.stderr).not.toContain('error:');
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("WARNING: Unable to parse 'nv_gpu_utilization' metric.\n");

    const lines = result.stdout.split('\n');
    const at = lines.indexOf('Request concurrency: 1');
    expect(at).toBeGreaterThan(0);
    const PASS =
      /^ {2}Pass \[(\d+)\] throughput: ([\d.e+]+) infer\/sec\. Avg latency: (\d+) usec \(std (\d+) usec\)$/;
    const passes: { n: number; throughput: number; latencyUs: number }[] = [];
    for (let i = at + 1; PASS.test(lines[i] ?? ''); i++) {
      const [, n, throughput, latency] = PASS.exec(lines[i] ?? '') ?? [];
      passes.push({ n: Number(n), throughput: Number(throughput), latencyUs: Number(latency) });
    }
    // At least the 3 windows stability needs, at most -r (10); numbered 1, 2, 3 …; then the Client block.
    expect(passes.length).toBeGreaterThanOrEqual(3);
    expect(passes.length).toBeLessThanOrEqual(10);
    expect(passes.map((p) => p.n)).toEqual(passes.map((_, i) => i + 1));
    expect(lines[at + 1 + passes.length]).toBe('  Client: ');
    for (const pass of passes) {
      // Concurrency 1: one request outstanding at a time, so throughput × latency is at most 1
      // (a little over at the window edges) and, with a fast model, most of the time.
      const busy = pass.throughput * (pass.latencyUs / 1e6);
      expect(busy).toBeGreaterThan(0.2);
      expect(busy).toBeLessThan(1.1);
    }
    // The level merges its last 3 windows: its throughput and average latency lie within theirs
    // (duration- and count-weighted means; the printed figures are rounded).
    const last = passes.slice(-3);
    const throughput = Number(
      /^ {4}Throughput: ([\d.e+]+) infer\/sec$/.exec(lines[at + passes.length + 3] ?? '')?.[1],
    );
    expect(throughput).toBeGreaterThanOrEqual(Math.min(...last.map((p) => p.throughput)) * 0.9999);
    expect(throughput).toBeLessThanOrEqual(Math.max(...last.map((p) => p.throughput)) * 1.0001);
    const avg = lines.find((l) => l.startsWith('    Avg latency: '));
    const avgUs = Number(/(\d+) usec \(standard/.exec(avg ?? '')?.[1]);
    expect(avgUs).toBeGreaterThanOrEqual(Math.min(...last.map((p) => p.latencyUs)) - 1);
    expect(avgUs).toBeLessThanOrEqual(Math.max(...last.map((p) => p.latencyUs)) + 1);
    // -v's other client lines.
    expect(lines).toContainEqual(expect.stringMatching(/^ {4}Avg client overhead: \d+\.\d\d%$/));
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^ {4}Avg HTTP time: \d+ usec \(send \d+ usec \+ response wait \d+ usec \+ receive \d+ usec\)$/,
      ),
    );
  });

  it('gRPC with --request-count: the gRPC client line, a single-window level', async () => {
    const result = await perfAnalyzer([
      '-m',
      'simple',
      '-i',
      'grpc',
      '-u',
      embedded.grpcUrl,
      '--request-count',
      '40',
      '--percentile',
      '95',
    ]);
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines).toContain('  Sending 40 benchmark requests');
    expect(lines).toContain('    Request count: 40');
    expect(lines.some((l) => l.startsWith('    Avg latency'))).toBe(false);
    expect(lines.find((l) => l.includes('Avg gRPC time'))).toMatch(
      /^ {4}Avg gRPC time: \d+ usec \(\(un\)marshal request\/response \d+ usec \+ response wait \d+ usec\)$/,
    );
    expect(lines).toContain('Inferences/Second vs. Client p95 Batch Latency');
  });

  it('a bad TRITONSERVER_TS_HEAP_GROWING_PERCENT is a usage error (exit 2) naming the variable', () => {
    const r = spawnSync(process.execPath, [BIN, '-m', 'simple'], {
      encoding: 'utf8',
      env: { ...process.env, TRITONSERVER_TS_HEAP_GROWING_PERCENT: 'lots' },
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      "error: TRITONSERVER_TS_HEAP_GROWING_PERCENT must be an integer from 0 to 1000, got 'lots'",
    );
    expect(r.stdout).toBe('');
  });

  it("usage errors exit 2 with perf_analyzer's message; --help exits 0", async () => {
    const bad = await perfAnalyzer(['-m', 'simple', '--concurrency-range', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("Run 'perf-analyzer-ts --help' for the list of options.");
    expect(bad.stdout).toBe('');
    const help = await perfAnalyzer(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--concurrency-range');
  });

  it('a failure exits 1 with the error code and message, no stack without -v', async () => {
    const missing = await perfAnalyzer(['-m', 'no_such_model', '-u', hostPort(embedded.url), '-p', '300']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: MODEL: /m);
    expect(missing.stderr).not.toMatch(/^\s+at /m);
  });

  it("a single level that never stabilises: perf_analyzer's warning, UNSTABLE, exit 1, no CSV", async () => {
    const csvFile = join(out, 'unstable.csv');
    // -s 0 asks the last 3 windows for identical throughput and latency: never met in 3 trials.
    const result = await perfAnalyzer([
      '-m',
      'simple',
      '-u',
      hostPort(embedded.url),
      '-p',
      '100',
      '-s',
      '0',
      '-r',
      '3',
      '-f',
      csvFile,
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'Failed to obtain stable measurement within 3 measurement windows for concurrency 1. Please try to increase the --measurement-interval.\n',
    );
    expect(result.stderr).toContain('error: UNSTABLE: Failed to obtain stable measurement.\n');
    expect(result.stdout.endsWith('Request concurrency: 1\n')).toBe(true);
    await expect(readFile(csvFile, 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('Ctrl+C stops the sweep, keeps what was measured and prints it', async () => {
    let sent = false;
    const result = await perfAnalyzer(
      ['-m', 'simple', '-u', hostPort(embedded.url), '--concurrency-range', '1:64', '-p', '300', '-s', '100'],
      (stderr, pid) => {
        if (!sent && stderr.includes('concurrency 2: measuring')) {
          sent = true;
          process.kill(pid, 'SIGINT');
        }
      },
    );
    expect(sent).toBe(true);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      'Interrupt signal (2) received.\nWaiting for in-flight inferences to complete.\n',
    );
    expect(result.stdout).toContain(
      'Inferences/Second vs. Client Average Batch Latency\nConcurrency: 1, throughput: ',
    );
    expect(result.stdout).not.toContain('Request concurrency: 3');
  });
});
