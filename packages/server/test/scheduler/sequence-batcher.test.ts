/**
 * The sequence batcher against controlled instances (issue 28): Direct slots, padding rows and their
 * controls, the backlog, END releasing a slot, idle timeout, cancellation of the rest of a sequence,
 * Oldest's one-request-in-flight per sequence, Triton's refusals, and the statistics counts.
 */
import { describe, expect, it } from 'vitest';

import type { ModelSequenceBatching } from '../../src/repository/model-config.js';
import { createScheduler } from '../../src/scheduler/create-scheduler.js';
import type { Scheduler, SchedulerRequest } from '../../src/scheduler/types.js';
import { ModelStatistics } from '../../src/statistics/model-statistics.js';
import { ControlledModel, flush, int32Request, makeConfig, type StartedExecution } from './helpers.js';

const int32Control = (name: string, kind: string) => ({
  name,
  control: [
    {
      kind: kind as 'CONTROL_SEQUENCE_START',
      int32_false_true: [0, 1],
      fp32_false_true: [],
      bool_false_true: [],
      data_type: 'TYPE_INVALID' as const,
    },
  ],
});

function sequenceBatching(
  init: Partial<ModelSequenceBatching> & { oldestOnly?: boolean } = {},
): ModelSequenceBatching {
  const { oldestOnly, ...rest } = init;
  const sb: ModelSequenceBatching = {
    max_sequence_idle_microseconds: 1_000_000,
    control_input: [
      int32Control('START', 'CONTROL_SEQUENCE_START'),
      int32Control('END', 'CONTROL_SEQUENCE_END'),
      int32Control('READY', 'CONTROL_SEQUENCE_READY'),
      {
        name: 'CORRID',
        control: [
          {
            kind: 'CONTROL_SEQUENCE_CORRID',
            int32_false_true: [],
            fp32_false_true: [],
            bool_false_true: [],
            data_type: 'TYPE_UINT64',
          },
        ],
      },
    ],
    state: [],
    iterative_sequence: false,
    direct: { max_queue_delay_microseconds: 0, minimum_slot_utilization: 0 },
    ...rest,
  };
  if (oldestOnly === true) delete sb.direct;
  return sb;
}

function make(
  model: ControlledModel,
  options: { maxBatchSize?: number; sb?: Partial<ModelSequenceBatching> & { oldestOnly?: boolean } } = {},
): { scheduler: Scheduler; stats: ModelStatistics } {
  const stats = new ModelStatistics('seq', '1');
  const scheduler = createScheduler({
    modelName: 'seq',
    modelVersion: '1',
    config: makeConfig({
      name: 'seq',
      max_batch_size: options.maxBatchSize ?? 2,
      sequence_batching: sequenceBatching(options.sb),
    }),
    instances: model.instances,
    statistics: stats,
  });
  return { scheduler, stats };
}

function seq(
  base: number,
  id: number | bigint | string,
  flags: number,
  signal?: AbortSignal,
): SchedulerRequest {
  return { ...int32Request(base, 1, signal === undefined ? {} : { signal }), correlationId: id, flags };
}

/** Per row of an execution: [x, START, END, READY, CORRID]. */
function rows(exec: StartedExecution): (number | bigint)[][] {
  const n = exec.rows;
  const x = exec.inputs.get('x')?.data as Int32Array;
  const col = (name: string) => exec.inputs.get(name)?.data as Int32Array | BigUint64Array;
  return Array.from({ length: n }, (_, r) => [
    x[r * 2] as number,
    col('START')[r] as number,
    col('END')[r] as number,
    col('READY')[r] as number,
    col('CORRID')[r] as bigint,
  ]);
}

