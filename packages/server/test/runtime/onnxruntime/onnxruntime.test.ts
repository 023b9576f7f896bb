import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BytesList, type Datatype, type PackedTensor } from '@tritonserver-ts/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { ModelDefinition } from '../../../src/repository/index.js';
import { createModelConfig } from '../../../src/repository/index.js';
import { resolveModel, type ResolveModelOptions } from '../../../src/runtime/index.js';
import type { RuntimeModelInstance } from '../../../src/runtime/index.js';
import { BackendError, createInstances, sessionOptionsFor } from '../../../src/runtime/index.js';
import {
  CLASSIFIER_LABELS,
  VERSIONED_VERSIONS,
  writeTestModelRepository,
} from '../../../src/testing/index.js';

let root: string;
const opened: RuntimeModelInstance[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'runtime-test-'));
  await writeTestModelRepository(root);
});

afterAll(async () => {
  await Promise.all(opened.map((i) => i.dispose()));
  await rm(root, { recursive: true, force: true });
});

async function definition(name: string, options: ResolveModelOptions = {}): Promise<ModelDefinition> {
  const r = await resolveModel({ name, directory: join(root, name), repository: root }, options);
  if (!r.ok) throw new Error(r.reason);
  return r.model;
}

async function instances(
  name: string,
  version = 1,
  options: ResolveModelOptions = {},
): Promise<RuntimeModelInstance[]> {
  const list = await createInstances(await definition(name, options), version);
  opened.push(...list);
  return list;
}

function tensor<D extends Datatype>(
  name: string,
  datatype: D,
  shape: number[],
  data: PackedTensor['data'],
): PackedTensor {
  return { name, datatype, shape, data };
}

