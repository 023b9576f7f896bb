/**
 * The Direct strategy of the sequence batcher, as Triton's `DirectSequenceBatch`: each instance has
 * `max_batch_size` slots (1 when the model does not batch); a batch holds one row per slot up to the
 * highest slot with a waiting request, each slot's next request in its row, and a padding row ("null
 * request", READY false) in a slot with nothing waiting or whose request's shape differs from the
 * batch's. The instance runs one batch at a time, at once (or, with `max_queue_delay_microseconds`
 * and `minimum_slot_utilization`, once enough slots are ready or the oldest request has waited the
 * delay). A sequence's END leaves its slot when it is taken into a batch.
 * @packageDocumentation
 */
import type { PackedTensor } from '@tritonserver-ts/protocol';

import type { ServerError } from '../common/errors.js';
import type { ModelInstance } from '../runtime/types.js';
import type { ModelStatistics } from '../statistics/model-statistics.js';
import type { QueuedRequest, SchedulingQueue, TakeResult } from './entry.js';
import { SchedulingEngine } from './engine.js';
import type { BatchLayout } from './ragged.js';
import { SEQUENCE_END_FLAG, zeroLike } from './sequence-control-tensors.js';
import type {
  SequenceBatcherHooks,
  SequenceRequest,
  SequenceSlot,
  SequenceStrategy,
} from './sequence-slot.js';

/** Options of {@link DirectSequenceStrategy}. */
export interface DirectSequenceOptions {
  readonly instances: readonly ModelInstance[];
  /** The slots of each instance (index = instance). */
  readonly slots: readonly (readonly SequenceSlot[])[];
  readonly statistics: ModelStatistics;
  readonly batching: boolean;
  readonly maxBatchSize: number;
  /** `direct.max_queue_delay_microseconds` (0 = run at once). */
  readonly maxQueueDelayUs: number;
  /** `direct.minimum_slot_utilization` (0 = run at once). */
  readonly minimumSlotUtilization: number;
  /** Control tensor names (left out of padding rows' copied inputs). */
  readonly controlNames: ReadonlySet<string>;
  readonly hooks: SequenceBatcherHooks;
  readonly batchLayout?: BatchLayout;
  readonly clock: () => bigint;
}

interface DirectItem {
  readonly slot: SequenceSlot;
  readonly item: SequenceRequest;
}

/** One instance's slot queues (see the module documentation). */
class DirectSlotQueue implements SchedulingQueue {
  readonly #queues: QueuedRequest[][];
  readonly #items = new Map<QueuedRequest, DirectItem>();
  readonly #pendingItems: DirectItem[] = [];
  readonly #options: DirectSequenceOptions;
  readonly #slots: readonly SequenceSlot[];
  #size = 0;

  constructor(slots: readonly SequenceSlot[], options: DirectSequenceOptions) {
    this.#slots = slots;
    this.#queues = slots.map(() => []);
    this.#options = options;
  }

  get size(): number {
    return this.#size;
  }

  /** Names the slot of the next admitted request (the engine admits synchronously). */
  expect(item: DirectItem): void {
    this.#pendingItems.push(item);
  }

  /** Forgets an expected request the engine refused without admitting it. */
  unexpect(): void {
    this.#pendingItems.length = 0;
  }

