import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { batchingPythonModel } from '../../src/testing/index.js';
import { inferJson, outputData, startPythonServer, type PythonTestServer } from './helpers.js';

const one = (id: string, value: number) => ({
  id,
  inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: [value] }],
});

describe('python backend: execute gets the dynamic batcher’s requests as a list', () => {
  let server: PythonTestServer;
  beforeAll(async () => {
    server = await startPythonServer([batchingPythonModel()]);
  }, 30_000);
  afterAll(async () => {
    await server.close();
  });

  it('hands concurrent requests to one execute call, each answered with its own rows', async () => {
    const results = await Promise.all(
      [1, 2, 3, 4].map((v) => inferJson(server.url, 'py_batch', one(`r${v}`, v))),
    );
    for (const [i, r] of results.entries()) {
      expect(r.status).toBe(200);
      expect(outputData(r.body, 'OUTPUT0')).toEqual([2 * (i + 1)]);
      expect(outputData(r.body, 'REQUESTS')).toEqual([4]);
      expect(r.body.id).toBe(`r${i + 1}`);
    }
  });

  it('fails only the request answered with a TritonError, with its message and code', async () => {
    const [good, bad, good2] = await Promise.all([
      inferJson(server.url, 'py_batch', one('a', 5)),
      inferJson(server.url, 'py_batch', one('b', -1)),
      inferJson(server.url, 'py_batch', one('c', 6)),
    ]);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('negative input in request b');
    expect(good.status).toBe(200);
    expect(outputData(good.body, 'OUTPUT0')).toEqual([10]);
    expect(outputData(good.body, 'REQUESTS')).toEqual([3]);
    expect(good2.status).toBe(200);
  });

  it('fails every request of the batch when execute raises, with the Python error', async () => {
    const [a, b] = await Promise.all([
      inferJson(server.url, 'py_batch', one('a', 1)),
      inferJson(server.url, 'py_batch', one('b', 999)),
    ]);
    for (const r of [a, b]) {
      expect(r.status).toBe(500);
      expect(r.body.error).toMatch(
        /^Failed to process the request\(s\) for model instance 'py_batch_0_0', message: ValueError: execute refused input 999\n\nAt:\n {2}.*model\.py\(\d+\): execute\n$/,
      );
    }
  });

  it('refuses outputs the config does not declare, wrong datatypes and a wrong response count', async () => {
    const dtype = await inferJson(server.url, 'py_batch', one('d', 7));
    expect(dtype.status).toBe(500);
    expect(dtype.body.error).toBe(
      "output 'OUTPUT0' of model 'py_batch' has datatype INT32 but the model configuration declares FP32",
    );
    const undeclared = await inferJson(server.url, 'py_batch', one('u', 8));
    expect(undeclared.status).toBe(500);
    expect(undeclared.body.error).toContain("model 'py_batch' produced output 'SURPRISE'");
    const count = await inferJson(server.url, 'py_batch', one('n', 9));
    expect(count.status).toBe(500);
    expect(count.body.error).toContain(
      'Number of InferenceResponse objects do not match the number of InferenceRequest objects',
    );
  });

  it('records statistics as for any backend', async () => {
    const response = await fetch(`${server.url}/v2/models/py_batch/stats`);
    const stats = (await response.json()) as {
      model_stats: {
        inference_count: number;
        execution_count: number;
        inference_stats: {
          success: { count: number };
          fail: { count: number };
          compute_infer: { ns: number };
        };
        batch_stats: { batch_size: number; compute_infer: { count: number } }[];
      }[];
    };
    const s = stats.model_stats[0];
    // successes: 4 + 2; failures: 1 + 2 + 3 (before this test)
    expect(s?.inference_stats.success.count).toBe(6);
    expect(s?.inference_stats.fail.count).toBe(6);
    expect(s?.inference_stats.compute_infer.ns).toBeGreaterThan(0);
    expect(s?.execution_count).toBeGreaterThanOrEqual(5);
  });
});
