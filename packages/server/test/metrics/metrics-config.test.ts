/**
 * `--metrics-config` and `--metrics-interval-ms` on the real server: latency summaries with default
 * and custom quantiles, `counter_latencies=false`, the first-response histogram of decoupled models
 * (default buckets and `model_metrics` buckets), and the background polling of the CPU gauges.
 */
import { Worker } from 'node:worker_threads';
import type { ModelStreamInferResponse } from '@tritonserver-ts/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseArgs } from '../../src/cli-args.js';
import { decoupledPythonModel, type GeneratedPythonModel } from '../../src/testing/index.js';
import { GrpcTestClient, int32Bytes } from '../grpc/helpers.js';
import { infer, startTestServer, type TestServer } from '../helpers/server.js';
import { startPythonServer, type PythonTestServer } from '../python-backend/helpers.js';

function simpleInputs(): { name: string; datatype: 'INT32'; shape: number[]; data: Int32Array }[] {
  const data = Int32Array.from({ length: 16 }, (_, i) => i);
  return [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data },
  ];
}

/** `--metrics-config` values as the command line hands them to the server. */
function metricsFlags(...values: string[]): ReturnType<typeof parseArgs>['server'] {
  return parseArgs(['--model-repository=/unused', ...values.map((v) => `--metrics-config=${v}`)]).server;
}

async function scrape(server: TestServer): Promise<string> {
  return (await fetch(server.running.metricsUrl as string)).text();
}

function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('--metrics-config', () => {
  it('rejects a value that is not <setting>=<value> with tritonserver’s message', () => {
    expect(() => metricsFlags('summary_latencies')).toThrow(
      '--metrics-config option format is <setting>=<value>. Got summary_latencies',
    );
    expect(() => metricsFlags('group,summary_latencies=true')).toThrow(
      '--metrics-config option format is <setting>=<value>. Got group,summary_latencies=true',
    );
    const bad = parseArgs(['--model-repository=/unused', '--metrics-config=summary_quantiles=0.5,x:0.1']);
    expect(bad.warnings).toEqual([
      "Invalid option: [0.5]. No ':' delimiter found. Expected format is <quantile>:<error>",
      'Invalid option: [x:0.1]. Error: stod',
    ]);
  });

  describe('summary_latencies=true, counter_latencies=false', () => {
    let server: TestServer;
    beforeAll(async () => {
      const flags = metricsFlags('summary_latencies=true', 'counter_latencies=false');
      server = await startTestServer({
        only: ['simple'],
        metricsPort: 0,
        httpAddress: '127.0.0.1',
        ...(flags.metricsConfig !== undefined ? { metricsConfig: flags.metricsConfig } : {}),
      });
    });
    afterAll(async () => {
      await server.close();
    });

    it('reports the five _summary_us summaries with Triton’s HELP texts and default quantiles, no _duration_us counters', async () => {
      for (let i = 0; i < 5; i++)
        expect((await infer(server.url, 'simple', simpleInputs())).status).toBe(200);
      const text = await scrape(server);
      const l = 'model="simple",version="1"';
      expect(text).toContain(
        '# HELP nv_inference_request_summary_us Summary of inference request duration in microseconds (includes cached requests)\n# TYPE nv_inference_request_summary_us summary\n',
      );
      expect(text).toContain(
        '# HELP nv_inference_queue_summary_us Summary of inference queuing duration in microseconds (includes cached requests)\n',
      );
      expect(text).toContain(
        '# HELP nv_inference_compute_infer_summary_us Cumulative compute inference duration in microseconds (does not include cached requests)\n',
      );
      for (const family of ['request', 'queue', 'compute_input', 'compute_infer', 'compute_output']) {
        const name = `nv_inference_${family}_summary_us`;
        expect(value(text, `${name}_count{${l}}`), name).toBe(5);
        const sum = value(text, `${name}_sum{${l}}`) ?? -1;
        expect(sum).toBeGreaterThanOrEqual(0);
        const quantiles = ['0.5', '0.9', '0.95', '0.99', '0.999'].map(
          (q) => value(text, `${name}{${l},quantile="${q}"}`) ?? Number.NaN,
        );
        // Each quantile is one of the five observations: between 0 and their sum.
        for (const q of quantiles) {
          expect(q).toBeGreaterThanOrEqual(0);
          expect(q).toBeLessThanOrEqual(sum);
        }
        expect([...quantiles].sort((a, b) => a - b)).toEqual(quantiles);
      }
      // The request summary's count matches the success counter, which stays.
      expect(value(text, `nv_inference_request_success{${l}}`)).toBe(5);
      expect(text).not.toContain('_duration_us');
      expect(text).not.toContain('nv_inference_first_response_histogram_ms');
    });
  });

  describe('custom summary_quantiles', () => {
    let server: TestServer;
    beforeAll(async () => {
      // Triton's QA value, with its malformed "0.0.1" read as 0.0 by stod.
      const flags = metricsFlags('summary_latencies=true', 'summary_quantiles=0.1:0.0.1,0.7:0.01,0.75:0.01');
      server = await startTestServer({
        only: ['simple'],
        metricsPort: 0,
        httpAddress: '127.0.0.1',
        ...(flags.metricsConfig !== undefined ? { metricsConfig: flags.metricsConfig } : {}),
      });
    });
    afterAll(async () => {
      await server.close();
    });

    it('reports exactly those quantiles (NaN until observed), counters kept', async () => {
      const l = 'model="simple",version="1"';
      const empty = await scrape(server);
      expect(empty).toContain(`nv_inference_queue_summary_us{${l},quantile="0.1"} Nan\n`);
      expect((await infer(server.url, 'simple', simpleInputs())).status).toBe(200);
      const text = await scrape(server);
      const quantiles = text
        .split('\n')
        .filter((line) => line.startsWith('nv_inference_queue_summary_us{'))
        .map((line) => /quantile="([^"]+)"/.exec(line)?.[1]);
      expect(quantiles).toEqual(['0.1', '0.7', '0.75']);
      // One observation: every quantile is it, and it is the sum.
      const sum = value(text, `nv_inference_queue_summary_us_sum{${l}}`);
      expect(value(text, `nv_inference_queue_summary_us{${l},quantile="0.7"}`)).toBe(sum);
      expect(value(text, `nv_inference_queue_duration_us{${l}}`)).toBe(sum);
    });
  });
});

