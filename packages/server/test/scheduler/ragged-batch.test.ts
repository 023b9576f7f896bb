/**
 * Ragged batching (`allow_ragged_batch`, `batch_input`, `batch_output`) as Triton's ONNX Runtime
 * backend does it: through the real server on the generated `ragged` model (the dynamic batcher, the
 * default scheduler, warmup), the batch-input kinds and the scatter layout on their own, and the
 * load-time refusals with Triton's messages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { PackedTensor } from '@tritonserver-ts/protocol';

import type { BatchInput } from '../../src/repository/model-config.js';
import { batchInputTensor, scatteredShape } from '../../src/runtime/batch-io.js';
import { layoutInputs, layoutSplitOutputs, type BatchLayout } from '../../src/scheduler/ragged.js';
import { get, post, startTestServer, type TestServer } from '../helpers/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({
    only: ['ragged', 'simple'],
    modelControlMode: 'explicit',
    loadModels: ['ragged'],
  });
});
afterAll(async () => {
  await srv.close();
});

interface JsonOutput {
  name: string;
  datatype: string;
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

const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

/** The `ragged` model's config as JSON (the load API's `config` parameter), to patch. */
function raggedConfig(): Record<string, unknown> {
  const batchInput = (kind: string, target: string, dataType: string): Record<string, unknown> => ({
    kind,
    target_name: [target],
    data_type: dataType,
    source_input: ['RAGGED_INPUT'],
  });
  return {
    backend: 'onnxruntime',
    max_batch_size: 8,
    input: [{ name: 'RAGGED_INPUT', data_type: 'TYPE_FP32', dims: [-1], allow_ragged_batch: true }],
    batch_input: [
      batchInput('BATCH_ACCUMULATED_ELEMENT_COUNT', 'INDEX', 'TYPE_FP32'),
      batchInput('BATCH_ELEMENT_COUNT', 'COUNT', 'TYPE_INT32'),
      batchInput('BATCH_MAX_ELEMENT_COUNT_AS_SHAPE', 'MAX_COUNT', 'TYPE_INT32'),
      batchInput('BATCH_ITEM_SHAPE', 'ITEM_SHAPE', 'TYPE_INT32'),
    ],
    output: [
      { name: 'SUM', data_type: 'TYPE_FP32', dims: [1] },
      { name: 'RAGGED_OUTPUT', data_type: 'TYPE_FP32', dims: [-1] },
      { name: 'INDEX_OUTPUT', data_type: 'TYPE_FP32', dims: [1] },
      { name: 'COUNT_OUTPUT', data_type: 'TYPE_INT32', dims: [1] },
      { name: 'MAX_OUTPUT', data_type: 'TYPE_INT64', dims: [1] },
      { name: 'ITEM_SHAPE_OUTPUT', data_type: 'TYPE_INT32', dims: [1] },
    ],
    batch_output: [
      {
        target_name: ['RAGGED_OUTPUT'],
        kind: 'BATCH_SCATTER_WITH_INPUT_SHAPE',
        source_input: ['RAGGED_INPUT'],
      },
    ],
    dynamic_batching: { max_queue_delay_microseconds: 200_000 },
    instance_group: [{ kind: 'KIND_CPU', count: 1 }],
  };
}

function loadBody(config: Record<string, unknown>): string {
  return JSON.stringify({ parameters: { config: JSON.stringify(config) } });
}

/** Loads `ragged` from its config.pbtxt again (undoes a load with a config override). */
async function reloadFromDisk(): Promise<void> {
  const r = await post(srv.url, '/v2/repository/models/ragged/load', '{}');
  expect(r.status, r.text).toBe(200);
}

