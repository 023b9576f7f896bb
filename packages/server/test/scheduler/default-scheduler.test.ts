import { getEventListeners } from 'node:events';

import { describe, expect, it } from 'vitest';

import { ServerError } from '../../src/common/errors.js';
import { createDefaultScheduler } from '../../src/scheduler/default-scheduler.js';
import { CANCELLED_MESSAGE, STOPPING_MESSAGE } from '../../src/scheduler/errors.js';
import { ModelStatistics } from '../../src/statistics/index.js';
import { ControlledModel, flush, int32Request, rowBases } from './helpers.js';

function setup(instances = 1) {
  const model = new ControlledModel(instances);
  const statistics = new ModelStatistics('m', '1');
  const scheduler = createDefaultScheduler({
    modelName: 'm',
    modelVersion: '1',
    instances: model.instances,
    maxBatchSize: 8,
    statistics,
  });
  return { model, statistics, scheduler };
}

describe('default scheduler', () => {
  it('runs each request alone, in arrival order, when the only instance is busy', async () => {
    const { model, scheduler } = setup(1);
    const results = [1, 2, 3].map((b) => scheduler.enqueue(int32Request(b * 10, 2)));
    await model.waitForStarted(1);
    expect(scheduler.pendingCount).toBe(3);
    for (let i = 0; i < 3; i++) {
      await model.waitForStarted(i + 1);
      expect(model.started).toHaveLength(i + 1);
      model.started[i]?.release();
      await flush();
    }
    expect(model.started.map(rowBases)).toEqual([
      [10, 11],
      [20, 21],
      [30, 31],
    ]);
    const outs = await Promise.all(results);
    expect([...(outs[1]?.outputs.get('y')?.data as Int32Array)]).toEqual([40, 40, 42, 42]);
    expect(scheduler.pendingCount).toBe(0);
  });

  it('runs N executions at once on N instances and queues the rest', async () => {
    const { model, scheduler, statistics } = setup(3);
    const results = Array.from({ length: 5 }, (_, i) => scheduler.enqueue(int32Request(i)));
    await model.waitForStarted(3);
    await flush();
    expect(model.started).toHaveLength(3);
    expect(new Set(model.started.map((s) => s.instance)).size).toBe(3);
    expect(statistics.pendingRequests).toBe(2);
    model.started[0]?.release();
    model.started[1]?.release();
    await model.waitForStarted(5);
    expect(model.maxConcurrent).toBe(3);
    for (const s of model.started.slice(2)) s.release();
    await Promise.all(results);
    const snap = statistics.snapshot();
    expect(snap.execution_count).toBe(5n);
    expect(snap.inference_count).toBe(5n);
    expect(snap.inference_stats.success.count).toBe(5n);
    expect(snap.inference_stats.queue.count).toBe(5n);
    expect(snap.batch_stats.map((b) => [b.batch_size, b.compute_infer.count])).toEqual([[1n, 5n]]);
  });

  it('drops a queued request whose signal aborts, with CANCELLED, and counts it as a failure', async () => {
    const { model, scheduler, statistics } = setup(1);
    const first = scheduler.enqueue(int32Request(1));
    const controller = new AbortController();
    const second = scheduler.enqueue(int32Request(2, 1, { signal: controller.signal }));
    await model.waitForStarted(1);
    controller.abort();
    await expect(second).rejects.toMatchObject({ kind: 'CANCELLED', message: CANCELLED_MESSAGE });
    model.started[0]?.release();
    await first;
    await flush();
    expect(model.started).toHaveLength(1);
    const snap = statistics.snapshot();
    expect(snap.failuresByReason.CANCELED).toBe(1n);
    expect(snap.inference_stats.fail.count).toBe(1n);
    expect(snap.inference_stats.success.count).toBe(1n);
  });

  it('serves many requests of one long-lived signal (a keep-alive connection), across model reloads, with one abort listener', async () => {
    // A connection's signal outlives the schedulers of the versions it used (a reload retires one):
    // the retired ones must not stay on it, and its queued requests are still cancelled on abort.
    const controller = new AbortController();
    for (let reload = 0; reload < 5; reload++) {
      const { model, scheduler } = setup(1);
      const first = scheduler.enqueue(int32Request(1, 1, { signal: controller.signal }));
      const queued = scheduler.enqueue(int32Request(2, 1, { signal: controller.signal }));
      await model.waitForStarted(1);
      model.started[0]?.release();
      await model.waitForStarted(2);
      model.started[1]?.release();
      await Promise.all([first, queued]);
      await scheduler.drain();
    }
    expect(getEventListeners(controller.signal, 'abort').length).toBeLessThanOrEqual(1);
    const { model, scheduler } = setup(1);
    const running = scheduler.enqueue(int32Request(1, 1, { signal: controller.signal }));
    const waiting = [2, 3].map((b) => scheduler.enqueue(int32Request(b, 1, { signal: controller.signal })));
    await model.waitForStarted(1);
    controller.abort();
    for (const w of waiting) await expect(w).rejects.toMatchObject({ kind: 'CANCELLED' });
    model.started[0]?.release();
    await running;
    expect(model.started).toHaveLength(1);
  });

  it('fails every request of an execution the backend fails, as INTERNAL with its message', async () => {
    const { model, scheduler, statistics } = setup(1);
    const r = scheduler.enqueue(int32Request(1));
    await model.waitForStarted(1);
    model.started[0]?.fail('onnxruntime exploded');
    const error = await r.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ kind: 'INTERNAL', message: 'onnxruntime exploded' });
    const snap = statistics.snapshot();
    expect(snap.failuresByReason.BACKEND).toBe(1n);
    expect(snap.execution_count).toBe(0n);
  });

  it('drain waits for queued and running requests, then refuses new ones as UNAVAILABLE', async () => {
    const { model, scheduler } = setup(1);
    const a = scheduler.enqueue(int32Request(1));
    const b = scheduler.enqueue(int32Request(2));
    let drained = false;
    const drain = scheduler.drain().then(() => {
      drained = true;
    });
    await expect(scheduler.enqueue(int32Request(3))).rejects.toMatchObject({
      kind: 'UNAVAILABLE',
      message: STOPPING_MESSAGE,
    });
    await model.waitForStarted(1);
    model.started[0]?.release();
    await model.waitForStarted(2);
    expect(drained).toBe(false);
    model.started[1]?.release();
    await drain;
    expect(drained).toBe(true);
    await expect(Promise.all([a, b])).resolves.toHaveLength(2);
  });
});
