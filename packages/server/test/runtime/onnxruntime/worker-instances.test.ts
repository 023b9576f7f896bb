import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { PackedTensor } from '@tritonserver-ts/protocol';

import { listRepositoryModels } from '../../../src/repository/index.js';
import type { ModelInstanceGroup } from '../../../src/repository/model-config.js';
import type { ModelDefinition } from '../../../src/repository/types.js';
import type { RuntimeModelInstance } from '../../../src/runtime/backends.js';
import { createDynamicBatcher } from '../../../src/scheduler/dynamic-batcher.js';
import { createWorkerInstances, resolveModel } from '../../../src/runtime/index.js';
import { WorkerModelInstance } from '../../../src/runtime/onnxruntime/worker-instances.js';
import { writeTestModelRepository } from '../../../src/testing/index.js';
import { dynamicBatching } from '../../scheduler/helpers.js';

let dir: string;
let simple: ModelDefinition;
let instances: RuntimeModelInstance[] = [];

function inputs(rows: number, base: number): Map<string, PackedTensor> {
  const a = new Int32Array(rows * 16).map((_, i) => base + i);
  const b = new Int32Array(rows * 16).fill(1);
  return new Map<string, PackedTensor>([
    ['INPUT0', { name: 'INPUT0', datatype: 'INT32', shape: [rows, 16], data: a }],
    ['INPUT1', { name: 'INPUT1', datatype: 'INT32', shape: [rows, 16], data: b }],
  ]);
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'worker-inst-'));
  await writeTestModelRepository(dir, { only: ['simple'] });
  const [entry] = await listRepositoryModels([dir]);
  if (entry === undefined) throw new Error('no test model written');
  const resolved = await resolveModel(entry);
  if (!resolved.ok) throw resolved.error;
  simple = {
    ...resolved.model,
    config: {
      ...resolved.model.config,
      instance_group: [
        { ...(resolved.model.config.instance_group[0] as ModelInstanceGroup), count: 2, kind: 'KIND_CPU' },
      ],
    },
  };
  instances = await createWorkerInstances(simple, 1);
});

afterAll(async () => {
  await Promise.all(instances.map((i) => i.dispose()));
  await rm(dir, { recursive: true, force: true });
});

describe('createWorkerInstances', () => {
  it('hosts each onnxruntime instance of the instance group in its own worker, named like the runtime', () => {
    expect(instances).toHaveLength(2);
    expect(instances.every((i) => i instanceof WorkerModelInstance)).toBe(true);
    expect(instances.map((i) => [i.index, i.kind])).toEqual([
      [0, 'KIND_CPU'],
      [1, 'KIND_CPU'],
    ]);
  });

  it('executes in the worker and returns outputs and timings', async () => {
    const sent = inputs(2, 10);
    const result = await (instances[0] as RuntimeModelInstance).execute(sent);
    // The caller's arrays are copied, never transferred (detached) into the worker.
    expect(sent.get('INPUT0')?.data).toHaveLength(32);
    const sum = result.outputs.get('OUTPUT0');
    expect(sum?.shape).toEqual([2, 16]);
    expect([...(sum?.data as Int32Array)].slice(0, 3)).toEqual([11, 12, 13]);
    expect([...(result.outputs.get('OUTPUT1')?.data as Int32Array)].slice(0, 3)).toEqual([9, 10, 11]);
    expect(result.timings.computeInferNs).toBeGreaterThan(0n);
  });

  it('reuses its input buffers across executions of different sizes without mixing data', async () => {
    const instance = instances[0] as RuntimeModelInstance;
    for (const [rows, base] of [
      [4, 1000],
      [1, 2000],
      [3, 3000],
      [1, 4000],
    ] as const) {
      const result = await instance.execute(inputs(rows, base));
      const sum = result.outputs.get('OUTPUT0');
      expect(sum?.shape).toEqual([rows, 16]);
      expect([...(sum?.data as Int32Array)]).toEqual(
        Array.from({ length: rows * 16 }, (_, i) => base + i + 1),
      );
    }
  });

  it('reports backend errors from the worker with their runtime code', async () => {
    const bad = new Map<string, PackedTensor>([
      ['INPUT0', { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16) }],
    ]);
    await expect((instances[1] as RuntimeModelInstance).execute(bad)).rejects.toMatchObject({
      name: 'BackendError',
      code: 'INVALID_EXECUTION_INPUT',
    });
  });

  it('serves a dynamic batcher over both workers with outputs split back per request', async () => {
    const scheduler = createDynamicBatcher({
      modelName: 'simple',
      modelVersion: '1',
      instances,
      maxBatchSize: 8,
      dynamicBatching: dynamicBatching(),
    });
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        scheduler.enqueue({
          inputs: inputs(1, i * 100),
          batchSize: 1,
          priority: 0,
          receivedAt: process.hrtime.bigint(),
        }),
      ),
    );
    responses.forEach((r, i) => {
      expect((r.outputs.get('OUTPUT0')?.data as Int32Array)[0]).toBe(i * 100 + 1);
    });
  });

  it('refuses executions after dispose with INSTANCE_DISPOSED', async () => {
    const [extra] = await createWorkerInstances(
      {
        ...simple,
        config: {
          ...simple.config,
          instance_group: [{ ...(simple.config.instance_group[0] as ModelInstanceGroup), count: 1 }],
        },
      },
      1,
    );
    await extra?.dispose();
    await expect(extra?.execute(inputs(1, 0))).rejects.toMatchObject({ code: 'INSTANCE_DISPOSED' });
  });
});