describe('ragged batching through the server', () => {
  it('batches requests of different lengths into one execution; each gets its own answer', async () => {
    const before = await counts();
    const requests = [
      [1, 2, 3],
      [4.5, -5, 6, 7],
      [8, 9, 10, -11, 12.25],
    ];
    const answers = await Promise.all(requests.map((values) => inferRagged(values)));
    const after = await counts();
    // Three requests, one execution: batched although their shapes differ.
    expect(after.inference - before.inference).toBe(3);
    expect(after.execution - before.execution).toBe(1);

    const spans: [number, number][] = [];
    answers.forEach((out, i) => {
      const values = requests[i] as number[];
      const n = values.length;
      // Computed by the model from the 1-D concatenation and the INDEX / COUNT batch inputs.
      expect(out.get('SUM')).toMatchObject({ datatype: 'FP32', shape: [1, 1], data: [sum(values)] });
      // Scattered back by the request's own input shape.
      expect(out.get('RAGGED_OUTPUT')).toMatchObject({ shape: [1, n], data: values.map((v) => 2 * v) });
      // The batch inputs, echoed per request: BATCH_ELEMENT_COUNT, BATCH_ITEM_SHAPE ...
      expect(out.get('COUNT_OUTPUT')).toMatchObject({ datatype: 'INT32', shape: [1, 1], data: [n] });
      expect(out.get('ITEM_SHAPE_OUTPUT')).toMatchObject({ datatype: 'INT32', shape: [1, 1], data: [n] });
      // ... BATCH_MAX_ELEMENT_COUNT_AS_SHAPE: the longest request of the batch, for every request ...
      expect(out.get('MAX_OUTPUT')).toMatchObject({ datatype: 'INT64', shape: [1, 1], data: [5] });
      // ... and BATCH_ACCUMULATED_ELEMENT_COUNT: where the request ends in the concatenation.
      const end = out.get('INDEX_OUTPUT')?.data[0] ?? -1;
      spans.push([end - n, end]);
    });
    // The requests' spans tile the 12 elements in batch order.
    spans.sort((a, b) => a[0] - b[0]);
    let at = 0;
    for (const [start, end] of spans) {
      expect(start).toBe(at);
      at = end;
    }
    expect(at).toBe(12);
  });

  it('runs a request that arrives alone as a batch of one', async () => {
    const before = await counts();
    const out = await inferRagged([0.5, 1.5]);
    expect((await counts()).execution - before.execution).toBe(1);
    expect(out.get('SUM')?.data).toEqual([2]);
    expect(out.get('RAGGED_OUTPUT')).toMatchObject({ shape: [1, 2], data: [1, 3] });
    expect(out.get('INDEX_OUTPUT')?.data).toEqual([2]);
    expect(out.get('COUNT_OUTPUT')?.data).toEqual([2]);
    expect(out.get('MAX_OUTPUT')?.data).toEqual([2]);
  });

  it('serves ragged requests without dynamic batching (default scheduler), one execution each', async () => {
    const config = raggedConfig();
    delete config.dynamic_batching;
    const loaded = await post(srv.url, '/v2/repository/models/ragged/load', loadBody(config));
    expect(loaded.status, loaded.text).toBe(200);
    try {
      const before = await counts();
      const requests = [[1, 2, 3, 4, 5, 6], [7]];
      const answers = await Promise.all(requests.map((values) => inferRagged(values)));
      expect((await counts()).execution - before.execution).toBe(2);
      answers.forEach((out, i) => {
        const values = requests[i] as number[];
        expect(out.get('SUM')?.data).toEqual([sum(values)]);
        expect(out.get('RAGGED_OUTPUT')?.data).toEqual(values.map((v) => 2 * v));
        // Alone in its batch: ends at its own length, and is the longest.
        expect(out.get('INDEX_OUTPUT')?.data).toEqual([values.length]);
        expect(out.get('MAX_OUTPUT')?.data).toEqual([values.length]);
      });
    } finally {
      await reloadFromDisk();
    }
  });

  it('warms up a ragged model (the batch inputs are computed for the warmup sample)', async () => {
    const config = raggedConfig();
    config.model_warmup = [
      {
        name: 'three_values',
        batch_size: 1,
        count: 2,
        inputs: { RAGGED_INPUT: { data_type: 'TYPE_FP32', dims: [3], random_data: true } },
      },
    ];
    const loaded = await post(srv.url, '/v2/repository/models/ragged/load', loadBody(config));
    try {
      expect(loaded.status, loaded.text).toBe(200);
      expect((await inferRagged([2, 3])).get('SUM')?.data).toEqual([5]);
    } finally {
      await reloadFromDisk();
    }
  });
});