async function expectBackendError(p: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  let caught: unknown;
  try {
    await p;
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(BackendError);
  expect((caught as BackendError).code).toBe(code);
  expect((caught as BackendError).message).toMatch(message);
}

describe('onnxruntime backend', () => {
  it('creates count × groups instances with Triton instance names and runs add/sub on a batch', async () => {
    const list = await instances('simple');
    expect(list.map((i) => [i.name, i.kind])).toEqual([
      ['simple_0', 'KIND_CPU'],
      ['simple_1', 'KIND_CPU'],
    ]);
    const a = Int32Array.from({ length: 32 }, (_, i) => i);
    const b = Int32Array.from({ length: 32 }, (_, i) => 2 * i + 1);
    const inputs = new Map([
      ['INPUT0', tensor('INPUT0', 'INT32', [2, 16], a)],
      ['INPUT1', tensor('INPUT1', 'INT32', [2, 16], b)],
    ]);
    const result = await (list[1] as RuntimeModelInstance).execute(inputs);
    const sum = result.outputs.get('OUTPUT0');
    const diff = result.outputs.get('OUTPUT1');
    expect(sum?.shape).toEqual([2, 16]);
    expect(sum?.datatype).toBe('INT32');
    expect(Array.from(sum?.data as Int32Array)).toEqual(Array.from(a, (x, i) => x + (b[i] as number)));
    expect(Array.from(diff?.data as Int32Array)).toEqual(Array.from(a, (x, i) => x - (b[i] as number)));
    expect(result.timings.computeInferNs).toBeGreaterThan(0n);
    expect(result.timings.computeInputNs).toBeGreaterThanOrEqual(0n);
    expect(result.timings.computeOutputNs).toBeGreaterThanOrEqual(0n);
  });

  it('runs a non-batching model with plain shapes', async () => {
    const [inst] = await instances('simple_no_batch');
    const ones = new Int32Array(16).fill(1);
    const out = await (inst as RuntimeModelInstance).execute(
      new Map([
        ['INPUT0', tensor('INPUT0', 'INT32', [16], ones)],
        ['INPUT1', tensor('INPUT1', 'INT32', [16], ones)],
      ]),
    );
    expect(out.outputs.get('OUTPUT0')?.shape).toEqual([16]);
    expect(Array.from(out.outputs.get('OUTPUT0')?.data as Int32Array)).toEqual(new Array<number>(16).fill(2));
  });

  const cases: [string, Datatype, PackedTensor['data']][] = [
    ['identity_fp32', 'FP32', Float32Array.of(1.5, -2, 3.25, 0)],
    ['identity_fp64', 'FP64', Float64Array.of(1e300, -0.5, 3, 4)],
    ['identity_fp16', 'FP16', Uint16Array.of(0x3c00, 0xc000, 0x7bff, 0x0001)],
    ['identity_int8', 'INT8', Int8Array.of(-128, 127, 0, 1)],
    ['identity_int16', 'INT16', Int16Array.of(-32768, 32767, 0, 1)],
    ['identity_int64', 'INT64', BigInt64Array.of(-(2n ** 63n), 2n ** 63n - 1n, 0n, 42n)],
    ['identity_uint8', 'UINT8', Uint8Array.of(0, 255, 7, 8)],
    ['identity_uint16', 'UINT16', Uint16Array.of(0, 65535, 7, 8)],
    ['identity_uint32', 'UINT32', Uint32Array.of(0, 4294967295, 7, 8)],
    ['identity_uint64', 'UINT64', BigUint64Array.of(0n, 2n ** 64n - 1n, 7n, 8n)],
    ['identity_bool', 'BOOL', Uint8Array.of(1, 0, 0, 1)],
  ];
  for (const [model, datatype, data] of cases) {
    it(`round-trips ${datatype} through ${model} unchanged`, async () => {
      const [inst] = await instances(model);
      const out = await (inst as RuntimeModelInstance).execute(
        new Map([['INPUT0', tensor('INPUT0', datatype, [2, 2], data)]]),
      );
      const o = out.outputs.get('OUTPUT0');
      expect(o?.datatype).toBe(datatype);
      expect(o?.shape).toEqual([2, 2]);
      // The same typed array kind (FP16 stays Uint16Array half bits, not Node 24's Float16Array).
      expect(o?.data.constructor).toBe(data.constructor);
      expect(Array.from(o?.data as ArrayLike<number | bigint>)).toEqual(
        Array.from(data as ArrayLike<number | bigint>),
      );
    });
  }

  it('round-trips BYTES as UTF-8 strings, including empty and multi-byte elements', async () => {
    const [inst] = await instances('identity_string');
    const enc = new TextEncoder();
    const elements = ['hello', '', 'crème brûlée', '寿司'].map((s) => enc.encode(s));
    const out = await (inst as RuntimeModelInstance).execute(
      new Map([['INPUT0', tensor('INPUT0', 'BYTES', [1, 4], BytesList.from(elements))]]),
    );
    const o = out.outputs.get('OUTPUT0');
    expect(o?.datatype).toBe('BYTES');
    expect((o?.data as BytesList).toStrings()).toEqual(['hello', '', 'crème brûlée', '寿司']);
  });

  it('refuses non-UTF-8 BYTES for the onnxruntime backend with a typed error', async () => {
    const [inst] = await instances('identity_string');
    await expectBackendError(
      (inst as RuntimeModelInstance).execute(
        new Map([['INPUT0', tensor('INPUT0', 'BYTES', [1, 1], BytesList.from([Uint8Array.of(0xff, 0xfe)]))]]),
      ),
      'INVALID_EXECUTION_INPUT',
      /element 0 of BYTES input 'INPUT0' is not valid UTF-8/,
    );
  });

  it('computes softmax probabilities for the classifier', async () => {
    const [inst] = await instances('classifier');
    const out = await (inst as RuntimeModelInstance).execute(
      new Map([
        ['input', tensor('input', 'FP32', [1, CLASSIFIER_LABELS.length], Float32Array.of(0, 0, 5, 0, 0))],
      ]),
    );
    const probs = Array.from(out.outputs.get('probs')?.data as Float32Array);
    expect(probs.indexOf(Math.max(...probs))).toBe(2);
    expect(probs.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
  });

  it('serves each selected version from its own file', async () => {
    const model = await definition('versioned');
    for (const v of VERSIONED_VERSIONS) {
      const [inst] = await createInstances(model, v);
      opened.push(inst as RuntimeModelInstance);
      const out = await (inst as RuntimeModelInstance).execute(
        new Map([['INPUT0', tensor('INPUT0', 'INT32', [2], Int32Array.of(10, 20))]]),
      );
      expect(Array.from(out.outputs.get('OUTPUT0')?.data as Int32Array)).toEqual([10 + v, 20 + v]);
      expect((inst as RuntimeModelInstance).version).toBe(v);
    }
    await expectBackendError(
      createInstances(model, 7),
      'INSTANCE_CREATION_FAILED',
      /version 7 of model 'versioned' is not available/,
    );
  });

  it('rejects bad execution inputs with typed errors and keeps working', async () => {
    const [inst] = await instances('identity_fp32');
    const i = inst as RuntimeModelInstance;
    await expectBackendError(
      i.execute(new Map()),
      'INVALID_EXECUTION_INPUT',
      /expected input 'INPUT0' for model 'identity_fp32' is missing/,
    );
    await expectBackendError(
      i.execute(new Map([['INPUT0', tensor('INPUT0', 'INT32', [1, 1], Int32Array.of(1))]])),
      'INVALID_EXECUTION_INPUT',
      /unexpected datatype INT32 for input 'INPUT0'.*expecting FP32/,
    );
    await expectBackendError(
      i.execute(new Map([['BOGUS', tensor('BOGUS', 'FP32', [1, 1], Float32Array.of(1))]])),
      'INVALID_EXECUTION_INPUT',
      /unexpected inference input 'BOGUS'/,
    );
    const ok = await i.execute(new Map([['INPUT0', tensor('INPUT0', 'FP32', [1, 1], Float32Array.of(9))]]));
    expect(Array.from(ok.outputs.get('OUTPUT0')?.data as Float32Array)).toEqual([9]);
    await i.dispose();
    await expectBackendError(
      i.execute(new Map([['INPUT0', tensor('INPUT0', 'FP32', [1, 1], Float32Array.of(9))]])),
      'INSTANCE_DISPOSED',
      /has been disposed/,
    );
  });

  it('fails instance creation when the config does not match the ONNX model', async () => {
    const override = {
      backend: 'onnxruntime',
      max_batch_size: 8,
      input: [{ name: 'INPUT0', data_type: 'TYPE_INT64', dims: [-1] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_INT64', dims: [-1] }],
      instance_group: [{ kind: 'KIND_CPU', count: 1 }],
    };
    const model = await definition('identity_fp32', { configOverride: override });
    await expectBackendError(
      createInstances(model, 1),
      'INSTANCE_CREATION_FAILED',
      /unexpected datatype TYPE_FP32 for inference input 'INPUT0', expecting TYPE_INT64/,
    );
    const renamed = await definition('identity_fp32', {
      configOverride: {
        ...override,
        input: [{ name: 'X', data_type: 'TYPE_FP32', dims: [-1] }],
        output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
      },
    });
    await expectBackendError(
      createInstances(renamed, 1),
      'INSTANCE_CREATION_FAILED',
      /unexpected inference input 'X', allowed inputs are: INPUT0/,
    );
    const wrongRank = await definition('identity_fp32', {
      configOverride: {
        ...override,
        input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [2, 2] }],
        output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
      },
    });
    await expectBackendError(
      createInstances(wrongRank, 1),
      'INSTANCE_CREATION_FAILED',
      /the model expects 2 dimensions/,
    );
  });

  it('runs KIND_GPU groups on the CPU only with the GPU fallback, and reports them as KIND_CPU', async () => {
    const override = {
      backend: 'onnxruntime',
      max_batch_size: 8,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
      instance_group: [{ kind: 'KIND_GPU', count: 1, gpus: [0] }],
      optimization: {
        execution_accelerators: {
          gpu_execution_accelerator: [{ name: 'tensorrt', parameters: { precision_mode: 'FP16' } }],
        },
      },
    };
    const model = await definition('identity_fp32', { configOverride: override, gpuFallback: 'cpu' });
    await expectBackendError(
      createInstances(model, 1),
      'INSTANCE_CREATION_FAILED',
      /has kind KIND_GPU but no GPUs are available/,
    );
    const list = await createInstances(model, 1, { gpuFallback: 'cpu' });
    opened.push(...list);
    expect(list.map((i) => [i.name, i.kind])).toEqual([['identity_fp32_0_0', 'KIND_CPU']]);
  });

  it('creates count instances on each GPU a KIND_GPU group lists, as Triton (count × gpus)', async () => {
    const override = {
      backend: 'onnxruntime',
      max_batch_size: 8,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
      instance_group: [
        { name: 'gpu', kind: 'KIND_GPU', count: 2, gpus: [0, 1] },
        { name: 'cpu', kind: 'KIND_CPU', count: 1 },
      ],
    };
    const model = await definition('identity_fp32', { configOverride: override, gpuFallback: 'cpu' });
    const list = await createInstances(model, 1, { gpuFallback: 'cpu' });
    opened.push(...list);
    expect(list.map((i) => i.name)).toEqual(['gpu_0', 'gpu_1', 'gpu_2', 'gpu_3', 'cpu_0']);
  });

  it('refuses a backend it cannot run with BACKEND_UNAVAILABLE', async () => {
    const model = await definition('identity_fp32');
    const tensorrt = { ...model, config: { ...model.config, backend: 'tensorrt' } };
    await expectBackendError(
      createInstances(tensorrt, 1),
      'BACKEND_UNAVAILABLE',
      /backend 'tensorrt' is not supported by tritonserver-ts/,
    );
  });
});

describe('onnxruntime session options', () => {
  it('reads Triton ORT parameter names and defaults to one thread each', () => {
    const params = (p: Record<string, string>) =>
      createModelConfig({
        name: 'm',
        parameters: Object.fromEntries(Object.entries(p).map(([k, v]) => [k, { string_value: v }])),
      });
    expect(sessionOptionsFor(params({}))).toMatchObject({
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    });
    expect(
      sessionOptionsFor(
        params({
          intra_op_thread_count: '2',
          inter_op_thread_count: '3',
          execution_mode: '1',
          enable_mem_arena: 'false',
        }),
      ),
    ).toMatchObject({
      intraOpNumThreads: 2,
      interOpNumThreads: 3,
      executionMode: 'parallel',
      enableCpuMemArena: false,
    });
    expect(
      sessionOptionsFor(createModelConfig({ optimization: { graph: { level: -1 } } })).graphOptimizationLevel,
    ).toBe('basic');
    expect(() => sessionOptionsFor(params({ execution_mode: '3' }))).toThrow(
      /execution_mode are 0 or 1 but got 3/,
    );
    expect(() => sessionOptionsFor(params({ intra_op_thread_count: 'many' }))).toThrow(
      /failed to convert 'many' to integer/,
    );
    expect(() =>
      sessionOptionsFor(
        createModelConfig({
          optimization: { execution_accelerators: { cpu_execution_accelerator: [{ name: 'openvino' }] } },
        }),
      ),
    ).toThrow(/unknown Execution Accelerator 'openvino' is requested/);
  });
});
