import { afterEach, describe, expect, it } from 'vitest';

import {
  METRICS_CONTENT_TYPE,
  renderMetrics,
  startMetricsServer,
  type MetricsServer,
} from '../../src/metrics/index.js';
import { createScheduler } from '../../src/scheduler/create-scheduler.js';
import { StatisticsRegistry } from '../../src/statistics/index.js';
import {
  ControlledModel,
  dynamicBatching,
  int32Request,
  makeConfig,
  queuePolicy,
} from '../scheduler/helpers.js';

/** Parses exposition text into `name{labels}` → value. */
function parse(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), line.slice(at + 1));
  }
  return out;
}

let server: MetricsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('metrics endpoint', () => {
  it('reports counts and durations that add up exactly to what the scheduler served', async () => {
    const registry = new StatisticsRegistry();
    const statistics = registry.get('m', '1');
    const model = new ControlledModel(1, {
      computeInputNs: 3_000n,
      computeInferNs: 50_000n,
      computeOutputNs: 2_000n,
    });
    const scheduler = createScheduler({
      modelName: 'm',
      modelVersion: '1',
      config: makeConfig({
        max_batch_size: 8,
        dynamic_batching: dynamicBatching({ default_queue_policy: queuePolicy({ max_queue_size: 3 }) }),
      }),
      instances: model.instances,
      statistics,
    });
    const first = scheduler.enqueue(int32Request(0, 2));
    await model.waitForStarted(1);
    const queued = [
      scheduler.enqueue(int32Request(1, 3)),
      scheduler.enqueue(int32Request(2)),
      scheduler.enqueue(int32Request(3)),
    ];
    await expect(scheduler.enqueue(int32Request(4))).rejects.toMatchObject({ kind: 'UNAVAILABLE' });
    server = await startMetricsServer({ port: 0, host: '127.0.0.1', statistics: registry });
    const during = parse(await (await fetch(server.url)).text());
    expect(during.get('nv_inference_pending_request_count{model="m",version="1"}')).toBe('3');
    model.started[0]?.release();
    await model.waitForStarted(2);
    model.started[1]?.release();
    await Promise.all([first, ...queued]);

    const response = await fetch(server.url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(METRICS_CONTENT_TYPE);
    const text = await response.text();
    const m = parse(text);
    const l = '{model="m",version="1"}';
    expect(m.get(`nv_inference_request_success${l}`)).toBe('4');
    expect(m.get('nv_inference_request_failure{model="m",reason="REJECTED",version="1"}')).toBe('1');
    expect(m.get('nv_inference_request_failure{model="m",reason="BACKEND",version="1"}')).toBe('0');
    expect(m.get(`nv_inference_count${l}`)).toBe('7');
    expect(m.get(`nv_inference_exec_count${l}`)).toBe('2');
    expect(m.get(`nv_inference_pending_request_count${l}`)).toBe('0');
    // Every request is charged its execution's compute durations: 4 requests × 50 µs (+ concat/split time).
    expect(Number(m.get(`nv_inference_compute_infer_duration_us${l}`))).toBe(200);
    expect(Number(m.get(`nv_inference_compute_input_duration_us${l}`))).toBeGreaterThanOrEqual(12);
    const snap = statistics.snapshot();
    expect(snap.inference_stats.success.count).toBe(4n);
    expect(snap.inference_stats.queue.count).toBe(4n);
    expect(BigInt(m.get(`nv_inference_request_duration_us${l}`) ?? -1)).toBe(snap.durationsUs.request);
    expect(BigInt(m.get(`nv_inference_queue_duration_us${l}`) ?? -1)).toBe(snap.durationsUs.queue);
    for (const name of ['nv_inference_request_success', 'nv_inference_count', 'nv_cpu_utilization']) {
      expect(text).toMatch(new RegExp(`^# HELP ${name} .+\\n# TYPE ${name} (counter|gauge)$`, 'm'));
    }
    const cpu = Number(m.get('nv_cpu_utilization'));
    expect(cpu).toBeGreaterThanOrEqual(0);
    expect(cpu).toBeLessThanOrEqual(1);
    expect(Number(m.get('nv_cpu_memory_total_bytes'))).toBeGreaterThan(
      Number(m.get('nv_cpu_memory_used_bytes')),
    );
  });

  it('answers 404 off /metrics and 405 for other methods', async () => {
    server = await startMetricsServer({
      port: 0,
      host: '127.0.0.1',
      statistics: () => [],
      cpuMetrics: false,
    });
    expect((await fetch(server.url.replace('/metrics', '/nope'))).status).toBe(404);
    expect((await fetch(server.url, { method: 'POST' })).status).toBe(405);
    const empty = await fetch(server.url);
    expect(await empty.text()).toBe('');
  });

  it('rejects an invalid port with a RangeError', async () => {
    await expect(startMetricsServer({ port: 70000, statistics: () => [] })).rejects.toThrow(RangeError);
  });
});

describe('renderMetrics', () => {
  it('uses Triton HELP texts and escapes label values', () => {
    const registry = new StatisticsRegistry();
    registry.get('we"ird\\name', '3');
    const text = renderMetrics(registry.snapshot());
    expect(text).toContain(
      '# HELP nv_inference_request_failure Number of failed inference requests, all batch sizes\n',
    );
    expect(text).toContain(
      '# HELP nv_inference_pending_request_count Instantaneous number of pending requests awaiting execution per-model.\n# TYPE nv_inference_pending_request_count gauge\n',
    );
    expect(text).toContain('nv_inference_count{model="we\\"ird\\\\name",version="3"} 0\n');
    expect(text).not.toContain('nv_cpu_utilization');
  });
});
