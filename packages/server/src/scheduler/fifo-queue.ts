/**
 * The default scheduler's queue: first in, first out, one request per execution, no limits.
 * @packageDocumentation
 */
import type { QueuedRequest, SchedulingQueue, TakeResult } from './entry.js';

const NONE: QueuedRequest[] = [];

/** FIFO queue handing out one request at a time. */
export class FifoQueue implements SchedulingQueue {
  /** One request per execution: batch keys are not needed. */
  readonly formsBatches = false;
  // Taken slots are cleared: a dequeued request (its inputs, its result) must not stay reachable.
  private items: (QueuedRequest | undefined)[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  admit(entry: QueuedRequest): undefined {
    this.items.push(entry);
    return undefined;
  }

  remove(entry: QueuedRequest): boolean {
    const at = this.items.indexOf(entry, this.head);
    if (at < 0) return false;
    this.items.splice(at, 1);
    return true;
  }

  take(): TakeResult {
    if (this.size === 0) return { kind: 'empty', expired: NONE };
    const entry = this.items[this.head] as QueuedRequest;
    this.items[this.head] = undefined;
    this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return { kind: 'batch', entries: [entry], expired: NONE };
  }
}