describe('Direct strategy', () => {
  it('runs a sequence in slot 0 with its controls, and pads an idle lower slot', async () => {
    const model = new ControlledModel(1);
    const { scheduler, stats } = make(model);
    const a1 = scheduler.enqueue(seq(10, 7, 1));
    await model.waitForStarted(1);
    expect(rows(model.started[0] as StartedExecution)).toEqual([[10, 1, 0, 1, 7n]]);
    // B starts while A's first request runs: it gets slot 1.
    const b1 = scheduler.enqueue(seq(20, 8, 1));
    const a2 = scheduler.enqueue(seq(11, 7, 2));
    model.started[0]?.release();
    await model.waitForStarted(2);
    expect(rows(model.started[1] as StartedExecution)).toEqual([
      [11, 0, 1, 1, 7n],
      [20, 1, 0, 1, 8n],
    ]);
    model.started[1]?.release();
    await Promise.all([a1, a2, b1]);
    // A ended: slot 0 is free, B's next request runs in slot 1 behind a padding row.
    const b2 = scheduler.enqueue(seq(21, 8, 2));
    await model.waitForStarted(3);
    expect(rows(model.started[2] as StartedExecution)).toEqual([
      [0, 0, 0, 0, 0n],
      [21, 0, 1, 1, 8n],
    ]);
    model.started[2]?.release();
    expect((await b2).outputs.get('y')?.data).toEqual(Int32Array.of(42, 42));
    const s = stats.snapshot();
    expect(Number(s.execution_count)).toBe(3);
    expect(Number(s.inference_count)).toBe(4);
    expect(Number(s.inference_stats.success.count)).toBe(4);
    expect(
      Object.fromEntries(s.batch_stats.map((b) => [Number(b.batch_size), Number(b.compute_infer.count)])),
    ).toEqual({
      1: 1,
      2: 2,
    });
  });

  it("refuses with Triton's messages", async () => {
    const model = new ControlledModel(1);
    const { scheduler, stats } = make(model);
    await expect(scheduler.enqueue(seq(1, 5, 0))).rejects.toThrow(
      "inference request for sequence 5 to model 'seq' must specify the START flag on the first request of the sequence",
    );
    await expect(scheduler.enqueue(seq(1, 0, 1))).rejects.toThrow(
      "inference request to model 'seq' must specify a non-zero or non-empty correlation ID",
    );
    await expect(scheduler.enqueue({ ...int32Request(1, 1), flags: 1 })).rejects.toThrow(
      'must specify a non-zero or non-empty correlation ID',
    );
    await expect(scheduler.enqueue({ ...int32Request(1, 2), correlationId: 3, flags: 1 })).rejects.toThrow(
      "inference request to model 'seq' must specify batch-size 1 due to requirements of sequence batcher",
    );
    await expect(scheduler.enqueue(seq(1, 'abc', 1))).rejects.toThrow(
      "sequence batching control 'CORRID' data-type is 'BYTES', but model 'seq' expects 'UINT64'",
    );
    expect(stats.snapshot().inference_stats.fail.count).toBe(5n);
  });

  it('keeps backlogged sequences until a slot is released by END', async () => {
    const model = new ControlledModel(1);
    const { scheduler } = make(model, { maxBatchSize: 1 });
    const a = scheduler.enqueue(seq(1, 1, 1));
    await model.waitForStarted(1);
    const b = scheduler.enqueue(seq(2, 2, 1));
    const b2 = scheduler.enqueue(seq(3, 2, 2));
    model.started[0]?.release();
    await a;
    await flush();
    // The only slot is still A's (no END yet): B waits.
    expect(model.started).toHaveLength(1);
    const aEnd = scheduler.enqueue(seq(4, 1, 2));
    await model.waitForStarted(2);
    model.started[1]?.release();
    await aEnd;
    await model.waitForStarted(3);
    expect(rows(model.started[2] as StartedExecution)).toEqual([[2, 1, 0, 1, 2n]]);
    model.started[2]?.release();
    await model.waitForStarted(4);
    model.started[3]?.release();
    await Promise.all([b, b2]);
  });

  it('frees the slot of a sequence idle longer than max_sequence_idle_microseconds', async () => {
    const model = new ControlledModel(1);
    const { scheduler } = make(model, { maxBatchSize: 1, sb: { max_sequence_idle_microseconds: 50_000 } });
    const a = scheduler.enqueue(seq(1, 1, 1));
    await model.waitForStarted(1);
    model.started[0]?.release();
    await a;
    await new Promise((r) => setTimeout(r, 120));
    await expect(scheduler.enqueue(seq(2, 1, 0))).rejects.toThrow(
      "inference request for sequence 1 to model 'seq' must specify the START flag",
    );
    // The slot is free again for another sequence.
    const b = scheduler.enqueue(seq(3, 2, 3));
    await model.waitForStarted(2);
    model.started[1]?.release();
    await b;
  });

  it('cancels the rest of a sequence when one of its queued requests is cancelled', async () => {
    const model = new ControlledModel(1);
    const { scheduler } = make(model, { maxBatchSize: 1 });
    const a1 = scheduler.enqueue(seq(1, 1, 1));
    await model.waitForStarted(1);
    const abort = new AbortController();
    const a2 = scheduler.enqueue(seq(2, 1, 0, abort.signal));
    const a3 = scheduler.enqueue(seq(3, 1, 2));
    abort.abort();
    await expect(a2).rejects.toThrow('Request was cancelled');
    await expect(a3).rejects.toThrow('Request was cancelled');
    model.started[0]?.release();
    await a1;
    await expect(scheduler.enqueue(seq(4, 1, 0))).rejects.toThrow('must specify the START flag');
    await scheduler.drain();
  });
});

