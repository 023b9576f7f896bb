import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { BytesList, PackedTensor } from '@tritonserver-ts/protocol';

import type { ModelWarmup } from '../../src/repository/model-config.js';
import type { ExecutionResult, ModelInstance } from '../../src/runtime/types.js';
import { createDefaultScheduler } from '../../src/scheduler/default-scheduler.js';
import { ReloadableScheduler } from '../../src/scheduler/reloadable-scheduler.js';
import { runWarmup } from '../../src/scheduler/warmup.js';
import { ControlledModel, flush, int32Request, makeConfig } from './helpers.js';

/** An instance that records the inputs of every execution and answers at once. */
function recordingInstance(
  name: string,
  seen: { instance: string; inputs: ReadonlyMap<string, PackedTensor> }[],
): ModelInstance {
  return {
    name,
    kind: 'KIND_CPU',
    execute: (inputs): Promise<ExecutionResult> => {
      seen.push({ instance: name, inputs });
      return Promise.resolve({
        outputs: new Map(),
        timings: { computeInputNs: 0n, computeInferNs: 0n, computeOutputNs: 0n },
      });
    },
    dispose: () => Promise.resolve(),
  };
}

function sample(init: Partial<ModelWarmup>): ModelWarmup {
  return { name: 'w', batch_size: 0, inputs: {}, count: 0, ...init };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'warmup-'));
  await mkdir(path.join(dir, 'warmup'));
  await writeFile(
    path.join(dir, 'warmup', 'x.bin'),
    Buffer.from(new Int32Array([7, 8, 9, 10, 11, 12]).buffer),
  );
  const s = Buffer.alloc(4 + 2 + 4 + 3);
  s.writeUInt32LE(2, 0);
  s.write('hi', 4);
  s.writeUInt32LE(3, 6);
  s.write('you', 10);
  await writeFile(path.join(dir, 'warmup', 's.bin'), s);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('runWarmup', () => {
  it('runs each sample count times on every instance with the batch dim and zero/random/file data', async () => {
    const seen: { instance: string; inputs: ReadonlyMap<string, PackedTensor> }[] = [];
    const config = makeConfig({
      max_batch_size: 4,
      model_warmup: [
        sample({
          name: 'zeros',
          batch_size: 3,
          count: 2,
          inputs: { x: { data_type: 'TYPE_FP32', dims: [2], zero_data: true } },
        }),
        sample({
          name: 'file',
          batch_size: 2,
          inputs: {
            x: { data_type: 'TYPE_INT32', dims: [3], input_data_file: 'x.bin' },
            s: { data_type: 'TYPE_STRING', dims: [1], input_data_file: 's.bin' },
            r: { data_type: 'TYPE_FP32', dims: [5], random_data: true },
          },
        }),
      ],
    });
    const instances = [recordingInstance('a', seen), recordingInstance('b', seen)];
    const report = await runWarmup(config, instances, { modelDirectory: dir });
    expect(report).toEqual({ samples: 2, executions: 6 });
    expect(seen.map((s) => s.instance)).toEqual(['a', 'a', 'b', 'b', 'a', 'b']);
    const zeros = seen[0]?.inputs.get('x');
    expect(zeros?.shape).toEqual([3, 2]);
    expect([...(zeros?.data as Float32Array)]).toEqual([0, 0, 0, 0, 0, 0]);
    const file = seen[4]?.inputs;
    expect([...(file?.get('x')?.data as Int32Array)]).toEqual([7, 8, 9, 10, 11, 12]);
    expect((file?.get('s')?.data as BytesList).toStrings()).toEqual(['hi', 'you']);
    const random = file?.get('r')?.data as Float32Array;
    expect(random).toHaveLength(10);
    expect(random.every((v) => v >= 0 && v < 1)).toBe(true);
    // Random, not zero-filled: ten exact zeros from Math.random() would be a lost write.
    expect(random.some((v) => v !== 0)).toBe(true);
  });

  it('refuses a file smaller than the input with INVALID_ARG naming the sample', async () => {
    const config = makeConfig({
      max_batch_size: 0,
      model_warmup: [
        sample({
          name: 'short',
          inputs: { x: { data_type: 'TYPE_INT32', dims: [100], input_data_file: 'x.bin' } },
        }),
      ],
    });
    await expect(
      runWarmup(config, [recordingInstance('a', [])], { modelDirectory: dir }),
    ).rejects.toMatchObject({
      kind: 'INVALID_ARG',
      message: expect.stringContaining("warmup sample 'short': input 'x' expects 400 bytes") as unknown,
    });
  });

  it('refuses a path that leaves warmup/ and a sample without a data source', async () => {
    const escape = makeConfig({
      model_warmup: [
        sample({ inputs: { x: { data_type: 'TYPE_INT32', dims: [1], input_data_file: '../x.bin' } } }),
      ],
    });
    await expect(runWarmup(escape, [recordingInstance('a', [])], { modelDirectory: dir })).rejects.toThrow(
      /must stay inside warmup/,
    );
    const none = makeConfig({
      model_warmup: [sample({ inputs: { x: { data_type: 'TYPE_INT32', dims: [1] } } })],
    });
    await expect(runWarmup(none, [recordingInstance('a', [])])).rejects.toThrow(/exactly one of/);
  });

  it('fails with INTERNAL when an execution fails', async () => {
    const failing: ModelInstance = {
      name: 'bad',
      kind: 'KIND_CPU',
      execute: () => Promise.reject(new Error('boom')),
      dispose: () => Promise.resolve(),
    };
    const config = makeConfig({
      model_warmup: [sample({ inputs: { x: { data_type: 'TYPE_INT32', dims: [1], zero_data: true } } })],
    });
    await expect(runWarmup(config, [failing])).rejects.toMatchObject({
      kind: 'INTERNAL',
      message: expect.stringContaining('boom') as unknown,
    });
  });
});

describe('ReloadableScheduler', () => {
  it('sends new requests to the new scheduler while the old one finishes what it holds, then retires it', async () => {
    const oldModel = new ControlledModel(1);
    const newModel = new ControlledModel(1);
    const make = (m: ControlledModel) =>
      createDefaultScheduler({ modelName: 'm', modelVersion: '1', instances: m.instances, maxBatchSize: 8 });
    const reloadable = new ReloadableScheduler(make(oldModel));
    const inFlight = reloadable.enqueue(int32Request(1));
    const queuedOnOld = reloadable.enqueue(int32Request(2));
    await oldModel.waitForStarted(1);
    let retired = false;
    const replaced = reloadable.replace(make(newModel), () => {
      retired = true;
      return Promise.resolve();
    });
    const afterReload = reloadable.enqueue(int32Request(3));
    await newModel.waitForStarted(1);
    newModel.started[0]?.release();
    await expect(afterReload).resolves.toBeDefined();
    expect(reloadable.pendingCount).toBe(2);
    expect(retired).toBe(false);
    oldModel.started[0]?.release();
    await oldModel.waitForStarted(2);
    oldModel.started[1]?.release();
    await expect(Promise.all([inFlight, queuedOnOld])).resolves.toHaveLength(2);
    await replaced;
    await flush();
    expect(retired).toBe(true);
    expect(reloadable.pendingCount).toBe(0);
  });
});
