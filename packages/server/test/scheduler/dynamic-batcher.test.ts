import { afterEach, describe, expect, it, vi } from 'vitest';

import { BytesList, type PackedTensor } from '@tritonserver-ts/protocol';

import type { ModelDynamicBatching } from '../../src/repository/model-config.js';
import { createDynamicBatcher } from '../../src/scheduler/dynamic-batcher.js';
import { QUEUE_FULL_MESSAGE, TIMEOUT_EXPIRED_MESSAGE } from '../../src/scheduler/errors.js';
import type { SchedulerRequest } from '../../src/scheduler/types.js';
import { ModelStatistics } from '../../src/statistics/index.js';
import { ControlledModel, dynamicBatching, flush, int32Request, queuePolicy, rowBases } from './helpers.js';

/** A clock that follows the faked `Date`, so batching delays advance with `vi.advanceTimersByTime`. */
const fakeClock = (): bigint => BigInt(Date.now()) * 1_000_000n;

function setup(
  db: Partial<ModelDynamicBatching>,
  options: { instances?: number; maxBatchSize?: number } = {},
) {
  const model = new ControlledModel(options.instances ?? 1);
  const statistics = new ModelStatistics('m', '1');
  const scheduler = createDynamicBatcher({
    modelName: 'm',
    modelVersion: '1',
    instances: model.instances,
    maxBatchSize: options.maxBatchSize ?? 8,
    dynamicBatching: dynamicBatching(db),
    statistics,
    clock: fakeClock,
  });
  return { model, statistics, scheduler };
}

function data(t: PackedTensor | undefined): number[] {
  return [...((t?.data ?? new Int32Array()) as Int32Array)];
}

afterEach(() => {
  vi.useRealTimers();
});