describe('Oldest strategy', () => {
  it('sends one request per sequence at a time and batches sequences together', async () => {
    const model = new ControlledModel(1);
    const { scheduler, stats } = make(model, {
      maxBatchSize: 4,
      sb: {
        oldestOnly: true,
        oldest: {
          max_candidate_sequences: 4,
          preferred_batch_size: [4],
          max_queue_delay_microseconds: 0,
          preserve_ordering: false,
        },
      },
    });
    const first = scheduler.enqueue(seq(1, 1, 1));
    await model.waitForStarted(1);
    const pending = [
      scheduler.enqueue(seq(2, 1, 2)),
      scheduler.enqueue(seq(10, 2, 1)),
      scheduler.enqueue(seq(11, 2, 2)),
      scheduler.enqueue(seq(20, 3, 3)),
    ];
    model.started[0]?.release();
    await first;
    // The next batch forms at once from what is issued: sequence 2's START and sequence 3
    // (START|END); sequence 1's END is issued only once its previous request has completed.
    await model.waitForStarted(2);
    const byCorrid = (e: StartedExecution) => rows(e).sort((x, y) => Number(x[4]) - Number(y[4]));
    expect(byCorrid(model.started[1] as StartedExecution)).toEqual([
      [10, 1, 0, 1, 2n],
      [20, 1, 1, 1, 3n],
    ]);
    // The rest run as they are issued; never two requests of one sequence in a batch.
    let done = false;
    const all = Promise.all(pending).then(() => (done = true));
    for (let i = 1; !done; i++) {
      await Promise.race([model.waitForStarted(i + 1), all]);
      model.started[i]?.release();
      await flush();
    }
    const seen = new Map<bigint, number[]>();
    for (const exec of model.started) {
      const ids = rows(exec).map((r) => r[4] as bigint);
      expect(new Set(ids).size).toBe(ids.length);
      for (const r of rows(exec))
        seen.set(r[4] as bigint, [...(seen.get(r[4] as bigint) ?? []), r[0] as number]);
    }
    expect(Object.fromEntries(seen)).toEqual({ 1: [1, 2], 2: [10, 11], 3: [20] });
    expect(Number(stats.snapshot().inference_count)).toBe(5);
    expect(Number(stats.snapshot().execution_count)).toBe(model.started.length);
  });
});
