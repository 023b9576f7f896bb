/**
 * `--concurrency-range`: keeps exactly `level` requests in flight, one sending loop per slot
 * (a slot sends its next request as soon as the previous one finished). For sequence models each
 * slot runs its own sequences, one after the other.
 * @packageDocumentation
 */
import { BaseLoadManager } from './base-load-manager.js';
import type { LoadContext } from './load-manager.js';
import type { RequestSender } from './request-sender.js';
import type { SequenceStatus } from './sequences.js';

/** The concurrency-mode load manager. */
export class ConcurrencyManager extends BaseLoadManager {
  #level = 0;
  #remaining = Number.POSITIVE_INFINITY;
  readonly #running: boolean[] = [];
  readonly #statuses: SequenceStatus[] = [];

  constructor(context: LoadContext) {
    super(context);
  }

  /**
   * Moves to `level` requests in flight: new slots start at once; slots above the level stop after
   * their current request. With `requestLimit` > 0 exactly that many requests are issued from now
   * on, then none until the next call.
   */
  async changeLevel(level: number, requestLimit?: number): Promise<void> {
    const sender = await this.sender();
    if (this.stopped) return;
    this.#level = Math.max(0, Math.floor(level));
    this.#remaining =
      requestLimit !== undefined && requestLimit > 0 ? requestLimit : Number.POSITIVE_INFINITY;
    for (let slot = 0; slot < this.#level; slot++) {
      if (this.sequences !== undefined && this.#statuses[slot] === undefined) {
        this.#statuses[slot] = this.sequences.add();
      }
      if (this.#running[slot] !== true) {
        this.#running[slot] = true;
        void this.#run(slot, sender);
      }
    }
  }

  protected halt(): void {
    this.#level = 0;
  }

  async #run(slot: number, sender: RequestSender): Promise<void> {
    const sequences = this.sequences;
    const status = this.#statuses[slot];
    try {
      while (!this.stopped && slot < this.#level && this.#remaining > 0) {
        this.#remaining -= 1;
        if (sequences !== undefined && status !== undefined) {
          const request = sequences.next(status);
          await sender.send(request.stream, request.step, request, false);
        } else {
          const { stream, step } = this.nextPosition();
          await sender.send(stream, step, undefined, false);
        }
      }
    } finally {
      this.#running[slot] = false;
    }
  }
}