describe('histogram_latencies=true', () => {
  let server: PythonTestServer;
  let client: GrpcTestClient;

  /** A decoupled model whose responses come 0.3 s apart, with `model_metrics` buckets when given. */
  function paced(name: string, buckets?: readonly number[]): GeneratedPythonModel {
    const m = decoupledPythonModel(name, { responseDelaySeconds: 0.3 });
    if (buckets === undefined) return m;
    const extra = `model_metrics {
  metric_control: [
    {
      metric_identifier: { family: "nv_inference_first_response_histogram_ms" }
      histogram_options: { buckets: [ ${buckets.join(', ')} ] }
    }
  ]
}
`;
    return { ...m, files: { ...m.files, 'config.pbtxt': `${m.files['config.pbtxt'] ?? ''}${extra}` } };
  }

  beforeAll(async () => {
    const flags = metricsFlags('histogram_latencies=true');
    server = await startPythonServer([paced('py_paced'), paced('py_paced_buckets', [-1, 0, 1, 2.5])], {
      onnx: ['simple'],
      grpcPort: 0,
      metricsPort: 0,
      httpAddress: '127.0.0.1',
      ...(flags.metricsConfig !== undefined ? { metricsConfig: flags.metricsConfig } : {}),
    });
    client = new GrpcTestClient(server.running.grpcUrl);
  }, 60_000);
  afterAll(async () => {
    client.close();
    await server.close();
  });

  async function stream(model: string, n: number): Promise<number> {
    const s = client.stream();
    let count = 0;
    const done = new Promise<void>((resolve, reject) => {
      s.on('data', (_m: ModelStreamInferResponse) => {
        count += 1;
      });
      s.on('end', resolve);
      s.on('error', reject);
    });
    s.write({
      modelName: model,
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [1n] }],
      rawInputContents: [int32Bytes([n])],
    });
    s.end();
    await done;
    return count;
  }

  it('observes request → first response in whole ms, in Triton’s default buckets; none for non-decoupled models', async () => {
    expect(await stream('py_paced', 2)).toBe(2);
    expect((await infer(server.url, 'simple', simpleInputs())).status).toBe(200);
    const text = await scrape(server);
    const l = 'model="py_paced",version="1"';
    expect(text).toContain(
      '# HELP nv_inference_first_response_histogram_ms Duration from request to first response in milliseconds\n# TYPE nv_inference_first_response_histogram_ms histogram\n',
    );
    expect(value(text, `nv_inference_first_response_histogram_ms_count{${l}}`)).toBe(1);
    const sum = value(text, `nv_inference_first_response_histogram_ms_sum{${l}}`) ?? -1;
    // The first response came after the 0.3 s pause (not after the second one).
    expect(sum).toBeGreaterThanOrEqual(300);
    expect(sum).toBeLessThan(600);
    expect(Number.isInteger(sum)).toBe(true);
    const buckets = text
      .split('\n')
      .filter((line) => line.startsWith(`nv_inference_first_response_histogram_ms_bucket{${l}`));
    expect(buckets).toEqual([
      `nv_inference_first_response_histogram_ms_bucket{${l},le="100"} 0`,
      `nv_inference_first_response_histogram_ms_bucket{${l},le="500"} 1`,
      `nv_inference_first_response_histogram_ms_bucket{${l},le="2000"} 1`,
      `nv_inference_first_response_histogram_ms_bucket{${l},le="5000"} 1`,
      `nv_inference_first_response_histogram_ms_bucket{${l},le="+Inf"} 1`,
    ]);
    expect(text).not.toContain('nv_inference_first_response_histogram_ms_count{model="simple"');
  });

  it('takes the buckets of model_metrics (Triton’s QA values)', async () => {
    const text = await scrape(server);
    const l = 'model="py_paced_buckets",version="1"';
    const les = text
      .split('\n')
      .filter((line) => line.startsWith(`nv_inference_first_response_histogram_ms_bucket{${l}`))
      .map((line) => /le="([^"]+)"/.exec(line)?.[1]);
    expect(les).toEqual(['-1', '0', '1', '2.5', '+Inf']);
  });
});

