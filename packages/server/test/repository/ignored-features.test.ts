import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ignoredFeatures } from '../../src/repository/ignored-features.js';
import { createModelConfig } from '../../src/repository/model-config-io.js';
import { post, startTestServer, type TestServer } from '../helpers/server.js';

let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer({
    only: ['identity_fp32'],
    modelControlMode: 'explicit',
    loadModels: ['identity_fp32'],
    gpuFallback: 'cpu',
  });
});
afterAll(async () => {
  await srv.close();
});

const base = {
  backend: 'onnxruntime',
  max_batch_size: 8,
  input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
  output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
};

async function load(config: object): Promise<string[]> {
  srv.logs.length = 0;
  const r = await post(
    srv.url,
    '/v2/repository/models/identity_fp32/load',
    JSON.stringify({ parameters: { config: JSON.stringify(config) } }),
  );
  expect(r.status, r.text).toBe(200);
  return srv.logs.filter((l) => l.startsWith('W'));
}

describe('configured features this server ignores', () => {
  it('loads the model and logs one clear warning per ignored feature', async () => {
    const warnings = await load({
      ...base,
      response_cache: { enable: true },
      instance_group: [
        {
          name: 'limited',
          kind: 'KIND_CPU',
          count: 1,
          rate_limiter: { resources: [{ name: 'R1', count: 2 }], priority: 1 },
          passive: true,
          host_policy: 'numa0',
          secondary_devices: [{ kind: 'KIND_NVDLA', device_id: 0 }],
        },
      ],
      model_repository_agents: { agents: [{ name: 'checksum' }] },
      optimization: {
        execution_accelerators: {
          gpu_execution_accelerator: [
            { name: 'tensorrt', parameters: { precision_mode: 'FP16' } },
            { name: 'cuda' },
          ],
        },
        cuda: { graphs: true, busy_wait_events: true, output_copy_stream: true },
        gather_kernel_buffer_threshold: 4,
        priority: 'PRIORITY_MAX',
        eager_batching: true,
      },
      model_operations: { op_library_filename: ['libcustom.so'] },
      model_metrics: {
        metric_control: [
          {
            metric_identifier: { family: 'nv_inference_first_response_histogram_ms' },
            histogram_options: { buckets: [1, 10] },
          },
          { metric_identifier: { family: 'nv_inference_request_duration_us' } },
        ],
      },
    });
    const expected = [
      /rate_limiter of instance group\(s\) 'limited' has no effect: rate limiting is off \(--rate-limit=off, the default; --rate-limit=execution_count turns it on\)$/,
      /instance group\(s\) 'limited' are passive in the config, but tritonserver-ts schedules requests on every instance$/,
      /secondary_devices of instance group\(s\) 'limited' are ignored/,
      /host_policy of instance group\(s\) 'limited' is ignored/,
      /model_repository_agents \(checksum\) are ignored/,
      /execution accelerators \(gpu:tensorrt, gpu:cuda\) are ignored; there is no GPU/,
      /optimization\.cuda\.graphs is ignored \(no GPU\)$/,
      /optimization\.cuda busy_wait_events, output_copy_stream ignored \(no GPU\)$/,
      /optimization\.gather_kernel_buffer_threshold is ignored/,
      /optimization\.priority PRIORITY_MAX is ignored$/,
      /optimization\.eager_batching is ignored$/,
      /model_operations\.op_library_filename \(libcustom\.so\) is ignored/,
      // The first-response histogram's buckets are honoured; another family gets Triton's warning.
      /Metric family 'nv_inference_request_duration_us' in 'metric_identifier' is not a customizable metric in Triton core\.$/,
    ];
    for (const pattern of expected) {
      expect(
        warnings.filter((w) => pattern.test(w)),
        String(pattern),
      ).toHaveLength(1);
    }
    expect(warnings).toHaveLength(expected.length);
  });

  it('warns about response_cache only on a sequence model (the sequence batcher does not use it, as in Triton)', () => {
    const config = (sequence: boolean) =>
      createModelConfig({
        name: 'm',
        backend: 'identity',
        response_cache: { enable: true },
        ...(sequence ? { sequence_batching: {} } : {}),
      });
    expect(ignoredFeatures(config(false))).toEqual([]);
    expect(ignoredFeatures(config(true))).toEqual([
      "model 'm': response_cache is not used with sequence_batching (as in Triton); every request runs the model",
    ]);
  });

  it('logs nothing for a plain config', async () => {
    const warnings = await load(base);
    expect(warnings.filter((l) => /ignored|no response cache|passive/.test(l))).toEqual([]);
  });

  it('warns about rate_limiter only while rate limiting is off', () => {
    const config = createModelConfig({
      name: 'm',
      backend: 'identity',
      instance_group: [{ name: 'g', kind: 'KIND_CPU', count: 1, rate_limiter: { priority: 2 } }],
    });
    expect(ignoredFeatures(config)).toEqual([
      "model 'm': rate_limiter of instance group(s) 'g' has no effect: rate limiting is off (--rate-limit=off, the default; --rate-limit=execution_count turns it on)",
    ]);
    expect(ignoredFeatures(config, { rateLimiting: true })).toEqual([]);
  });

  it('says so for CPU accelerators only where a backend would run without them', () => {
    const config = (backend: string) =>
      createModelConfig({
        name: 'm',
        backend,
        optimization: { execution_accelerators: { cpu_execution_accelerator: [{ name: 'openvino' }] } },
      });
    // onnxruntime refuses them at instance creation (Triton's message), so no warning is needed.
    expect(ignoredFeatures(config('onnxruntime'))).toEqual([]);
    expect(ignoredFeatures(config('identity'))).toEqual([
      "model 'm': execution accelerators (cpu:openvino) are ignored by the identity backend",
    ]);
  });
});
