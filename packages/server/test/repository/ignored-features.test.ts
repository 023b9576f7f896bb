import { afterAll, beforeAll, describe, expect, it } from 'vitest';

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

describe('configured features this server ignores', () => {
  it('loads the model and logs one clear warning per ignored feature', async () => {
    const config = {
      backend: 'onnxruntime',
      max_batch_size: 8,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
      response_cache: { enable: true },
      instance_group: [
        {
          name: 'limited',
          kind: 'KIND_CPU',
          count: 1,
          rate_limiter: { resources: [{ name: 'R1', count: 2 }], priority: 1 },
        },
      ],
      model_repository_agents: { agents: [{ name: 'checksum' }] },
      optimization: {
        execution_accelerators: {
          gpu_execution_accelerator: [{ name: 'tensorrt', parameters: { precision_mode: 'FP16' } }],
        },
        cuda: { graphs: true },
      },
    };
    srv.logs.length = 0;
    const r = await post(
      srv.url,
      '/v2/repository/models/identity_fp32/load',
      JSON.stringify({ parameters: { config: JSON.stringify(config) } }),
    );
    expect(r.status, r.text).toBe(200);
    const warnings = srv.logs.filter((l) => l.startsWith('W'));
    const expected = [
      /response_cache is enabled in the config but tritonserver-ts has no response cache/,
      /rate_limiter of instance group\(s\) 'limited' is ignored/,
      /model_repository_agents \(checksum\) are ignored/,
      /execution accelerators \(gpu:tensorrt\) are ignored/,
      /optimization\.cuda\.graphs is ignored/,
    ];
    for (const pattern of expected)
      expect(
        warnings.filter((w) => pattern.test(w)),
        String(pattern),
      ).toHaveLength(1);
    // A plain config loads without any of them.
    srv.logs.length = 0;
    const {
      response_cache: _c,
      model_repository_agents: _a,
      optimization: _o,
      instance_group: _g,
      ...plain
    } = config;
    expect(
      (
        await post(
          srv.url,
          '/v2/repository/models/identity_fp32/load',
          JSON.stringify({ parameters: { config: JSON.stringify(plain) } }),
        )
      ).status,
    ).toBe(200);
    expect(srv.logs.filter((l) => l.startsWith('W') && /ignored|no response cache/.test(l))).toEqual([]);
  });
});
