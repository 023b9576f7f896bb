/**
 * What the sequence batcher and its two strategies share: a sequence slot of a model instance, a
 * sequence request waiting for its slot, and the interface of a strategy.
 * @packageDocumentation
 */
import type { PackedTensor } from '@tritonserver-ts/protocol';

import type { ServerError } from '../common/errors.js';
import type { SequenceId } from './sequence-id.js';
import type { SchedulerRequest, SchedulerResponse } from './types.js';

/**
 * One sequence slot: a row of its instance's batches (Direct) or one of its candidate sequences
 * (Oldest). A sequence keeps its slot, and so its instance, from START to END or idle timeout.
 */
export interface SequenceSlot {
  /** Index of the instance (in the scheduler's instance list). */
  readonly instance: number;
  /** Slot number within the instance (the batch row under Direct). */
  readonly index: number;
  /** The sequence bound to the slot (its key), or undefined when the slot is free. */
  key: string | undefined;
  /** The reaper ended the sequence: the slot is released once nothing of it is queued any more. */
  releasePending: boolean;
  /**
   * The implicit state of the sequence in the slot (`sequence_batching.state`), by state input
   * name: the last state outputs its requests produced; cleared when a sequence starts in the slot.
   */
  state: Map<string, PackedTensor> | undefined;
}

/**
 * A request of a sequence inside the sequence batcher. `request` is the scheduler's own copy whose
 * `inputs` map the batcher may extend (control tensors) when the request is issued.
 */
export interface SequenceRequest {
  readonly request: SchedulerRequest & { readonly inputs: Map<string, PackedTensor> };
  readonly id: SequenceId;
  readonly flags: number;
  readonly resolve: (response: SchedulerResponse) => void;
  readonly reject: (error: ServerError) => void;
}

/** How the requests of bound slots are batched and run (Direct or Oldest). */
export interface SequenceStrategy {
  /** Hands `items` (in order) of the sequence bound to `slot` to the slot. */
  enqueue(slot: SequenceSlot, items: readonly SequenceRequest[]): void;
  /** The reaper ends `slot`'s sequence: release the slot once nothing of it is queued. */
  forceEnd(slot: SequenceSlot): void;
  /** Cancels what is still queued for `slot` (its sequence was cancelled). */
  cancelQueued(slot: SequenceSlot): void;
  /** Requests queued or executing. */
  readonly pendingCount: number;
  /** Refuses new requests and resolves when everything queued and running has finished. */
  drain(): Promise<void>;
}

/** What a strategy asks of the sequence batcher. */
export interface SequenceBatcherHooks {
  /** Adds the control tensors and implicit state inputs of `item` in `slot` to its inputs. */
  prepare(slot: SequenceSlot, item: SequenceRequest): void;
  /**
   * A prepared request executed: its outputs (state outputs included). Called before the request
   * settles and before its instance takes its next batch, so the sequence's next request reads
   * the state this one produced.
   */
  executed(request: SchedulerRequest, outputs: ReadonlyMap<string, PackedTensor>): void;
  /** The sequence of `slot` is over (END issued, timeout, cancellation): free or refill the slot. */
  release(slot: SequenceSlot): void;
  /** A request of `slot`'s sequence was cancelled: cancel the rest of that sequence. */
  cancelled(slot: SequenceSlot, key: string): void;
}
