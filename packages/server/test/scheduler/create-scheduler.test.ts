import { describe, expect, it } from 'vitest';

import type { ModelSequenceBatching } from '../../src/repository/model-config.js';
import { createScheduler } from '../../src/scheduler/create-scheduler.js';
import { SequenceBatcher } from '../../src/scheduler/sequence-batcher.js';
import { ModelStatistics } from '../../src/statistics/index.js';
import { ControlledModel, dynamicBatching, int32Request, makeConfig, rowBases } from './helpers.js';

describe('createScheduler', () => {
  it('uses the dynamic batcher only when dynamic_batching is set and the model batches', async () => {
    const model = new ControlledModel(1);
    const scheduler = createScheduler({
      modelName: 'm',
      modelVersion: '1',
      config: makeConfig({ max_batch_size: 4, dynamic_batching: dynamicBatching() }),
      instances: model.instances,
    });
    const rs = [1, 2, 3].map((b) => scheduler.enqueue(int32Request(b)));
    await model.waitForStarted(1);
    model.started[0]?.release();
    await model.waitForStarted(2);
    expect(rowBases(model.started[1] as never)).toEqual([2, 3]);
    model.started[1]?.release();
    await Promise.all(rs);
  });

  it('runs every request alone without dynamic_batching, and passes non-batching inputs untouched', async () => {
    const model = new ControlledModel(1);
    const statistics = new ModelStatistics('m', '1');
    const scheduler = createScheduler({
      modelName: 'm',
      modelVersion: '1',
      config: makeConfig({ max_batch_size: 0, dynamic_batching: dynamicBatching() }),
      instances: model.instances,
      statistics,
    });
    const a = int32Request(1, 3);
    const rs = [scheduler.enqueue(a), scheduler.enqueue(int32Request(2, 3))];
    await model.waitForStarted(1);
    expect(model.started[0]?.inputs).toBe(a.inputs);
    model.started[0]?.release();
    await model.waitForStarted(2);
    model.started[1]?.release();
    await Promise.all(rs);
    // A non-batching model counts one inference per request, as batch size 1.
    const snap = statistics.snapshot();
    expect(snap.inference_count).toBe(2n);
    expect(snap.execution_count).toBe(2n);
    expect(snap.batch_stats.map((b) => b.batch_size)).toEqual([1n]);
  });

  it('gives sequence_batching the sequence batcher and refuses an empty instance list as INTERNAL', () => {
    const model = new ControlledModel(1);
    const sequence = {
      control_input: [],
      state: [],
      max_sequence_idle_microseconds: 1_000_000,
    } as unknown as ModelSequenceBatching;
    const scheduler = createScheduler({
      modelName: 'm',
      modelVersion: '1',
      config: makeConfig({ sequence_batching: sequence }),
      instances: model.instances,
    });
    expect(scheduler).toBeInstanceOf(SequenceBatcher);
    expect(() =>
      createScheduler({ modelName: 'm', modelVersion: '1', config: makeConfig(), instances: [] }),
    ).toThrow(/at least one model instance/);
  });
});
