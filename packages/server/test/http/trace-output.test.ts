/**
 * Traces through the real server: Triton's JSON trace file (TIMESTAMPS level), sampling rate,
 * count, log-frequency files, and the timestamps against the statistics they come from.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { TraceSettings } from '../../src/index.js';
import { get, infer, post, startTestServer, type TestServer } from '../helpers/server.js';

interface TraceObject {
  id: number;
  model_name?: string;
  model_version?: number;
  request_id?: string;
  timestamps?: { name: string; ns: number }[];
}

interface Trace {
  id: number;
  model?: TraceObject;
  names: string[];
  ns: bigint[];
}

/** Reads a trace file (JSON array) and groups its objects by trace id, in file order. */
function readTraces(file: string): Trace[] {
  const text = readFileSync(file, 'utf8');
  const objects = JSON.parse(text) as TraceObject[];
  // Timestamps are 64-bit: read them exactly from the text as well.
  const exact = [...text.matchAll(/"ns":(\d+)/g)].map((m) => BigInt(m[1] as string));
  const traces = new Map<number, Trace>();
  let k = 0;
  for (const o of objects) {
    let t = traces.get(o.id);
    if (t === undefined) {
      t = { id: o.id, names: [], ns: [] };
      traces.set(o.id, t);
    }
    if (o.model_name !== undefined) t.model = o;
    for (const ts of o.timestamps ?? []) {
      t.names.push(ts.name);
      t.ns.push(exact[k++] as bigint);
    }
  }
  return [...traces.values()];
}

const HTTP_INFER = [
  'HTTP_RECV_START',
  'HTTP_RECV_END',
  'REQUEST_START',
  'QUEUE_START',
  'COMPUTE_START',
  'COMPUTE_INPUT_END',
  'COMPUTE_OUTPUT_START',
  'COMPUTE_END',
  'REQUEST_END',
  'INFER_RESPONSE_COMPLETE',
  'HTTP_SEND_START',
  'HTTP_SEND_END',
];

const inputs = (n: number) => [
  { name: 'INPUT0', datatype: 'INT32' as const, shape: [1, 16], data: new Int32Array(16).fill(n) },
  { name: 'INPUT1', datatype: 'INT32' as const, shape: [1, 16], data: new Int32Array(16).fill(1) },
];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tritonserver-ts-trace-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function traced(trace: Partial<TraceSettings>, only = ['simple']): Promise<TestServer> {
  return startTestServer({ only, trace: { trace_level: ['TIMESTAMPS'], ...trace } });
}

describe('a traced request', () => {
  it('produces Triton’s JSON trace with every timestamp in order, matching the statistics', async () => {
    const file = join(dir, 'every.json');
    const srv = await traced({ trace_file: file, trace_rate: '1' }, ['simple', 'slow_identity']);
    try {
      for (let i = 1; i <= 3; i++) {
        const r = await infer(srv.url, 'simple', inputs(i), { requestId: `req-${i}` });
        expect(r.status, r.error).toBe(200);
      }
      const fp32 = [
        { name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 2], data: new Float32Array([1, 2]) },
      ];
      for (let i = 1; i <= 2; i++) expect((await infer(srv.url, 'slow_identity', fp32)).status).toBe(200);
      expect((await get(srv.url, '/v2/health/ready')).status).toBe(200); // not an inference: not traced
      // Nothing is written before shutdown without log-frequency (as tritonserver).
      expect(existsSync(file)).toBe(false);
      const stats = (await get(srv.url, '/v2/models/stats')).json as {
        model_stats: { name: string; inference_stats: Record<string, { count: number; ns: number }> }[];
      };
      await srv.close();

      const traces = readTraces(file);
      expect(traces.map((t) => t.id)).toEqual([1, 2, 3, 4, 5]);
      expect(traces.map((t) => t.model)).toEqual([
        ...[1, 2, 3].map((i) => ({ id: i, model_name: 'simple', model_version: 1, request_id: `req-${i}` })),
        { id: 4, model_name: 'slow_identity', model_version: 1 },
        { id: 5, model_name: 'slow_identity', model_version: 1 },
      ]);
      const spans = (model: string) => {
        const sum = { queue: 0n, compute_input: 0n, compute_infer: 0n, compute_output: 0n };
        for (const t of traces.filter((x) => x.model?.model_name === model)) {
          const at = (name: string) => t.ns[t.names.indexOf(name)] as bigint;
          sum.queue += at('COMPUTE_START') - at('QUEUE_START');
          sum.compute_input += at('COMPUTE_INPUT_END') - at('COMPUTE_START');
          sum.compute_infer += at('COMPUTE_OUTPUT_START') - at('COMPUTE_INPUT_END');
          sum.compute_output += at('COMPUTE_END') - at('COMPUTE_OUTPUT_START');
        }
        return sum;
      };
      for (const t of traces) {
        expect(t.names).toEqual(HTTP_INFER);
        for (let i = 1; i < t.ns.length; i++) {
          expect(t.ns[i] as bigint, `${t.names[i]} after ${t.names[i - 1]}`).toBeGreaterThanOrEqual(
            t.ns[i - 1] as bigint,
          );
        }
      }
      const statsOf = (model: string) => stats.model_stats.find((m) => m.name === model)?.inference_stats;
      // The scheduler's own times: on the identity backend (main thread, one phase after the other)
      // the trace spans add up to the statistics exactly.
      const slow = statsOf('slow_identity');
      const slowSpans = spans('slow_identity');
      for (const phase of ['queue', 'compute_input', 'compute_infer', 'compute_output'] as const) {
        expect(slow?.[phase], phase).toEqual({ count: 2, ns: Number(slowSpans[phase]) });
      }
      // onnxruntime runs in a worker thread, whose start can overlap the main thread's posting by a
      // little: the queue span is exact, the compute points are kept inside the execution.
      const simple = statsOf('simple');
      const simpleSpans = spans('simple');
      expect(simple?.queue).toEqual({ count: 3, ns: Number(simpleSpans.queue) });
      for (const phase of ['compute_input', 'compute_infer', 'compute_output'] as const) {
        expect(Number(simpleSpans[phase]), phase).toBeLessThanOrEqual(simple?.[phase]?.ns ?? 0);
      }
    } finally {
      await srv.close();
    }
  });

  it('traces a refused request too, and the file stays valid JSON', async () => {
    const file = join(dir, 'refused.json');
    const srv = await traced({ trace_file: file, trace_rate: '1' });
    try {
      // INPUT1 missing: refused by the core's checks, after REQUEST_START.
      const bad = await infer(srv.url, 'simple', inputs(1).slice(0, 1));
      expect(bad.status).toBe(400);
      await srv.close();
      const [t] = readTraces(file);
      expect(t?.model).toMatchObject({ model_name: 'simple', model_version: 1 });
      expect(t?.names).toEqual([
        'HTTP_RECV_START',
        'HTTP_RECV_END',
        'REQUEST_START',
        'REQUEST_END',
        'HTTP_SEND_START',
        'HTTP_SEND_END',
      ]);
    } finally {
      await srv.close();
    }
  });

  it('is not traced when the level is OFF', async () => {
    const file = join(dir, 'off.json');
    const srv = await startTestServer({ only: ['simple'], trace: { trace_file: file, trace_rate: '1' } });
    try {
      expect((await infer(srv.url, 'simple', inputs(1))).status).toBe(200);
    } finally {
      await srv.close();
    }
    expect(existsSync(file)).toBe(false);
  });
});

