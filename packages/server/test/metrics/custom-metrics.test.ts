/**
 * Python models' custom metrics (`pb_utils.MetricFamily` / `Metric`) on the real server's
 * `/metrics`, beside Triton's families, and Triton's errors for their misuse (real stubs run by
 * `/usr/bin/python3`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  METRICS_MISUSE_CASES,
  metricsMisusePythonModel,
  metricsPythonModel,
  type MetricsMisuseCase,
} from '../../src/testing/index.js';
import {
  inferJson,
  outputData,
  startPythonServer,
  type PythonTestServer,
} from '../python-backend/helpers.js';

let server: PythonTestServer;

beforeAll(async () => {
  server = await startPythonServer([metricsPythonModel(), metricsMisusePythonModel()], {
    metricsPort: 0,
    httpAddress: '127.0.0.1',
    modelControlMode: 'explicit',
    loadModels: ['py_metrics', 'py_metrics_misuse'],
  });
}, 60_000);

afterAll(async () => {
  await server.close();
});

async function scrape(): Promise<string> {
  return (await fetch(server.running.metricsUrl as string)).text();
}

async function sendX(x: number): Promise<number> {
  const r = await inferJson(server.url, 'py_metrics', {
    inputs: [{ name: 'X', datatype: 'FP32', shape: [1], data: [x] }],
  });
  expect(r.status).toBe(200);
  return Number(outputData(r.body, 'COUNT')?.[0]);
}

async function misuse(c: MetricsMisuseCase): Promise<string> {
  const r = await inferJson(server.url, 'py_metrics_misuse', {
    inputs: [{ name: 'CASE', datatype: 'BYTES', shape: [1], data: [c] }],
  });
  expect(r.status).toBe(200);
  return String(outputData(r.body, 'MESSAGE')?.[0]);
}

describe('custom metrics of a Python model', () => {
  it('counter, gauge and histogram are rendered with HELP/TYPE and values after real requests', async () => {
    // Created in initialize: shown at once, at zero.
    const before = await scrape();
    expect(before).toContain(
      '# HELP py_metrics_requests Requests seen by py_metrics\n# TYPE py_metrics_requests counter\npy_metrics_requests{source="py_metrics"} 0\n',
    );
    expect(before).toContain(
      'py_metrics_x_count{source="py_metrics"} 0\npy_metrics_x_sum{source="py_metrics"} 0\n',
    );

    expect(await sendX(0.05)).toBe(1);
    expect(await sendX(1.5)).toBe(2);
    expect(await sendX(6)).toBe(3);

    const text = await scrape();
    expect(text).toContain('py_metrics_requests{source="py_metrics"} 3\n');
    expect(text).toContain(
      '# HELP py_metrics_last_x Last X seen by py_metrics\n# TYPE py_metrics_last_x gauge\npy_metrics_last_x{source="py_metrics"} 6\n',
    );
    // FP32 0.05 is 0.0500000007…: the sum is that float plus 1.5 and 6, printed with 16 digits.
    const sum = Math.fround(0.05) + 1.5 + 6;
    expect(text).toContain(
      [
        '# HELP py_metrics_x X values seen by py_metrics',
        '# TYPE py_metrics_x histogram',
        'py_metrics_x_count{source="py_metrics"} 3',
        `py_metrics_x_sum{source="py_metrics"} ${Number(sum.toPrecision(16))}`,
        'py_metrics_x_bucket{source="py_metrics",le="0.1"} 1',
        'py_metrics_x_bucket{source="py_metrics",le="1"} 1',
        'py_metrics_x_bucket{source="py_metrics",le="2.5"} 2',
        'py_metrics_x_bucket{source="py_metrics",le="5"} 2',
        'py_metrics_x_bucket{source="py_metrics",le="10"} 3',
        'py_metrics_x_bucket{source="py_metrics",le="+Inf"} 3',
      ].join('\n'),
    );
  });

  it('sit where prometheus-cpp puts them: counters after Triton’s counters, gauges after its gauges', async () => {
    const names = (await scrape())
      .split('\n')
      .filter((l) => l.startsWith('# TYPE '))
      .map((l) => l.split(' ')[2]);
    const at = (n: string): number => names.indexOf(n);
    expect(at('py_metrics_requests')).toBeGreaterThan(at('nv_inference_compute_output_duration_us'));
    expect(at('py_metrics_requests')).toBeLessThan(at('nv_inference_pending_request_count'));
    expect(at('py_metrics_last_x')).toBeGreaterThan(at('nv_cpu_memory_used_bytes'));
    expect(at('py_metrics_x')).toBeGreaterThan(at('py_metrics_last_x'));
  });

  it('the same labels refer to one metric; a name taken again keeps its first description', async () => {
    expect(await misuse('dup_labels')).toBe('7.5 7.5');
    expect(await misuse('dup_description')).toBe('ok');
    const text = await scrape();
    expect(text).toContain('# HELP misuse_dup_description first description\n');
    expect(text).not.toContain('second description');
    expect(text).toContain('misuse_dup_labels{a="1",b="2"} 7.5\n');
  });

  it('answers misuse with Triton’s errors', async () => {
    const expected: Record<Exclude<MetricsMisuseCase, 'dup_labels' | 'dup_description'>, string> = {
      dup_kind: 'Error when creating MetricFamily: Family name already exists with different type',
      counter_negative:
        'Failed to increment metric value: TRITONSERVER_METRIC_KIND_COUNTER can only be incremented monotonically by non-negative values.',
      counter_set: 'Failed to set metric value: TRITONSERVER_METRIC_KIND_COUNTER does not support Set',
      counter_observe:
        'Failed to observe metric value: TRITONSERVER_METRIC_KIND_COUNTER does not support Observe',
      gauge_observe:
        'Failed to observe metric value: TRITONSERVER_METRIC_KIND_GAUGE does not support Observe',
      histogram_value:
        'Failed to get metric value: TRITONSERVER_METRIC_KIND_HISTOGRAM does not support Value',
      histogram_increment:
        'Failed to increment metric value: TRITONSERVER_METRIC_KIND_HISTOGRAM does not support Increment',
      histogram_set: 'Failed to set metric value: TRITONSERVER_METRIC_KIND_HISTOGRAM does not support Set',
      histogram_unsorted: 'Error when creating Metric: Bucket Boundaries must be strictly sorted',
      histogram_duplicate_bucket: 'Error when creating Metric: Bucket Boundaries must be strictly sorted',
      histogram_no_buckets: 'Error when creating Metric: Missing required buckets for histogram metrics',
      labels_not_dict: 'Failed to create metric. Labels must be a dictionary.',
      label_not_string: 'Error when creating Metric: attempt to access JSON non-string as string',
      bad_label_name: 'Error when creating Metric: Invalid label name',
      bad_family_name: 'Error when creating MetricFamily: Invalid metric name',
      family_deleted:
        "Failed to set metric value: Invalid metric operation as the corresponding 'MetricFamily' has been deleted. The 'MetricFamily' object should be deleted AFTER its corresponding 'Metric' objects have been deleted.",
    };
    for (const c of METRICS_MISUSE_CASES) {
      if (c === 'dup_labels' || c === 'dup_description') continue;
      expect(await misuse(c), c).toBe(expected[c]);
    }
    // The refused counter kept no value; the deleted family's metric left /metrics.
    const text = await scrape();
    expect(text).toContain('misuse_counter_negative 0\n');
    expect(text).not.toMatch(/^misuse_family_deleted/m);
  });

  it('a model’s metrics leave /metrics when it is unloaded', async () => {
    const r = await fetch(`${server.url}/v2/repository/models/py_metrics/unload`, { method: 'POST' });
    expect(r.status).toBe(200);
    const text = await scrape();
    expect(text).not.toContain('py_metrics_requests{');
  });
});