  admit(entry: QueuedRequest): ServerError | undefined {
    const item = this.#pendingItems.shift() as DirectItem;
    this.#items.set(entry, item);
    (this.#queues[item.slot.index] as QueuedRequest[]).push(entry);
    this.#size += 1;
    return undefined;
  }

  remove(entry: QueuedRequest): boolean {
    const item = this.#items.get(entry);
    if (item === undefined) return false;
    const queue = this.#queues[item.slot.index] as QueuedRequest[];
    const i = queue.indexOf(entry);
    if (i < 0) return false;
    queue.splice(i, 1);
    this.#items.delete(entry);
    this.#size -= 1;
    return true;
  }

  /** What is still queued in `slot`. */
  queued(slot: SequenceSlot): readonly QueuedRequest[] {
    return [...(this.#queues[slot.index] as QueuedRequest[])];
  }

  take(now: bigint): TakeResult {
    const queues = this.#queues;
    let maxSlot = -1;
    let ready = 0;
    let earliest: bigint | undefined;
    for (let s = 0; s < queues.length; s++) {
      const front = (queues[s] as QueuedRequest[])[0];
      if (front === undefined) continue;
      maxSlot = s;
      ready += 1;
      if (earliest === undefined || front.enqueuedAt < earliest) earliest = front.enqueuedAt;
    }
    if (maxSlot < 0) return { kind: 'empty', expired: [] };
    const { maxQueueDelayUs, minimumSlotUtilization, maxBatchSize } = this.#options;
    if (maxQueueDelayUs > 0 && minimumSlotUtilization > 0) {
      const delayNs = BigInt(maxQueueDelayUs) * 1000n;
      const age = now - (earliest as bigint);
      if (age <= delayNs && ready / Math.max(1, maxBatchSize) < minimumSlotUtilization) {
        return { kind: 'wait', ns: delayNs - age, expired: [] };
      }
    }
    let representative: QueuedRequest | undefined;
    for (let s = 0; s <= maxSlot && representative === undefined; s++) representative = queues[s]?.[0];
    const rep = representative as QueuedRequest;
    const entries: (QueuedRequest | undefined)[] = [];
    for (let s = 0; s <= maxSlot; s++) {
      const queue = queues[s] as QueuedRequest[];
      const slot = this.#slots[s] as SequenceSlot;
      const front = queue[0];
      if (front === undefined || front.batchKey !== rep.batchKey) {
        entries.push(undefined);
        continue;
      }
      queue.shift();
      this.#size -= 1;
      const { item } = this.#items.get(front) as DirectItem;
      this.#items.delete(front);
      this.#options.hooks.prepare(slot, item);
      entries.push(front);
      if ((item.flags & SEQUENCE_END_FLAG) !== 0 || (queue.length === 0 && slot.releasePending)) {
        this.#options.hooks.release(slot);
      }
    }
    // Padding rows last: shaped like `rep` once prepared (its implicit state inputs included).
    const batch = entries.map((e) => e ?? this.#padding(rep, now));
    return { kind: 'batch', entries: batch, expired: [] };
  }

  /** A padding row shaped like `rep`: zero inputs, controls of a not-ready slot. */
  #padding(rep: QueuedRequest, now: bigint): QueuedRequest {
    const inputs = new Map<string, PackedTensor>();
    for (const [name, tensor] of rep.request.inputs) {
      if (!this.#options.controlNames.has(name)) inputs.set(name, zeroLike(tensor));
    }
    const request = { inputs, batchSize: 1, priority: 0, receivedAt: now };
    this.#options.hooks.prepare(PADDING_SLOT, {
      request,
      id: PADDING_ID,
      flags: 0,
      resolve: () => undefined,
      reject: () => undefined,
    });
    return {
      request,
      rows: 1,
      enqueuedAt: now,
      batchKey: rep.batchKey,
      level: 0,
      deadline: undefined,
      timeoutAction: 'REJECT',
      resolve: () => undefined,
      reject: () => undefined,
      timer: undefined,
      left: true,
      padding: true,
    };
  }
}

/** The slot a padding row is prepared for (no sequence). */
export const PADDING_SLOT: SequenceSlot = {
  instance: -1,
  index: -1,
  key: undefined,
  releasePending: false,
  state: undefined,
};

/** The id a padding row is prepared with: {@link SequenceBatcherHooks.prepare} treats it as "not ready". */
export const PADDING_ID = { kind: 'uint64', text: '0', key: 'u:0' } as const;

/** See the module documentation. */
export class DirectSequenceStrategy implements SequenceStrategy {
  readonly #queues: DirectSlotQueue[];
  readonly #engines: SchedulingEngine[];
  readonly #options: DirectSequenceOptions;

  constructor(options: DirectSequenceOptions) {
    this.#options = options;
    this.#queues = options.slots.map((slots) => new DirectSlotQueue(slots, options));
    this.#engines = options.instances.map(
      (instance, i) =>
        new SchedulingEngine({
          queue: this.#queues[i] as DirectSlotQueue,
          instances: [instance],
          statistics: options.statistics,
          batching: options.batching,
          preserveOrdering: false,
          clock: options.clock,
          onOutputs: (request, outputs) => options.hooks.executed(request, outputs),
          ...(options.batchLayout === undefined ? {} : { batchLayout: options.batchLayout }),
        }),
    );
  }

  get pendingCount(): number {
    return this.#engines.reduce((n, e) => n + e.pendingCount, 0);
  }

  enqueue(slot: SequenceSlot, items: readonly SequenceRequest[]): void {
    const queue = this.#queues[slot.instance] as DirectSlotQueue;
    const engine = this.#engines[slot.instance] as SchedulingEngine;
    for (const item of items) {
      queue.expect({ slot, item });
      const key = slot.key as string;
      engine.enqueue(item.request).then(item.resolve, (error: ServerError) => {
        item.reject(error);
        if (error.kind === 'CANCELLED') this.#options.hooks.cancelled(slot, key);
      });
      queue.unexpect();
    }
  }

  forceEnd(slot: SequenceSlot): void {
    const queue = this.#queues[slot.instance] as DirectSlotQueue;
    if (queue.queued(slot).length === 0) this.#options.hooks.release(slot);
    else slot.releasePending = true;
  }

  cancelQueued(slot: SequenceSlot): void {
    const queue = this.#queues[slot.instance] as DirectSlotQueue;
    const engine = this.#engines[slot.instance] as SchedulingEngine;
    for (const entry of queue.queued(slot)) engine.cancelQueued(entry);
  }

  async drain(): Promise<void> {
    await Promise.all(this.#engines.map((e) => e.drain()));
  }
}
