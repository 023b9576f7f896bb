import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { InferInput } from '@tritonserver-ts/protocol';

import { infer, startTestServer, type TestServer } from '../helpers/server.js';

interface Duration {
  count: number;
  ns: number;
}
interface StatsBody {
  model_stats: {
    name: string;
    version: string;
    inference_count: number;
    execution_count: number;
    last_inference: number;
    inference_stats: Record<
      'success' | 'fail' | 'queue' | 'compute_input' | 'compute_infer' | 'compute_output',
      Duration
    >;
    batch_stats: { batch_size: number; compute_infer: Duration }[];
  }[];
}

function simpleInputs(rows: number): InferInput[] {
  const data = Int32Array.from({ length: rows * 16 }, (_, i) => i);
  return [
    { name: 'INPUT0', datatype: 'INT32', shape: [rows, 16], data },
    { name: 'INPUT1', datatype: 'INT32', shape: [rows, 16], data },
  ];
}

function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ only: ['simple'], metricsPort: 0, httpAddress: '127.0.0.1' });
});
afterAll(async () => {
  await server.close();
});

describe('statistics and metrics through the real server', () => {
  it('add up exactly to the requests sent: 4 single-row requests and one of 3 rows', async () => {
    const started = Date.now();
    const results = await Promise.all(
      [1, 1, 1, 1, 3].map((rows) => infer(server.url, 'simple', simpleInputs(rows))),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);

    const stats = (await (await fetch(`${server.url}/v2/models/simple/stats`)).json()) as StatsBody;
    const s = stats.model_stats[0];
    expect(s?.name).toBe('simple');
    expect(s?.inference_count).toBe(7);
    // No dynamic_batching in `simple`: every request is its own execution.
    expect(s?.execution_count).toBe(5);
    for (const key of ['success', 'queue', 'compute_input', 'compute_infer', 'compute_output'] as const) {
      expect(s?.inference_stats[key].count).toBe(5);
    }
    expect(s?.inference_stats.fail.count).toBe(0);
    expect(s?.batch_stats.map((b) => [b.batch_size, b.compute_infer.count])).toEqual([
      [1, 4],
      [3, 1],
    ]);
    expect(s?.last_inference).toBeGreaterThanOrEqual(started);

    const metricsUrl = server.running.metricsUrl;
    expect(metricsUrl).toBeDefined();
    const m = parseMetrics(await (await fetch(metricsUrl as string)).text());
    const l = '{model="simple",version="1"}';
    expect(m.get(`nv_inference_request_success${l}`)).toBe(5);
    expect(m.get(`nv_inference_count${l}`)).toBe(7);
    expect(m.get(`nv_inference_exec_count${l}`)).toBe(5);
    expect(m.get(`nv_inference_pending_request_count${l}`)).toBe(0);
    expect(m.get('nv_inference_request_failure{model="simple",reason="REJECTED",version="1"}')).toBe(0);
    // Metric µs are summed per request after truncation: within one µs per request of ns / 1000.
    const successUs = (s?.inference_stats.success.ns ?? 0) / 1000;
    const requestUs = m.get(`nv_inference_request_duration_us${l}`) ?? -1;
    expect(requestUs).toBeLessThanOrEqual(successUs);
    expect(requestUs).toBeGreaterThanOrEqual(successUs - 5);
  });
});
