/**
 * Sequence models (`sequence_batching`): perf_analyzer's sequence bookkeeping. Each sequence
 * status gets an id from `--sequence-id-range` (skipping ids other live sequences hold), a length
 * (`--sequence-length` ± `--sequence-length-variation` %, or, with user data, the steps of a
 * randomly chosen data stream), and flags its first request START and its last END.
 * @packageDocumentation
 */
import type { PerfOptions } from '../options/perf-options.js';
import type { InputDataset } from '../types.js';
import { SeededRandom } from './rng.js';

/** One live sequence. */
export interface SequenceStatus {
  /** The sequence id (0 before the first request). */
  id: number;
  /** Requests left in the sequence (0: the next request starts a new one). */
  remaining: number;
  /** Its data stream and the next step in it. */
  stream: number;
  step: number;
}

/** What the next request of a sequence carries. */
export interface SequenceRequest {
  readonly id: number;
  readonly start: boolean;
  readonly end: boolean;
  readonly stream: number;
  readonly step: number;
}

/** Hands out sequence ids, lengths and data positions to a set of sequence statuses. */
export class SequenceManager {
  readonly #statuses: SequenceStatus[] = [];
  readonly #start: number;
  readonly #range: number;
  readonly #length: number;
  readonly #variation: number;
  readonly #random: SeededRandom;
  readonly #dataset: InputDataset;
  readonly #userData: boolean;
  #counter = 0;

  /**
   * @param options - the sequence options and the seed
   * @param dataset - the data; a dataset with more than one entry is taken as user data
   *   (`--input-data` file), whose sequences follow a stream's steps
   */
  constructor(options: PerfOptions, dataset: InputDataset) {
    this.#start = options.sequenceIdRange.start;
    const end = options.sequenceIdRange.end;
    this.#range = end === undefined ? Number.MAX_SAFE_INTEGER - this.#start : Math.max(1, end - this.#start);
    this.#length = options.sequenceLength;
    this.#variation = options.sequenceLengthVariation / 100;
    this.#random = new SeededRandom(options.seed ^ 0x5e9);
    this.#dataset = dataset;
    this.#userData = dataset.streams.length > 1 || (dataset.streams[0]?.length ?? 0) > 1;
  }

  /** A new (idle) sequence status; its first request starts a sequence. */
  add(): SequenceStatus {
    const status: SequenceStatus = { id: 0, remaining: 0, stream: 0, step: 0 };
    this.#statuses.push(status);
    return status;
  }

  /** Number of statuses. */
  get size(): number {
    return this.#statuses.length;
  }

  /** The status at `index`. */
  at(index: number): SequenceStatus {
    const status = this.#statuses[index];
    if (status === undefined) throw new RangeError(`no sequence status ${index}`);
    return status;
  }

  /** The next request of `status` (starting a new sequence when the last one ended). */
  next(status: SequenceStatus): SequenceRequest {
    const start = status.remaining === 0;
    if (start) this.#begin(status);
    const steps = this.#dataset.streams[status.stream]?.length ?? 1;
    const step = status.step % steps;
    status.step = step + 1;
    const end = status.remaining === 1;
    status.remaining -= 1;
    return { id: status.id, start, end, stream: status.stream, step };
  }

  /**
   * The request that ends `status`'s sequence early (perf_analyzer completes ongoing sequences
   * when a level stops), or undefined when it is not in the middle of one.
   */
  finish(status: SequenceStatus): SequenceRequest | undefined {
    if (status.remaining === 0) return undefined;
    status.remaining = 1;
    return this.next(status);
  }

  #begin(status: SequenceStatus): void {
    status.id = this.#nextId(status);
    status.step = 0;
    if (this.#userData) {
      status.stream = this.#random.below(this.#dataset.streams.length);
      status.remaining = Math.max(1, this.#dataset.streams[status.stream]?.length ?? 1);
    } else {
      status.stream = 0;
      const offset = Math.trunc((2 * this.#random.next() - 1) * this.#variation * this.#length);
      status.remaining = Math.max(1, this.#length + offset);
    }
  }

  #nextId(status: SequenceStatus): number {
    // Ids in use by the other live sequences are skipped (at most one full turn of the range).
    for (let tries = 0; ; tries++) {
      const id = this.#start + (this.#counter++ % this.#range);
      if (tries >= this.#statuses.length) return id;
      if (!this.#statuses.some((s) => s !== status && s.remaining > 0 && s.id === id)) return id;
    }
  }
}