describe('dynamic batcher: forming batches', () => {
  it('sends a batch as soon as it reaches the preferred size, and holds the rest for the queue delay', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { model, scheduler, statistics } = setup({
      preferred_batch_size: [4],
      max_queue_delay_microseconds: 100_000,
    });
    const results = [1, 2, 3, 4, 5].map((b) => scheduler.enqueue(int32Request(b)));
    await model.waitForStarted(1);
    expect(model.started.map(rowBases)).toEqual([[1, 2, 3, 4]]);
    model.started[0]?.release();
    await flush();
    // The fifth request waits for company until the delay passes.
    vi.advanceTimersByTime(99);
    await flush();
    expect(model.started).toHaveLength(1);
    vi.advanceTimersByTime(1);
    await model.waitForStarted(2);
    expect(rowBases(model.started[1] as never)).toEqual([5]);
    model.started[1]?.release();
    const outs = await Promise.all(results);
    expect(outs.map((o) => data(o.outputs.get('y')))).toEqual([
      [2, 2],
      [4, 4],
      [6, 6],
      [8, 8],
      [10, 10],
    ]);
    const snap = statistics.snapshot();
    expect(snap.execution_count).toBe(2n);
    expect(snap.inference_count).toBe(5n);
    expect(snap.inference_stats.queue.count).toBe(5n);
    expect(snap.inference_stats.compute_infer.count).toBe(5n);
    expect(snap.batch_stats.map((b) => [b.batch_size, b.compute_infer.count])).toEqual([
      [1n, 1n],
      [4n, 1n],
    ]);
  });

  it('with no delay, batches whatever queued while the instance was busy', async () => {
    const { model, scheduler } = setup({});
    const results = [1, 2, 3, 4].map((b) => scheduler.enqueue(int32Request(b)));
    await model.waitForStarted(1);
    expect(model.started.map(rowBases)).toEqual([[1]]);
    model.started[0]?.release();
    await model.waitForStarted(2);
    expect(rowBases(model.started[1] as never)).toEqual([2, 3, 4]);
    model.started[1]?.release();
    await Promise.all(results);
  });

  it('holds a batch for a sub-millisecond max_queue_delay_microseconds, not for a whole timer millisecond', async () => {
    // A clock the test moves by hand (real timers): the batch must go on the first look after the
    // oldest request has waited 300 µs. With whole-millisecond timers it would wait ≥ 1 ms of real time.
    let nowNs = 1_000_000_000n;
    const model = new ControlledModel(1);
    const scheduler = createDynamicBatcher({
      modelName: 'm',
      modelVersion: '1',
      instances: model.instances,
      maxBatchSize: 8,
      dynamicBatching: dynamicBatching({ max_queue_delay_microseconds: 300 }),
      clock: () => nowNs,
    });
    const first = scheduler.enqueue(int32Request(1));
    await flush();
    expect(model.started).toHaveLength(0);
    nowNs += 200_000n;
    const second = scheduler.enqueue(int32Request(2));
    nowNs += 99_999n;
    await flush();
    expect(model.started).toHaveLength(0);
    nowNs += 1n;
    await flush();
    expect(model.started.map(rowBases)).toEqual([[1, 2]]);
    model.started[0]?.release();
    await Promise.all([first, second]);
  });

  it('combines multi-row requests up to max_batch_size without splitting one, and splits outputs back', async () => {
    const { model, scheduler, statistics } = setup({}, { maxBatchSize: 8 });
    const busy = scheduler.enqueue(int32Request(0));
    await model.waitForStarted(1);
    const a = scheduler.enqueue(int32Request(10, 3));
    const b = scheduler.enqueue(int32Request(20, 3));
    const c = scheduler.enqueue(int32Request(30, 3));
    model.started[0]?.release();
    await model.waitForStarted(2);
    expect(rowBases(model.started[1] as never)).toEqual([10, 11, 12, 20, 21, 22]);
    model.started[1]?.release();
    await model.waitForStarted(3);
    expect(rowBases(model.started[2] as never)).toEqual([30, 31, 32]);
    model.started[2]?.release();
    const [ra, rb, rc] = await Promise.all([a, b, c, busy]);
    expect(ra?.outputs.get('y')?.shape).toEqual([3, 2]);
    expect(data(ra?.outputs.get('y'))).toEqual([20, 20, 22, 22, 24, 24]);
    expect(data(rb?.outputs.get('y'))).toEqual([40, 40, 42, 42, 44, 44]);
    expect(data(rc?.outputs.get('y'))).toEqual([60, 60, 62, 62, 64, 64]);
    const snap = statistics.snapshot();
    expect(snap.inference_count).toBe(10n);
    expect(snap.execution_count).toBe(3n);
    expect(snap.batch_stats.map((s) => s.batch_size)).toEqual([1n, 3n, 6n]);
  });

  it('concatenates and splits BYTES tensors per request', async () => {
    const { model, scheduler } = setup({});
    const busy = scheduler.enqueue(int32Request(0));
    await model.waitForStarted(1);
    const bytesRequest = (values: string[]): SchedulerRequest => ({
      inputs: new Map([
        ['s', { name: 's', datatype: 'BYTES', shape: [values.length, 1], data: BytesList.from(values) }],
      ]),
      batchSize: values.length,
      priority: 0,
      receivedAt: process.hrtime.bigint(),
    });
    const a = scheduler.enqueue(bytesRequest(['apple']));
    const b = scheduler.enqueue(bytesRequest(['banana', 'cherry']));
    model.started[0]?.release();
    await model.waitForStarted(2);
    expect(model.started[1]?.inputs.get('s')?.shape).toEqual([3, 1]);
    model.started[1]?.release();
    const [ra, rb] = await Promise.all([a, b, busy]);
    const dec = (t: PackedTensor | undefined): string[] => (t?.data as BytesList).toStrings();
    expect(dec(ra?.outputs.get('t'))).toEqual(['apple']);
    expect(rb?.outputs.get('t')?.shape).toEqual([2, 1]);
    expect(dec(rb?.outputs.get('t'))).toEqual(['banana', 'cherry']);
  });

  it('never batches requests whose non-batch dims differ', async () => {
    const { model, scheduler } = setup({});
    const busy = scheduler.enqueue(int32Request(0));
    await model.waitForStarted(1);
    const a = scheduler.enqueue(int32Request(1, 1, { cols: 2 }));
    const b = scheduler.enqueue(int32Request(2, 1, { cols: 3 }));
    model.started[0]?.release();
    await model.waitForStarted(2);
    expect(model.started[1]?.inputs.get('x')?.shape).toEqual([1, 2]);
    model.started[1]?.release();
    await model.waitForStarted(3);
    expect(model.started[2]?.inputs.get('x')?.shape).toEqual([1, 3]);
    model.started[2]?.release();
    await Promise.all([a, b, busy]);
  });
});