describe('--metrics-interval-ms', () => {
  it('refreshes the nv_cpu_* gauges in the background at that interval, not per scrape', async () => {
    const slow = await startTestServer({
      only: ['simple'],
      metricsPort: 0,
      httpAddress: '127.0.0.1',
      metricsIntervalMs: 600_000,
    });
    const fast = await startTestServer({
      only: ['simple'],
      metricsPort: 0,
      httpAddress: '127.0.0.1',
      metricsIntervalMs: 100,
    });
    try {
      const slowBefore = await scrape(slow);
      // Keep a core busy for longer than a poll of the fast server.
      const until = Date.now() + 400;
      while (Date.now() < until) Math.sqrt(Math.random());
      await new Promise((resolve) => setTimeout(resolve, 120));
      const slowAfter = await scrape(slow);
      // No poll in between: the very same readings.
      for (const name of ['nv_cpu_utilization', 'nv_cpu_memory_used_bytes', 'nv_cpu_memory_total_bytes']) {
        expect(value(slowAfter, name), name).toBe(value(slowBefore, name));
      }
      expect(value(slowAfter, 'nv_cpu_utilization')).toBe(0);
      // The fast server polls every 50 ms. Its polls run on this process's event loop, so the CPU is
      // kept busy from a worker thread meanwhile: a poll then covers busy time whatever the host's
      // load (a busy loop on the event loop itself only delays the polls until it ends).
      const burner = new Worker(
        'const end = Date.now() + 1500; while (Date.now() < end) Math.sqrt(Math.random());',
        {
          eval: true,
        },
      );
      let fastAfter = 0;
      try {
        for (let deadline = Date.now() + 1400; fastAfter === 0 && Date.now() < deadline;) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          fastAfter = value(await scrape(fast), 'nv_cpu_utilization') ?? 0;
        }
      } finally {
        await burner.terminate();
      }
      expect(fastAfter).toBeGreaterThan(0);
      expect(fastAfter).toBeLessThanOrEqual(1);
    } finally {
      await slow.close();
      await fast.close();
    }
  });

  it('is a positive integer on the command line, 2000 by default', () => {
    expect(parseArgs(['--model-repository=/r']).server.metricsIntervalMs).toBe(2000);
    expect(parseArgs(['--model-repository=/r', '--metrics-interval-ms=250']).server.metricsIntervalMs).toBe(
      250,
    );
    expect(parseArgs(['--model-repository=/r', '--allow-cpu-metrics=false']).server.allowCpuMetrics).toBe(
      false,
    );
  });
});
