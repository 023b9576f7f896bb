/**
 * `--request-rate-range` and `--request-intervals`: issues requests at scheduled times (constant
 * or Poisson gaps at the level's rate, or the replayed intervals), without waiting for earlier
 * ones (`-a`), or with at most `--max-threads` in flight (`--sync`, perf_analyzer's default, where
 * each of its threads waits for its request). A request sent more than 1 ms after its scheduled
 * time because the generator was busy or every thread waited is flagged `delayed`, as
 * perf_analyzer counts it. For sequence models the requests go to `--num-of-sequences` live
 * sequences (one at a time each with `--serial-sequences`).
 * @packageDocumentation
 */
import { BaseLoadManager } from './base-load-manager.js';
import type { LoadContext } from './load-manager.js';
import type { RequestSender } from './request-sender.js';
import { SeededRandom } from './rng.js';
import { constantGaps, intervalGaps, Pacer, poissonGaps, type GapSource } from './schedule.js';
import type { SequenceStatus } from './sequences.js';

/** perf_analyzer's delay tolerance: later than this after its schedule, a request is delayed. */
const DELAY_TOLERANCE_NS = 1_000_000n;

/** The request-rate and request-intervals load manager. */
export class RateManager extends BaseLoadManager {
  readonly #pacer = new Pacer();
  #generation = 0;
  #loop: Promise<void> | undefined;
  #slotWake: (() => void) | undefined;
  readonly #statuses: SequenceStatus[] = [];
  /** Requests in flight per sequence status (`--serial-sequences`). */
  readonly #busy: number[] = [];
  readonly #random: SeededRandom;
  readonly #cap: number;

  constructor(context: LoadContext) {
    super(context);
    const { options } = context;
    this.#random = new SeededRandom(options.seed);
    if (this.sequences !== undefined) {
      for (let i = 0; i < Math.max(1, options.numOfSequences); i++) {
        this.#statuses.push(this.sequences.add());
        this.#busy.push(0);
      }
    }
    const threads =
      this.sequences !== undefined ? Math.min(options.maxThreads, this.#statuses.length) : options.maxThreads;
    this.#cap = options.async ? Number.POSITIVE_INFINITY : Math.max(1, threads);
  }

  /**
   * Starts the schedule at `rate` requests per second (ignored for `request_intervals`), from now.
   * With `requestLimit` > 0 exactly that many requests are issued, then none until the next call.
   */
  async changeLevel(rate: number, requestLimit?: number): Promise<void> {
    const sender = await this.sender();
    if (this.stopped) return;
    const generation = ++this.#generation;
    this.#wake();
    await this.#loop;
    if (this.stopped || generation !== this.#generation) return;
    const { load, seed } = this.context.options;
    let gaps: GapSource;
    if (load.kind === 'request_intervals') gaps = intervalGaps(load.intervalsUs);
    else if (load.kind === 'request_rate' && load.distribution === 'poisson') gaps = poissonGaps(rate, seed);
    else gaps = constantGaps(rate);
    const limit = requestLimit !== undefined && requestLimit > 0 ? requestLimit : Number.POSITIVE_INFINITY;
    if (load.kind !== 'request_intervals' && !(rate > 0)) return;
    this.#loop = this.#run(generation, sender, gaps, limit);
  }

  protected halt(): void {
    this.#generation += 1;
    this.#wake();
  }

  #wake(): void {
    this.#pacer.cancel();
    const wake = this.#slotWake;
    this.#slotWake = undefined;
    wake?.();
  }

  #current(generation: number): boolean {
    return generation === this.#generation && !this.stopped;
  }

  /** Waits until a request finishes (or the schedule is cancelled). */
  #slotFree(): Promise<void> {
    return new Promise((resolve) => {
      this.#slotWake = resolve;
    });
  }

  #finished = (): void => {
    const wake = this.#slotWake;
    this.#slotWake = undefined;
    wake?.();
  };

  /** The sequence the next request goes to, or undefined when every one is busy (serial). */
  #pickSequence(): number | undefined {
    const n = this.#statuses.length;
    if (!this.context.options.serialSequences) return this.#random.below(n);
    for (let i = 0; i < n; i++) if (this.#busy[i] === 0) return i;
    return undefined;
  }

  async #run(generation: number, sender: RequestSender, gaps: GapSource, limit: number): Promise<void> {
    const serial = this.sequences !== undefined && this.context.options.serialSequences;
    const startNs = process.hrtime.bigint();
    let offsetNs = gaps();
    let issued = 0;
    while (this.#current(generation) && issued < limit) {
      // A free "thread" (--sync) or a free sequence (--serial-sequences) first.
      let sequenceIndex: number | undefined;
      for (;;) {
        sequenceIndex = this.sequences !== undefined ? this.#pickSequence() : undefined;
        const free = sender.inFlight < this.#cap && (!serial || sequenceIndex !== undefined);
        if (free || !this.#current(generation)) break;
        await this.#slotFree();
      }
      if (!this.#current(generation)) break;
      const deadline = startNs + BigInt(Math.round(offsetNs));
      const late = process.hrtime.bigint() - deadline;
      const delayed = late > DELAY_TOLERANCE_NS;
      if (late < 0n && !(await this.#pacer.waitUntil(deadline))) break;
      if (!this.#current(generation)) break;
      this.#issue(sender, sequenceIndex, delayed);
      issued += 1;
      offsetNs += gaps();
    }
  }

  #issue(sender: RequestSender, sequenceIndex: number | undefined, delayed: boolean): void {
    if (this.sequences === undefined || sequenceIndex === undefined) {
      const { stream, step } = this.nextPosition();
      void sender.send(stream, step, undefined, delayed).then(this.#finished);
      return;
    }
    const status = this.#statuses[sequenceIndex] as SequenceStatus;
    const request = this.sequences.next(status);
    this.#busy[sequenceIndex] = (this.#busy[sequenceIndex] ?? 0) + 1;
    void sender.send(request.stream, request.step, request, delayed).then(() => {
      this.#busy[sequenceIndex] = (this.#busy[sequenceIndex] ?? 1) - 1;
      this.#finished();
    });
  }
}