describe('dynamic batcher: ordering and priorities', () => {
  it('delivers responses in request order with preserve_ordering, even when a later batch finishes first', async () => {
    const { model, scheduler } = setup(
      { preserve_ordering: true, preferred_batch_size: [1] },
      { instances: 2 },
    );
    const order: number[] = [];
    const a = scheduler.enqueue(int32Request(1)).then(() => order.push(1));
    const b = scheduler.enqueue(int32Request(2)).then(() => order.push(2));
    await model.waitForStarted(2);
    model.started[1]?.release();
    await flush();
    expect(order).toEqual([]);
    model.started[0]?.release();
    await Promise.all([a, b]);
    expect(order).toEqual([1, 2]);
  });

  it('without preserve_ordering, a batch that finishes first answers first', async () => {
    const { model, scheduler } = setup({ preferred_batch_size: [1] }, { instances: 2 });
    const order: number[] = [];
    const a = scheduler.enqueue(int32Request(1)).then(() => order.push(1));
    const b = scheduler.enqueue(int32Request(2)).then(() => order.push(2));
    await model.waitForStarted(2);
    model.started[1]?.release();
    await b;
    expect(order).toEqual([2]);
    model.started[0]?.release();
    await a;
  });

  it('serves higher priority levels first; priority 0 or out of range means the default level', async () => {
    const { model, scheduler } = setup(
      { priority_levels: 3, default_priority_level: 2 },
      { maxBatchSize: 1 },
    );
    const busy = scheduler.enqueue(int32Request(0));
    await model.waitForStarted(1);
    const rs = [
      scheduler.enqueue(int32Request(30, 1, { priority: 3 })),
      scheduler.enqueue(int32Request(20, 1, { priority: 0 })),
      scheduler.enqueue(int32Request(10, 1, { priority: 1 })),
      scheduler.enqueue(int32Request(21, 1, { priority: 99 })),
    ];
    for (let i = 0; i < 5; i++) {
      await model.waitForStarted(i + 1);
      model.started[i]?.release();
    }
    await Promise.all([busy, ...rs]);
    expect(model.started.map((s) => rowBases(s)[0])).toEqual([0, 10, 20, 21, 30]);
  });
});