describe("batch input kinds (Triton's backend input collector)", () => {
  const input = (
    kind: BatchInput['kind'],
    data_type: BatchInput['data_type'] = 'TYPE_INT32',
  ): BatchInput => ({
    kind,
    target_name: ['B'],
    data_type,
    source_input: ['X'],
  });
  const of = (b: BatchInput, shapes: number[][]): { shape: number[]; data: number[] } => {
    const t = batchInputTensor(b, 'B', shapes);
    return { shape: [...t.shape], data: Array.from(t.data as Int32Array, Number) };
  };

  it("gives the user guide's example: requests [1,3], [1,4], [1,5] → INDEX [3, 7, 12]", () => {
    expect(
      of(input('BATCH_ACCUMULATED_ELEMENT_COUNT', 'TYPE_FP32'), [
        [1, 3],
        [1, 4],
        [1, 5],
      ]),
    ).toEqual({
      shape: [3],
      data: [3, 7, 12],
    });
  });

  // A request of batch size 2 counts as one request with all its elements; item shapes are per row.
  const shapes = [
    [1, 3],
    [2, 2],
    [1, 5],
  ];

  it('counts elements per request', () => {
    expect(of(input('BATCH_ELEMENT_COUNT'), shapes)).toEqual({ shape: [3], data: [3, 4, 5] });
    expect(of(input('BATCH_ACCUMULATED_ELEMENT_COUNT'), shapes)).toEqual({ shape: [3], data: [3, 7, 12] });
    expect(of(input('BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO'), shapes)).toEqual({
      shape: [4],
      data: [0, 3, 7, 12],
    });
  });

  it('gives the largest element count as the shape', () => {
    expect(of(input('BATCH_MAX_ELEMENT_COUNT_AS_SHAPE'), shapes).shape).toEqual([5]);
  });

  it('gives every batch item its shape without the batch dimension, as rows or flattened', () => {
    expect(of(input('BATCH_ITEM_SHAPE'), shapes)).toEqual({ shape: [4, 1], data: [3, 2, 2, 5] });
    expect(of(input('BATCH_ITEM_SHAPE_FLATTEN'), shapes)).toEqual({ shape: [4], data: [3, 2, 2, 5] });
    const rank2 = [
      [1, 2, 3],
      [2, 1, 4],
    ];
    expect(of(input('BATCH_ITEM_SHAPE'), rank2)).toEqual({ shape: [3, 2], data: [2, 3, 1, 4, 1, 4] });
    expect(of(input('BATCH_ITEM_SHAPE_FLATTEN'), rank2)).toEqual({ shape: [6], data: [2, 3, 1, 4, 1, 4] });
  });

  it('uses the configured data type (FP32, else INT32)', () => {
    expect(batchInputTensor(input('BATCH_ELEMENT_COUNT', 'TYPE_FP32'), 'B', shapes)).toMatchObject({
      datatype: 'FP32',
      data: Float32Array.of(3, 4, 5),
    });
    expect(batchInputTensor(input('BATCH_ELEMENT_COUNT'), 'B', shapes).data).toBeInstanceOf(Int32Array);
  });
});

describe('ragged layout of an execution', () => {
  const tensor = (name: string, shape: number[], values: number[]): PackedTensor => ({
    name,
    datatype: 'FP32',
    shape,
    data: Float32Array.from(values),
  });
  const layout: BatchLayout = {
    raggedInputs: new Set(['X']),
    batchInputs: [
      {
        kind: 'BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO',
        target_name: ['OFFSETS', 'OFFSETS_TOO'],
        data_type: 'TYPE_INT32',
        source_input: ['X'],
      },
    ],
    scatter: new Map([['Y', { source: 'X', template: [-1, -1, 2] }]]),
  };
  const requests = [
    new Map([
      ['X', tensor('X', [1, 2], [1, 2])],
      ['W', tensor('W', [1, 1], [10])],
    ]),
    new Map([
      ['X', tensor('X', [1, 3], [3, 4, 5])],
      ['W', tensor('W', [1, 1], [20])],
    ]),
  ];

  it('concatenates ragged inputs into one dimension, batches the others, feeds every batch-input target', () => {
    const inputs = layoutInputs(requests, layout);
    expect(inputs.get('X')).toMatchObject({ shape: [5], data: Float32Array.of(1, 2, 3, 4, 5) });
    expect(inputs.get('W')).toMatchObject({ shape: [2, 1], data: Float32Array.of(10, 20) });
    for (const target of ['OFFSETS', 'OFFSETS_TOO']) {
      expect(inputs.get(target)).toMatchObject({ name: target, shape: [3], data: Int32Array.of(0, 2, 5) });
    }
  });

  it("scatters a batch output by each request's source shape, splits the others by rows", () => {
    const outputs = new Map([
      ['Y', tensor('Y', [10], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])],
      ['Z', tensor('Z', [2, 1], [7, 8])],
    ]);
    const parts = layoutSplitOutputs(outputs, requests, [1, 1], layout);
    expect(parts[0]?.get('Y')).toMatchObject({ shape: [1, 2, 2], data: Float32Array.of(0, 1, 2, 3) });
    expect(parts[1]?.get('Y')).toMatchObject({ shape: [1, 3, 2], data: Float32Array.of(4, 5, 6, 7, 8, 9) });
    expect(parts[1]?.get('Z')).toMatchObject({ shape: [1, 1], data: Float32Array.of(8) });
  });

  it('fills only the variable dimensions of the output shape from the source shape', () => {
    expect(scatteredShape('Y', { source: 'X', template: [-1, 4] }, [2, 7])).toEqual([2, 4]);
    expect(() => scatteredShape('Y', { source: 'X', template: [-1, -1, -1] }, [1, 3])).toThrow(
      "batch output 'Y': shape [-1,-1,-1] has a variable dimension 2 that input 'X' of shape [1,3] does not have",
    );
  });

  it('refuses an output too small for its scatter', () => {
    const outputs = new Map([['Y', tensor('Y', [4], [0, 1, 2, 3])]]);
    expect(() => layoutSplitOutputs(outputs, requests, [1, 1], layout)).toThrow(
      "output 'Y' has 4 elements, but scattering it by the shapes of input 'X' needs 10",
    );
  });
});