describe('sampling', () => {
  it('traces every rate-th request until count runs out, then writes <file>.0 at once', async () => {
    const file = join(dir, 'count.json');
    const srv = await traced({ trace_file: file, trace_rate: '1', trace_count: '2' });
    try {
      for (let i = 1; i <= 4; i++) {
        expect((await infer(srv.url, 'simple', inputs(i), { requestId: `r${i}` })).status).toBe(200);
      }
      // Remaining traces, as tritonserver reports them.
      expect((await get(srv.url, '/v2/trace/setting')).json).toMatchObject({ trace_count: '0' });
      expect(readTraces(`${file}.0`).map((t) => t.model?.request_id)).toEqual(['r1', 'r2']);
    } finally {
      await srv.close();
    }
    expect(existsSync(file)).toBe(false);
  });

  it('honours the rate and writes every log-frequency traces to the next indexed file', async () => {
    const file = join(dir, 'rate.json');
    const srv = await traced({ trace_file: file, trace_rate: '3', log_frequency: '2' });
    try {
      for (let i = 1; i <= 9; i++) {
        expect((await infer(srv.url, 'simple', inputs(i), { requestId: `r${i}` })).status).toBe(200);
        if (i === 6) {
          // The 3rd and 6th requests were traced: the first file is written as soon as it has two.
          await new Promise((resolve) => setTimeout(resolve, 50));
          expect(readTraces(`${file}.0`).map((t) => t.model?.request_id)).toEqual(['r3', 'r6']);
        }
      }
      expect(existsSync(`${file}.1`)).toBe(false);
    } finally {
      await srv.close();
    }
    // The rest at shutdown, to the next indexed file.
    expect(readTraces(`${file}.1`).map((t) => t.model?.request_id)).toEqual(['r9']);
    expect(existsSync(file)).toBe(false);
  });

  it('applies a model’s own settings to that model only; a replaced setting writes what it collected', async () => {
    const file = join(dir, 'model.json');
    const srv = await traced({ trace_file: file, trace_rate: '1000' }, ['simple', 'identity_fp32']);
    try {
      const m = await post(srv.url, '/v2/models/simple/trace/setting', JSON.stringify({ trace_rate: '1' }));
      expect(m.json).toMatchObject({ trace_rate: '1', trace_file: file, trace_level: ['TIMESTAMPS'] });
      expect((await infer(srv.url, 'simple', inputs(1), { requestId: 'a' })).status).toBe(200);
      const fp32 = [
        { name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 2], data: new Float32Array([1, 2]) },
      ];
      expect((await infer(srv.url, 'identity_fp32', fp32)).status).toBe(200);
      // Clearing the model's rate drops its own setting: its trace is written to the file.
      await post(srv.url, '/v2/models/simple/trace/setting', JSON.stringify({ trace_rate: null }));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(readFileSync(file, 'utf8').startsWith('[')).toBe(true);
      expect((await infer(srv.url, 'simple', inputs(2), { requestId: 'b' })).status).toBe(200);
    } finally {
      await srv.close();
    }
    expect(readTraces(file).map((t) => [t.model?.model_name, t.model?.request_id])).toEqual([
      ['simple', 'a'],
    ]);
  });
});