describe('dynamic batcher: queue policies', () => {
  it('rejects a request beyond max_queue_size with Triton error text and UNAVAILABLE (503)', async () => {
    const { model, scheduler, statistics } = setup(
      { default_queue_policy: queuePolicy({ max_queue_size: 2 }) },
      { maxBatchSize: 1 },
    );
    const running = scheduler.enqueue(int32Request(0));
    await model.waitForStarted(1);
    const queued = [scheduler.enqueue(int32Request(1)), scheduler.enqueue(int32Request(2))];
    const error: unknown = await scheduler.enqueue(int32Request(3)).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'UNAVAILABLE', message: QUEUE_FULL_MESSAGE });
    for (let i = 0; i < 3; i++) {
      await model.waitForStarted(i + 1);
      model.started[i]?.release();
    }
    await Promise.all([running, ...queued]);
    const snap = statistics.snapshot();
    expect(snap.inference_stats.success.count).toBe(3n);
    expect(snap.inference_stats.fail.count).toBe(1n);
    expect(snap.failuresByReason.REJECTED).toBe(1n);
  });

  it('applies max_queue_size per priority level from priority_queue_policy', async () => {
    const { model, scheduler } = setup(
      {
        priority_levels: 2,
        default_priority_level: 2,
        priority_queue_policy: { '1': queuePolicy({ max_queue_size: 1 }) },
      },
      { maxBatchSize: 1 },
    );
    const running = scheduler.enqueue(int32Request(0));
    await model.waitForStarted(1);
    const ok = [
      scheduler.enqueue(int32Request(1, 1, { priority: 1 })),
      scheduler.enqueue(int32Request(2, 1, { priority: 2 })),
      scheduler.enqueue(int32Request(3, 1, { priority: 2 })),
    ];
    await expect(scheduler.enqueue(int32Request(4, 1, { priority: 1 }))).rejects.toMatchObject({
      message: QUEUE_FULL_MESSAGE,
    });
    for (let i = 0; i < 4; i++) {
      await model.waitForStarted(i + 1);
      model.started[i]?.release();
    }
    await Promise.all([running, ...ok]);
  });

  it('rejects a request still queued at its timeout under REJECT', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { model, scheduler, statistics } = setup(
      { default_queue_policy: queuePolicy({ default_timeout_microseconds: 50_000 }) },
      { maxBatchSize: 1 },
    );
    const running = scheduler.enqueue(int32Request(0));
    await model.waitForStarted(1);
    const late = scheduler.enqueue(int32Request(1)).catch((e: unknown) => e);
    vi.advanceTimersByTime(49);
    await flush();
    expect(scheduler.pendingCount).toBe(2);
    vi.advanceTimersByTime(1);
    expect(await late).toMatchObject({
      kind: 'UNAVAILABLE',
      message: TIMEOUT_EXPIRED_MESSAGE,
    });
    model.started[0]?.release();
    await running;
    expect(model.started).toHaveLength(1);
    expect(statistics.snapshot().failuresByReason.REJECTED).toBe(1n);
  });

  it('lets a request timeout shorten but never lengthen the default when allow_timeout_override is set', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { model, scheduler } = setup(
      {
        default_queue_policy: queuePolicy({
          default_timeout_microseconds: 50_000,
          allow_timeout_override: true,
        }),
      },
      { maxBatchSize: 1 },
    );
    const running = scheduler.enqueue(int32Request(0));
    await model.waitForStarted(1);
    const short = scheduler.enqueue(int32Request(1, 1, { timeoutUs: 10_000 })).catch((e: unknown) => e);
    const long = scheduler.enqueue(int32Request(2, 1, { timeoutUs: 10_000_000 })).catch((e: unknown) => e);
    vi.advanceTimersByTime(10);
    expect(await short).toMatchObject({ message: TIMEOUT_EXPIRED_MESSAGE });
    vi.advanceTimersByTime(40);
    expect(await long).toMatchObject({ message: TIMEOUT_EXPIRED_MESSAGE });
    model.started[0]?.release();
    await running;
  });

  it('ignores the request timeout when allow_timeout_override is off', async () => {
    const { model, scheduler } = setup({ default_queue_policy: queuePolicy() }, { maxBatchSize: 1 });
    const running = scheduler.enqueue(int32Request(0));
    await model.waitForStarted(1);
    const r = scheduler.enqueue(int32Request(1, 1, { timeoutUs: 1 }));
    await new Promise((resolve) => setTimeout(resolve, 5));
    model.started[0]?.release();
    await model.waitForStarted(2);
    model.started[1]?.release();
    await expect(Promise.all([running, r])).resolves.toHaveLength(2);
  });

  it('moves an expired request behind the unexpired ones under DELAY, and still serves it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { model, scheduler, statistics } = setup(
      { default_queue_policy: queuePolicy({ timeout_action: 'DELAY', allow_timeout_override: true }) },
      { maxBatchSize: 1 },
    );
    const running = scheduler.enqueue(int32Request(0));
    await model.waitForStarted(1);
    const delayed = scheduler.enqueue(int32Request(1, 1, { timeoutUs: 10_000 }));
    const fresh = scheduler.enqueue(int32Request(2));
    vi.advanceTimersByTime(20);
    for (let i = 0; i < 3; i++) {
      await model.waitForStarted(i + 1);
      model.started[i]?.release();
    }
    await Promise.all([running, delayed, fresh]);
    expect(model.started.map((s) => rowBases(s)[0])).toEqual([0, 2, 1]);
    expect(statistics.snapshot().inference_stats.fail.count).toBe(0n);
  });
});

describe('dynamic batcher: instances', () => {
  it('keeps N instances busy at once and batches the overflow', async () => {
    const { model, scheduler, statistics } = setup({}, { instances: 2 });
    const rs = Array.from({ length: 6 }, (_, i) => scheduler.enqueue(int32Request(i)));
    await model.waitForStarted(2);
    expect(model.running).toBe(2);
    model.started[0]?.release();
    await model.waitForStarted(3);
    expect(rowBases(model.started[2] as never)).toEqual([2, 3, 4, 5]);
    model.started[1]?.release();
    model.started[2]?.release();
    await Promise.all(rs);
    expect(model.maxConcurrent).toBe(2);
    const snap = statistics.snapshot();
    expect(snap.execution_count).toBe(3n);
    expect(snap.inference_count).toBe(6n);
    expect(snap.inference_stats.success.count).toBe(6n);
    expect(snap.pendingRequests).toBe(0);
  });
});
