/**
 * Ragged batching (`allow_ragged_batch`, `batch_input`, `batch_output`) through the real server on
 * the generated `ragged` model, plus the batch-input kinds and the load-time refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Tensor } from '@tritonserver-ts/client/protocol';

import type { BatchInput } from '../../src/repository/model-config.js';
import { batchInputTensor } from '../../src/scheduler/ragged.js';
import { get, post, startTestServer, type TestServer } from '../helpers/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ only: ['ragged'], modelControlMode: 'explicit', loadModels: ['ragged'] });
});
afterAll(async () => {
  await srv.close();
});

interface JsonOutput {
  name: string;
  shape: number[];
  data: number[];
}

async function inferRagged(values: number[]): Promise<Map<string, JsonOutput>> {
  const r = await post(
    srv.url,
    '/v2/models/ragged/infer',
    JSON.stringify({
      inputs: [{ name: 'RAGGED_INPUT', datatype: 'FP32', shape: [1, values.length], data: values }],
    }),
  );
  expect(r.status, r.text).toBe(200);
  return new Map((r.json as { outputs: JsonOutput[] }).outputs.map((o) => [o.name, o]));
}

async function counts(): Promise<{ inference: number; execution: number }> {
  const s = (await get(srv.url, '/v2/models/ragged/stats')).json as {
    model_stats: { inference_count: number; execution_count: number }[];
  };
  const m = s.model_stats[0];
  return { inference: m?.inference_count ?? 0, execution: m?.execution_count ?? 0 };
}

describe('ragged batching on the ONNX backend', () => {
  it('batches requests of different lengths into one execution and gives each its own answer', async () => {
    const before = await counts();
    const requests = [
      [1, 2, 3],
      [4, 5, 6, 7],
      [8, 9, 10, 11, 12],
    ];
    const answers = await Promise.all(requests.map((values) => inferRagged(values)));
    const after = await counts();
    // One execution for the three requests: they were batched although their shapes differ.
    expect(after.inference - before.inference).toBe(3);
    expect(after.execution - before.execution).toBe(1);
    const ends: [number, number][] = [];
    answers.forEach((out, i) => {
      const values = requests[i] as number[];
      expect(out.get('RAGGED_OUTPUT')).toMatchObject({
        shape: [1, values.length],
        data: values.map((v) => 2 * v),
      });
      expect(out.get('COUNT_OUTPUT')).toMatchObject({ shape: [1, 1], data: [values.length] });
      ends.push([out.get('INDEX_OUTPUT')?.data[0] ?? -1, values.length]);
    });
    // INDEX is BATCH_ACCUMULATED_ELEMENT_COUNT: in batch order, each request's end offset.
    ends.sort((a, b) => a[0] - b[0]);
    let total = 0;
    for (const [end, n] of ends) expect(end).toBe((total += n));
    expect(total).toBe(12);
  });

  it('runs a single request as a batch of one', async () => {
    const out = await inferRagged([0.5, 1.5]);
    expect(out.get('RAGGED_OUTPUT')).toMatchObject({ shape: [1, 2], data: [1, 3] });
    expect(out.get('INDEX_OUTPUT')?.data).toEqual([2]);
    expect(out.get('COUNT_OUTPUT')?.data).toEqual([2]);
  });
});

describe('batch input kinds', () => {
  const request = (shape: number[]): ReadonlyMap<string, Tensor> =>
    new Map([
      ['X', { name: 'X', datatype: 'FP32', shape, data: new Float32Array(shape.reduce((a, b) => a * b, 1)) }],
    ]);
  const batch = [request([1, 2, 3]), request([2, 1, 4]), request([1, 5, 1])];
  const input = (
    kind: BatchInput['kind'],
    data_type: BatchInput['data_type'] = 'TYPE_INT32',
  ): BatchInput => ({
    kind,
    target_name: ['B'],
    data_type,
    source_input: ['X'],
  });
  const of = (b: BatchInput): { shape: number[]; data: number[] } => {
    const t = batchInputTensor(b, batch);
    return { shape: [...t.shape], data: Array.from(t.data as Int32Array, Number) };
  };

  it('counts elements per batch element (every row of every request)', () => {
    expect(of(input('BATCH_ELEMENT_COUNT'))).toEqual({ shape: [4], data: [6, 4, 4, 5] });
    expect(of(input('BATCH_ACCUMULATED_ELEMENT_COUNT'))).toEqual({ shape: [4], data: [6, 10, 14, 19] });
    expect(of(input('BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO'))).toEqual({
      shape: [5],
      data: [0, 6, 10, 14, 19],
    });
    expect(of(input('BATCH_MAX_ELEMENT_COUNT_AS_SHAPE')).shape).toEqual([6]);
  });

  it('gives the item shapes, as rows or flattened', () => {
    expect(of(input('BATCH_ITEM_SHAPE'))).toEqual({ shape: [4, 2], data: [2, 3, 1, 4, 1, 4, 5, 1] });
    expect(of(input('BATCH_ITEM_SHAPE_FLATTEN'))).toEqual({ shape: [8], data: [2, 3, 1, 4, 1, 4, 5, 1] });
  });

  it('uses the configured data type', () => {
    expect(batchInputTensor(input('BATCH_ELEMENT_COUNT', 'TYPE_FP32'), batch).data).toBeInstanceOf(
      Float32Array,
    );
    expect(batchInputTensor(input('BATCH_ELEMENT_COUNT', 'TYPE_INT64'), batch).data).toBeInstanceOf(
      BigInt64Array,
    );
  });
});

describe('load-time checks', () => {
  const config = (patch: (c: Record<string, unknown>) => void): string => {
    const c: Record<string, unknown> = {
      backend: 'onnxruntime',
      max_batch_size: 8,
      input: [{ name: 'RAGGED_INPUT', data_type: 'TYPE_FP32', dims: [-1], allow_ragged_batch: true }],
      batch_input: [
        {
          kind: 'BATCH_ACCUMULATED_ELEMENT_COUNT',
          target_name: ['INDEX'],
          data_type: 'TYPE_FP32',
          source_input: ['RAGGED_INPUT'],
        },
        {
          kind: 'BATCH_ELEMENT_COUNT',
          target_name: ['COUNT'],
          data_type: 'TYPE_FP32',
          source_input: ['RAGGED_INPUT'],
        },
      ],
      output: [
        { name: 'RAGGED_OUTPUT', data_type: 'TYPE_FP32', dims: [-1] },
        { name: 'INDEX_OUTPUT', data_type: 'TYPE_FP32', dims: [1] },
        { name: 'COUNT_OUTPUT', data_type: 'TYPE_FP32', dims: [1] },
      ],
      batch_output: [
        {
          target_name: ['RAGGED_OUTPUT'],
          kind: 'BATCH_SCATTER_WITH_INPUT_SHAPE',
          source_input: ['RAGGED_INPUT'],
        },
      ],
    };
    patch(c);
    return JSON.stringify({ parameters: { config: JSON.stringify(c) } });
  };
  it.each([
    [
      'a batch input whose source is not an input',
      (c: Record<string, unknown>) =>
        ((c.batch_input as { source_input: string[] }[])[0]!.source_input = ['NOPE']),
      "batch input 'INDEX' of model 'ragged' must name exactly one source_input among the model's inputs",
    ],
    [
      'a batch input of an unsupported type',
      (c: Record<string, unknown>) =>
        ((c.batch_input as { data_type: string }[])[0]!.data_type = 'TYPE_STRING'),
      "batch input 'INDEX' of model 'ragged' has data_type TYPE_STRING; expected TYPE_INT32, TYPE_INT64 or TYPE_FP32",
    ],
    [
      'a batch input the ONNX model does not take',
      (c: Record<string, unknown>) =>
        ((c.batch_input as { target_name: string[] }[])[1]!.target_name = ['ELSEWHERE']),
      "batch input 'ELSEWHERE' of model 'ragged' is not an input of the model",
    ],
    [
      'ragged batches without batching',
      (c: Record<string, unknown>) => {
        c.max_batch_size = 0;
        c.batch_input = [];
        c.batch_output = [];
      },
      "input 'RAGGED_INPUT' of model 'ragged' allows ragged batches, which requires max_batch_size > 0",
    ],
  ])('refuses %s', async (_, patch, message) => {
    const r = await post(srv.url, '/v2/repository/models/ragged/load', config(patch));
    expect(r.status).toBe(500);
    expect((r.json as { error: string }).error).toContain(message);
    // The version that was serving keeps serving.
    expect((await get(srv.url, '/v2/models/ragged/ready')).status).toBe(200);
  });
});