describe("load-time checks with Triton's messages", () => {
  type Patch = (c: Record<string, unknown>) => void;
  const batchInputs = (c: Record<string, unknown>): Record<string, unknown>[] =>
    c.batch_input as Record<string, unknown>[];
  const batchOutput = (c: Record<string, unknown>): Record<string, unknown> =>
    (c.batch_output as Record<string, unknown>[])[0] as Record<string, unknown>;

  it.each<[string, Patch, string]>([
    // model_config_utils.cc ValidateBatchIO
    [
      'a batch input with two source inputs',
      (c) => (batchInputs(c)[1]!.source_input = ['RAGGED_INPUT', 'RAGGED_INPUT']),
      "batch input kind 'BATCH_ELEMENT_COUNT' expects 1 source input, got 2 for ragged",
    ],
    [
      'a batch input that is neither INT32 nor FP32',
      (c) => (batchInputs(c)[1]!.data_type = 'TYPE_INT64'),
      'batch input data type must be TYPE_INT32 or TYPE_FP32 for ragged',
    ],
    [
      'a batch input whose source is not an input',
      (c) => (batchInputs(c)[0]!.source_input = ['NOPE']),
      "unknown source input name 'NOPE' for ragged",
    ],
    [
      'a batch output without a source input',
      (c) => (batchOutput(c).source_input = []),
      "batch output kind 'BATCH_SCATTER_WITH_INPUT_SHAPE' expects 1 source input, got 0 for ragged",
    ],
    [
      'a batch output whose target is not an output',
      (c) => (batchOutput(c).target_name = ['NOPE']),
      "unknown target output name 'NOPE' for ragged",
    ],
    [
      'a batch output naming a target twice',
      (c) => (batchOutput(c).target_name = ['RAGGED_OUTPUT', 'RAGGED_OUTPUT']),
      "target output name 'RAGGED_OUTPUT' can only be specified once for ragged",
    ],
    // onnxruntime.cc ValidateInputs: the model's inputs are the config's plus one per batch input
    [
      'a config missing one of the batch inputs the model takes',
      (c) => (c.batch_input = batchInputs(c).slice(0, 3)),
      "unable to load model 'ragged', configuration expects 4 inputs, model provides 5",
    ],
    // Triton's backend finds these only at execution; here the load fails, worded like its checks
    // of configured inputs.
    [
      'a batch input of another type than the model input',
      (c) => (batchInputs(c)[1]!.data_type = 'TYPE_FP32'),
      "unable to load model 'ragged', configuration expects datatype TYPE_FP32 for input 'COUNT', model provides TYPE_INT32",
    ],
    [
      'a batch input the model does not take',
      (c) => (batchInputs(c)[3]!.target_name = ['ELSEWHERE']),
      "unexpected inference input 'ELSEWHERE', allowed inputs are: RAGGED_INPUT, INDEX, COUNT, MAX_COUNT, ITEM_SHAPE",
    ],
  ])('refuses %s', async (_, patch, message) => {
    const config = raggedConfig();
    patch(config);
    const r = await post(srv.url, '/v2/repository/models/ragged/load', loadBody(config));
    expect(r.status, r.text).toBe(500);
    expect((r.json as { error: string }).error).toContain(message);
    // The version that was serving keeps serving.
    expect((await get(srv.url, '/v2/models/ragged/ready')).status).toBe(200);
  });

  it('refuses a ragged input the model does not take as [-1] (onnxruntime.cc ValidateInputs)', async () => {
    const io = (name: string): Record<string, unknown> => ({ name, data_type: 'TYPE_INT32', dims: [16] });
    const config = {
      backend: 'onnxruntime',
      max_batch_size: 8,
      input: [{ ...io('INPUT0'), allow_ragged_batch: true }, io('INPUT1')],
      output: [io('OUTPUT0'), io('OUTPUT1')],
      instance_group: [{ kind: 'KIND_CPU', count: 1 }],
    };
    const r = await post(srv.url, '/v2/repository/models/simple/load', loadBody(config));
    expect(r.status, r.text).toBe(500);
    expect((r.json as { error: string }).error).toContain(
      "unable to load model 'simple', configuration expects model provides input with shape [-1]  for ragged input 'INPUT0', model provides [-1,16]",
    );
  });
});
