import type { ModelInferResponse } from '@tritonserver-ts/protocol/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { CoreStreamResponse } from '../../src/common/types.js';
import { addSubPythonModel, blsPythonModel, decoupledPythonModel } from '../../src/testing/index.js';
import { GrpcTestClient } from '../grpc/helpers.js';
import { inferJson, outputData, startPythonServer, type PythonTestServer } from './helpers.js';

const bls = (target: string, values: number[]) => ({
  inputs: [
    { name: 'INPUT0', datatype: 'FP32', shape: [values.length], data: values },
    { name: 'TARGET', datatype: 'BYTES', shape: [1], data: [target] },
  ],
});

describe('python backend: BLS, decoupled models and gRPC', () => {
  let server: PythonTestServer;
  beforeAll(async () => {
    server = await startPythonServer([blsPythonModel(), decoupledPythonModel(), addSubPythonModel()], {
      onnx: ['identity_fp32'],
      grpcPort: 0,
    });
  }, 30_000);
  afterAll(async () => {
    await server.close();
  });

  it('runs an ONNX model of the same server through exec() and async_exec()', async () => {
    const r = await inferJson(server.url, 'py_bls', bls('identity_fp32', [1.5, -2, 3]));
    expect(r.status).toBe(200);
    expect(outputData(r.body, 'OUTPUT0')).toEqual([1.5, -2, 3]);
    expect(outputData(r.body, 'SYNC_OUTPUT')).toEqual([1.5, -2, 3]);
    const stats = (await (await fetch(`${server.url}/v2/models/identity_fp32/stats`)).json()) as {
      model_stats: { inference_stats: { success: { count: number } } }[];
    };
    expect(stats.model_stats[0]?.inference_stats.success.count).toBe(2);
  });

  it('returns the called model’s error in response.error(), not as an exception', async () => {
    const r = await inferJson(server.url, 'py_bls', bls('no_such_model', [1]));
    expect(r.body.error).toBe("BLS failed: Request for unknown model: 'no_such_model' is not found");
    // The model passed the called model's error code on (an unknown model: 400, as the server answers it directly).
    expect(r.status).toBe(400);
  });

  it('streams N responses and a final flag to the core’s onResponse sink', async () => {
    const seen: CoreStreamResponse[] = [];
    const done = await server.running.server.infer({
      modelName: 'py_decoupled',
      id: 'stream-1',
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.from([3]) }],
      onResponse: (r) => seen.push(r),
    });
    expect(done.outputs).toEqual([]);
    expect(seen.map((r) => r.final)).toEqual([false, false, false, true]);
    expect(
      seen.slice(0, 3).map((r) => Array.from(r.response?.outputs[0]?.tensor.data as Int32Array)),
    ).toEqual([[0], [1], [2]]);
    expect(seen[0]?.response?.id).toBe('stream-1');
    expect(seen[3]?.response).toBeUndefined();

    const errors: CoreStreamResponse[] = [];
    await server.running.server.infer({
      modelName: 'py_decoupled',
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.from([-1]) }],
      onResponse: (r) => errors.push(r),
    });
    expect(errors).toHaveLength(1);
    expect(errors[0]?.final).toBe(true);
    expect(errors[0]?.error?.kind).toBe('INVALID_ARG');
    expect(errors[0]?.error?.message).toBe('n must be >= 0');

    const none: CoreStreamResponse[] = [];
    await server.running.server.infer({
      modelName: 'py_decoupled',
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.from([0]) }],
      onResponse: (r) => none.push(r),
    });
    expect(none).toEqual([{ final: true }]);
    const stats = (await (await fetch(`${server.url}/v2/models/py_decoupled/stats`)).json()) as {
      model_stats: { inference_stats: { success: { count: number } } }[];
    };
    expect(stats.model_stats[0]?.inference_stats.success.count).toBe(3);
  });

  it('refuses a decoupled model on HTTP /infer', async () => {
    const r = await inferJson(server.url, 'py_decoupled', {
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: [1] }],
    });
    expect(r.status).toBe(501);
  });

  it('serves a python model over gRPC ModelInfer', async () => {
    const client = new GrpcTestClient(server.running.grpcUrl);
    try {
      const f32 = (v: number[]) => new Uint8Array(Float32Array.from(v).buffer);
      const r = await client.call<ModelInferResponse>('ModelInfer', {
        modelName: 'py_add',
        id: 'g1',
        inputs: [
          { name: 'INPUT0', datatype: 'FP32', shape: [4n] },
          { name: 'INPUT1', datatype: 'FP32', shape: [4n] },
        ],
        outputs: [{ name: 'OUTPUT1' }],
        rawInputContents: [f32([1, 2, 3, 4]), f32([1, 1, 1, 1])],
      });
      expect(r.id).toBe('g1');
      expect(r.outputs.map((o) => o.name)).toEqual(['OUTPUT1']);
      const raw = r.rawOutputContents[0] as Uint8Array;
      expect(Array.from(new Float32Array(new Uint8Array(raw).buffer))).toEqual([0, 1, 2, 3]);
    } finally {
      client.close();
    }
  });
});
