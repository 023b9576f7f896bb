/**
 * The Oldest strategy of the sequence batcher, as Triton's `OldestSequenceBatch`: each instance has
 * `max_candidate_sequences` slots (default `max_batch_size`, at least 1) and its own dynamic batcher
 * (`oldest.preferred_batch_size`, `max_queue_delay_microseconds`, `preserve_ordering`). A slot sends
 * its sequence's next request to that batcher only once the previous one has completed, so a batch
 * holds at most one request per sequence and the oldest requests go first; there are no padding
 * rows. A sequence's END leaves its slot when it is sent to the batcher (a backlogged sequence
 * taking the slot waits for that request to complete).
 * @packageDocumentation
 */
import type { ServerError } from '../common/errors.js';
import type { ModelSequenceBatching } from '../repository/model-config.js';
import type { ModelInstance } from '../runtime/types.js';
import type { ModelStatistics } from '../statistics/model-statistics.js';
import { SchedulingEngine } from './engine.js';
import { SchedulerRejection } from './errors.js';
import { PriorityBatchQueue } from './priority-batch-queue.js';
import type { BatchLayout } from './ragged.js';
import { SEQUENCE_END_FLAG } from './sequence-control-tensors.js';
import type {
  SequenceBatcherHooks,
  SequenceRequest,
  SequenceSlot,
  SequenceStrategy,
} from './sequence-slot.js';

/** Options of {@link OldestSequenceStrategy}. */
export interface OldestSequenceOptions {
  readonly instances: readonly ModelInstance[];
  readonly slots: readonly (readonly SequenceSlot[])[];
  readonly statistics: ModelStatistics;
  readonly batching: boolean;
  readonly maxBatchSize: number;
  readonly oldest: NonNullable<ModelSequenceBatching['oldest']>;
  readonly hooks: SequenceBatcherHooks;
  readonly batchLayout?: BatchLayout;
  readonly clock: () => bigint;
}

interface SlotQueue {
  readonly waiting: SequenceRequest[];
  inFlight: boolean;
}

/** See the module documentation. */
export class OldestSequenceStrategy implements SequenceStrategy {
  readonly #engines: SchedulingEngine[];
  readonly #queues = new Map<SequenceSlot, SlotQueue>();
  readonly #hooks: SequenceBatcherHooks;
  #waiting = 0;

  constructor(options: OldestSequenceOptions) {
    this.#hooks = options.hooks;
    for (const slots of options.slots)
      for (const slot of slots) this.#queues.set(slot, { waiting: [], inFlight: false });
    const o = options.oldest;
    this.#engines = options.instances.map(
      (instance) =>
        new SchedulingEngine({
          queue: new PriorityBatchQueue({
            maxBatchSize: options.maxBatchSize,
            dynamicBatching: {
              preferred_batch_size: o.preferred_batch_size,
              max_queue_delay_microseconds: o.max_queue_delay_microseconds,
              preserve_ordering: o.preserve_ordering,
              priority_levels: 0,
              default_priority_level: 0,
              priority_queue_policy: {},
            },
          }),
          instances: [instance],
          statistics: options.statistics,
          batching: options.batching,
          preserveOrdering: o.preserve_ordering,
          clock: options.clock,
          onOutputs: (request, outputs) => options.hooks.executed(request, outputs),
          ...(options.batchLayout === undefined ? {} : { batchLayout: options.batchLayout }),
        }),
    );
  }

  get pendingCount(): number {
    return this.#waiting + this.#engines.reduce((n, e) => n + e.pendingCount, 0);
  }

  enqueue(slot: SequenceSlot, items: readonly SequenceRequest[]): void {
    const queue = this.#queues.get(slot) as SlotQueue;
    queue.waiting.push(...items);
    this.#waiting += items.length;
    if (!queue.inFlight) this.#next(slot, queue);
  }

  forceEnd(slot: SequenceSlot): void {
    const queue = this.#queues.get(slot) as SlotQueue;
    if (!queue.inFlight && queue.waiting.length === 0) this.#hooks.release(slot);
    else slot.releasePending = true;
  }

  cancelQueued(slot: SequenceSlot): void {
    const queue = this.#queues.get(slot) as SlotQueue;
    const cancelled = queue.waiting.splice(0);
    this.#waiting -= cancelled.length;
    for (const item of cancelled) item.reject(SchedulerRejection.cancelled());
  }

  /** Sends the slot's next request to its instance's batcher (Triton's `CompleteAndNext`). */
  #next(slot: SequenceSlot, queue: SlotQueue): void {
    queue.inFlight = false;
    const item = queue.waiting.shift();
    if (item === undefined) {
      if (slot.releasePending) this.#hooks.release(slot);
      return;
    }
    this.#waiting -= 1;
    const key = slot.key as string;
    this.#hooks.prepare(slot, item);
    queue.inFlight = true;
    const engine = this.#engines[slot.instance] as SchedulingEngine;
    const done = (): void => this.#next(slot, queue);
    engine.enqueue(item.request).then(
      (response) => {
        item.resolve(response);
        done();
      },
      (error: ServerError) => {
        item.reject(error);
        if (error.kind === 'CANCELLED') this.#hooks.cancelled(slot, key);
        done();
      },
    );
    if ((item.flags & SEQUENCE_END_FLAG) !== 0 || (queue.waiting.length === 0 && slot.releasePending)) {
      this.#hooks.release(slot);
    }
  }

  async drain(): Promise<void> {
    await Promise.all(this.#engines.map((e) => e.drain()));
  }
}
