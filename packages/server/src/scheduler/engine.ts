/**
 * The scheduling engine shared by the default scheduler and the dynamic batcher: admits requests into
 * a {@link SchedulingQueue}, hands batches to free instances (one execution per instance at a time,
 * all instances concurrently), splits outputs back, records statistics and settles each request.
 * @packageDocumentation
 */
import type { PackedTensor } from '@tritonserver-ts/protocol';

import { ServerError } from '../common/errors.js';
import type { ExecutionTimings, InstanceRequest, ModelInstance } from '../runtime/types.js';
import type { ModelStatistics } from '../statistics/model-statistics.js';
import { batchCompatibilityKey, concatInputs, splitOutputs } from './batch.js';
import { layoutInputs, layoutSplitOutputs, raggedCompatibilityKey, type BatchLayout } from './ragged.js';
import type { QueuedRequest, SchedulingQueue } from './entry.js';
import { SchedulerRejection, failureReasonOf } from './errors.js';
import type { RateLimitedModel } from './rate-limiter.js';
import type { Scheduler, SchedulerRequest, SchedulerResponse } from './types.js';

/** Options of {@link SchedulingEngine}. */
export interface SchedulingEngineOptions {
  readonly queue: SchedulingQueue;
  readonly instances: readonly ModelInstance[];
  /** Where this version's statistics go (a private, unreported one is used when absent). */
  readonly statistics: ModelStatistics;
  /** Whether the model batches (`max_batch_size > 0`): inputs carry a batch dim to concatenate. */
  readonly batching: boolean;
  /** Deliver responses in request order even when executions finish out of order. */
  readonly preserveOrdering: boolean;
  /** Ragged inputs, batch inputs and batch outputs of the model (see `ragged.ts`), if any. */
  readonly batchLayout?: BatchLayout;
  /** Monotonic clock in ns (default `process.hrtime.bigint`). */
  readonly clock?: () => bigint;
  /**
   * The version's registration with the server's rate limiter (`--rate-limit=execution_count`): an
   * instance runs a batch only once the limiter grants it (its resources held); the batch is taken
   * from the queue at that moment (requests that arrived meanwhile join it), the queue time counts
   * the wait, and the instance goes back to the limiter when the execution ends. The engine leaves
   * the limiter once drained.
   */
  readonly rateLimiter?: RateLimitedModel;
  /**
   * Sees each request's outputs (the model's, before the client's selection) just before the
   * request resolves, and before its instance takes another batch: the sequence batcher keeps the
   * implicit state outputs there.
   */
  readonly onOutputs?: (request: SchedulerRequest, outputs: ReadonlyMap<string, PackedTensor>) => void;
}

type Settle = () => void;

/** An execution's outcome for its requests, until {@link SchedulingEngine.deliver} settles them. */
interface Finished {
  readonly entries: readonly QueuedRequest[];
  /** Each request's outputs; `undefined` when the execution failed with `failure`. */
  readonly parts: readonly ReadonlyMap<string, PackedTensor>[] | undefined;
  readonly failure: ServerError | undefined;
  /** Execution start, and its end (after the outputs were split). */
  readonly start: bigint;
  readonly end: bigint;
  readonly timings: ExecutionTimings;
}

const ZERO_TIMINGS: ExecutionTimings = { computeInputNs: 0n, computeInferNs: 0n, computeOutputNs: 0n };

/**
 * Queued requests by their abort signal, with the engine holding each, for every engine: a signal
 * (an HTTP connection's) outlives the engines of reloaded versions, so it gets one `abort` listener
 * that holds no engine, rather than one per engine (which would keep every retired engine).
 */
const waitingBySignal = new WeakMap<AbortSignal, Map<QueuedRequest, SchedulingEngine>>();

/**
 * A request's correlation id for a per-request instance: 0 when absent; an integer id above 2^53
 * as its decimal text (the instance's JSON has no 64-bit integers).
 */
function instanceCorrelationId(id: SchedulerRequest['correlationId']): number | string {
  if (id === undefined) return 0;
  if (typeof id !== 'bigint') return id;
  return id <= BigInt(Number.MAX_SAFE_INTEGER) && id >= 0n ? Number(id) : BigInt.asUintN(64, id).toString();
}

/** See the module documentation. */
export class SchedulingEngine implements Scheduler {
  private readonly queue: SchedulingQueue;
  private readonly free: ModelInstance[];
  private readonly instances: readonly ModelInstance[];
  private readonly stats: ModelStatistics;
  private readonly batching: boolean;
  private readonly preserveOrdering: boolean;
  private readonly layout: BatchLayout | undefined;
  private readonly clock: () => bigint;
  private draining = false;
  private pending = 0;
  private waitTimer: NodeJS.Timeout | undefined;
  private waitImmediate: NodeJS.Immediate | undefined;
  private drainWaiters: (() => void)[] = [];
  private issued = 0;
  private delivered = 0;
  private readonly held = new Map<number, Finished | undefined>();
  private readonly limiter: RateLimitedModel | undefined;
  private readonly onOutputs: SchedulingEngineOptions['onOutputs'];
  /** Instances asked of the rate limiter and not granted yet. */
  private asked = 0;
  /** A grant found nothing to run yet (batcher delay): ask no more until the next dispatch. */
  private parked = false;

  constructor(options: SchedulingEngineOptions) {
    if (options.instances.length === 0) {
      throw new ServerError('INTERNAL', 'a scheduler needs at least one model instance');
    }
    this.queue = options.queue;
    this.free = [...options.instances].reverse();
    this.instances = options.instances;
    this.stats = options.statistics;
    this.batching = options.batching;
    this.preserveOrdering = options.preserveOrdering;
    this.layout = options.batchLayout;
    this.clock = options.clock ?? (() => process.hrtime.bigint());
    this.limiter = options.rateLimiter;
    this.onOutputs = options.onOutputs;
    if (this.limiter !== undefined) this.limiter.onGrant = (instance) => this.granted(instance);
  }

  /** Requests queued, executing, or waiting for an earlier response (preserve_ordering). */
  get pendingCount(): number {
    return this.pending;
  }

  /** Requests waiting in the queue. */
  get queuedCount(): number {
    return this.queue.size;
  }

  enqueue(request: SchedulerRequest): Promise<SchedulerResponse> {
    const now = this.clock();
    if (this.draining) return this.refuse(request, now, SchedulerRejection.stopping());
    if (request.signal?.aborted === true) return this.refuse(request, now, SchedulerRejection.cancelled());
    return new Promise<SchedulerResponse>((resolve, reject) => {
      const entry: QueuedRequest = {
        request,
        rows: this.batching ? Math.max(1, request.batchSize) : 1,
        enqueuedAt: now,
        batchKey:
          !this.batching || this.queue.formsBatches === false
            ? ''
            : this.layout !== undefined
              ? raggedCompatibilityKey(request.inputs, this.layout)
              : batchCompatibilityKey(request.inputs),
        level: 0,
        deadline: undefined,
        timeoutAction: 'REJECT',
        resolve,
        reject,
        timer: undefined,
        left: false,
      };
      const refused = this.queue.admit(entry);
      if (refused !== undefined) {
        this.recordFailure(request, refused);
        reject(refused);
        return;
      }
      this.pending += 1;
      this.stats.adjustPending(1);
      request.onActivity?.('QUEUE_START', now);
      this.dispatch();
      // Abort listener and timeout timer only for a request that still waits (a free instance
      // took it at once in the usual case, before any event could abort or expire it).
      if (!entry.left) this.attach(entry);
    });
  }

  /**
   * Fails a request that is still queued with CANCELLED (the sequence batcher cancels the rest of a
   * cancelled sequence); false when it is no longer queued.
   */
  cancelQueued(entry: QueuedRequest): boolean {
    if (!this.queue.remove(entry)) return false;
    this.failQueued(entry, SchedulerRejection.cancelled());
    return true;
  }

  drain(): Promise<void> {
    this.draining = true;
    this.dispatch();
    // Per-request instances bound the requests they still hold open (decoupled models).
    for (const instance of this.instances) instance.closing?.();
    if (this.pending === 0) {
      this.limiter?.unregister();
      return Promise.resolve();
    }
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private refuse(request: SchedulerRequest, _now: bigint, error: ServerError): Promise<never> {
    this.recordFailure(request, error);
    return Promise.reject(error);
  }

  private recordFailure(request: SchedulerRequest, error: ServerError): void {
    this.stats.recordFailure({ requestNs: this.since(request.receivedAt), reason: failureReasonOf(error) });
  }

  private since(start: bigint): bigint {
    const d = this.clock() - start;
    return d > 0n ? d : 0n;
  }

  /**
   * Watches a waiting request: its signal (one `abort` listener per signal, which fails every request
   * of that signal still queued in any engine — a connection's signal serves all its requests, so
   * this is not one listener per queued request) and its REJECT-timeout timer.
   */
  private attach(entry: QueuedRequest): void {
    const signal = entry.request.signal;
    if (entry.deadline !== undefined && entry.timeoutAction === 'REJECT') {
      const ms = Number(entry.deadline - entry.enqueuedAt) / 1e6;
      entry.timer = setTimeout(
        () => {
          if (this.queue.remove(entry)) this.failQueued(entry, SchedulerRejection.timeoutExpired());
        },
        Math.max(0, Math.ceil(ms)),
      );
    }
    if (signal === undefined) return;
    let waiting = waitingBySignal.get(signal);
    if (waiting === undefined) {
      const queued = new Map<QueuedRequest, SchedulingEngine>();
      waiting = queued;
      waitingBySignal.set(signal, queued);
      signal.addEventListener('abort', () => SchedulingEngine.cancelWaiting(queued), { once: true });
    }
    waiting.set(entry, this);
  }

  /** Fails the requests of an aborted signal that are still queued (see {@link attach}). */
  private static cancelWaiting(queued: Map<QueuedRequest, SchedulingEngine>): void {
    for (const [e, engine] of [...queued]) {
      if (engine.queue.remove(e)) engine.failQueued(e, SchedulerRejection.cancelled());
    }
    queued.clear();
  }

  /** Stops watching a request that leaves the queue (see {@link attach}). */
  private detach(entry: QueuedRequest): void {
    entry.left = true;
    if (entry.timer !== undefined) {
      clearTimeout(entry.timer);
      entry.timer = undefined;
    }
    const signal = entry.request.signal;
    if (signal !== undefined) waitingBySignal.get(signal)?.delete(entry);
  }

  /** Fails a request that has already been removed from the queue. */
  private failQueued(entry: QueuedRequest, error: ServerError): void {
    this.detach(entry);
    this.stats.adjustPending(-1);
    this.recordFailure(entry.request, error);
    entry.reject(error);
    this.finishOne();
    // The queue changed: a batch waiting for its delay may now be different.
    this.dispatch();
  }

  private finishOne(): void {
    this.pending -= 1;
    if (this.pending === 0 && this.draining) this.limiter?.unregister();
    if (this.pending === 0 && this.drainWaiters.length > 0) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** Starts as many executions as there are free instances and ready batches. */
  private dispatch(): void {
    if (this.waitTimer !== undefined) {
      clearTimeout(this.waitTimer);
      this.waitTimer = undefined;
    }
    if (this.waitImmediate !== undefined) {
      clearImmediate(this.waitImmediate);
      this.waitImmediate = undefined;
    }
    if (this.limiter !== undefined) {
      this.askLimiter(this.limiter);
      return;
    }
    while (this.free.length > 0 && this.queue.size > 0) {
      const taken = this.queue.take(this.clock(), this.draining);
      for (const e of taken.expired) this.failQueuedQuiet(e, SchedulerRejection.timeoutExpired());
      if (taken.kind === 'wait') {
        this.waitFor(taken.ns);
        return;
      }
      if (taken.kind === 'empty') return;
      const instance = this.free.pop() as ModelInstance;
      void this.run(instance, taken.entries);
    }
  }

  /**
   * Rate limited: asks the limiter for instances while requests wait, at most one ask per queued
   * request and per instance. An ask made while every instance is busy waits in the limiter, so an
   * instance that finishes competes again at once (by priority) with the other models' instances,
   * as Triton's batcher keeps payloads queued at the rate limiter. A grant may come at once.
   */
  private askLimiter(limiter: RateLimitedModel): void {
    this.parked = false;
    this.askMore(limiter);
  }

  private askMore(limiter: RateLimitedModel): void {
    while (!this.parked && this.asked < this.instances.length && this.asked < this.queue.size) {
      this.asked += 1;
      limiter.request();
    }
  }

  /**
   * The rate limiter granted `instance` (resources held): it runs the batch the queue forms now, or
   * goes back unused (nothing queued, or the batcher's delay still runs: look again then).
   */
  private granted(instance: ModelInstance): void {
    this.asked -= 1;
    const i = this.free.indexOf(instance);
    if (i >= 0) this.free.splice(i, 1);
    const taken = this.queue.take(this.clock(), this.draining);
    for (const e of taken.expired) this.failQueuedQuiet(e, SchedulerRejection.timeoutExpired());
    if (taken.kind === 'batch') {
      void this.run(instance, taken.entries);
      if (this.limiter !== undefined) this.askMore(this.limiter);
      return;
    }
    this.free.push(instance);
    if (taken.kind === 'wait') {
      this.parked = true;
      if (this.waitTimer === undefined && this.waitImmediate === undefined) this.waitFor(taken.ns);
    }
    this.limiter?.release(instance, false);
  }

  /** An instance finished its execution: free again (and its resources back to the rate limiter). */
  private instanceDone(instance: ModelInstance): void {
    this.free.push(instance);
    this.limiter?.release(instance, true);
  }

  /**
   * Looks at the queue again in `ns` (the rest of the batcher's queue delay). Node's timers count
   * whole milliseconds and fire a little late, so a `max_queue_delay_microseconds` below a
   * millisecond (Triton's unit is µs; 100 µs is common) would hold every batch ≥ 1 ms, ten times
   * the configured delay. A wait of a millisecond or more goes to a timer (rounded up; the
   * overshoot is small against such a wait); a shorter one is waited by re-checking on each turn
   * of the event loop (`setImmediate`, after its I/O, so requests that arrive meanwhile join the
   * batch). The batch goes when its oldest request has waited the delay, as in Triton, at the cost
   * of a busy event loop for at most that sub-millisecond wait.
   */
  private waitFor(ns: bigint): void {
    if (ns >= 1_000_000n) {
      this.waitTimer = setTimeout(
        () => {
          this.waitTimer = undefined;
          this.dispatch();
        },
        Math.ceil(Number(ns) / 1e6),
      );
      return;
    }
    this.waitImmediate = setImmediate(() => {
      this.waitImmediate = undefined;
      this.dispatch();
    });
  }

  /** Like {@link failQueued} but without re-dispatching (used inside dispatch). */
  private failQueuedQuiet(entry: QueuedRequest, error: ServerError): void {
    this.detach(entry);
    this.stats.adjustPending(-1);
    this.recordFailure(entry.request, error);
    entry.reject(error);
    this.finishOne();
  }

  private async run(instance: ModelInstance, entries: QueuedRequest[]): Promise<void> {
    const seq = this.issued++;
    const start = this.clock();
    for (const e of entries) {
      if (e.padding === true) continue;
      this.detach(e);
      this.stats.adjustPending(-1);
    }
    if (instance.executeRequests !== undefined) {
      await this.runRequests(instance, entries, start);
      this.instanceDone(instance);
      // Responses were settled as they came; keep the preserve_ordering sequence moving.
      this.deliver(seq, undefined);
      this.dispatch();
      return;
    }
    let finished: Finished;
    try {
      const t0 = this.clock();
      const single = entries.length === 1 ? (entries[0] as QueuedRequest) : undefined;
      const requestInputs =
        single !== undefined && this.layout === undefined ? undefined : entries.map((e) => e.request.inputs);
      const inputs =
        requestInputs === undefined
          ? (single as QueuedRequest).request.inputs
          : this.layout !== undefined
            ? layoutInputs(requestInputs, this.layout)
            : this.batching
              ? concatInputs(requestInputs)
              : (entries[0] as QueuedRequest).request.inputs;
      const concatNs = this.clock() - t0;
      const result = await instance.execute(inputs);
      const t1 = this.clock();
      // One request of a plain model: its outputs are the execution's (splitting one part is a no-op).
      const parts: readonly ReadonlyMap<string, PackedTensor>[] =
        requestInputs === undefined
          ? [result.outputs]
          : this.layout !== undefined
            ? layoutSplitOutputs(
                result.outputs,
                requestInputs,
                entries.map((e) => e.rows),
                this.layout,
              )
            : this.batching
              ? splitOutputs(
                  result.outputs,
                  entries.map((e) => e.rows),
                )
              : [result.outputs];
      const splitNs = this.clock() - t1;
      const timings = {
        computeInputNs: result.timings.computeInputNs + concatNs,
        computeInferNs: result.timings.computeInferNs,
        computeOutputNs: result.timings.computeOutputNs + splitNs,
      };
      let rows = 0;
      for (const e of entries) rows += e.rows;
      this.stats.recordExecution(rows, timings);
      finished = { entries, parts, failure: undefined, start, end: t1 + splitNs, timings };
    } catch (error) {
      const failure = SchedulerRejection.executionFailed(error);
      finished = { entries, parts: undefined, failure, start, end: start, timings: ZERO_TIMINGS };
    }
    this.instanceDone(instance);
    this.deliver(seq, finished);
    this.dispatch();
  }

  /** Settles the requests of a finished execution (then counts them out of `pending`). */
  private settle(finished: Finished): void {
    const { entries, parts, failure, start, end, timings } = finished;
    let settled = 0;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i] as QueuedRequest;
      if (e.padding === true) continue;
      settled += 1;
      if (parts === undefined) {
        const error = failure as ServerError;
        this.recordFailure(e.request, error);
        e.reject(error);
        continue;
      }
      // Trace timestamps from the same times as the statistics: execution start, then the
      // input / infer / output durations of the execution. Those can overlap a little (a worker
      // may start before the main thread is done posting to it), so the points are kept inside
      // the execution, which ended after the split.
      if (e.request.onActivity !== undefined) {
        const at = (ns: bigint): bigint => (ns < end ? ns : end);
        const inputEnd = at(start + timings.computeInputNs);
        const outputStart = at(inputEnd + timings.computeInferNs);
        e.request.onActivity('COMPUTE_START', start);
        e.request.onActivity('COMPUTE_INPUT_END', inputEnd);
        e.request.onActivity('COMPUTE_OUTPUT_START', outputStart);
        e.request.onActivity('COMPUTE_END', at(outputStart + timings.computeOutputNs));
      }
      this.stats.recordSuccess({
        batchSize: e.rows,
        requestNs: this.since(e.request.receivedAt),
        queueNs: start - e.enqueuedAt > 0n ? start - e.enqueuedAt : 0n,
        timings,
      });
      const outputs = parts[i] as ReadonlyMap<string, PackedTensor>;
      this.onOutputs?.(e.request, outputs);
      e.resolve({ outputs });
    }
    for (let i = 0; i < settled; i++) this.finishOne();
  }

  /**
   * The per-request path (`ModelInstance.executeRequests`, the Python backend): the batch's requests
   * go to the instance as they are; each is settled when its final response arrives (possibly after
   * the instance is free again, for decoupled models). Resolves when the instance is free.
   */
  private async runRequests(instance: ModelInstance, entries: QueuedRequest[], start: bigint): Promise<void> {
    let timings: ExecutionTimings | undefined;
    const early: Settle[] = [];
    const done = entries.map(() => false);
    const responded = entries.map(() => false);
    const settle = (
      i: number,
      entry: QueuedRequest,
      outputs: ReadonlyMap<string, PackedTensor>,
      error?: Error,
      parameters?: SchedulerResponse['parameters'],
    ) => {
      const run: Settle = () => {
        if (entry.padding === true) return;
        if (error !== undefined) {
          const failure = SchedulerRejection.executionFailed(error);
          this.recordFailure(entry.request, failure);
          entry.reject(failure);
        } else {
          const t = timings ?? ZERO_TIMINGS;
          if (entry.request.onActivity !== undefined) {
            const inputEnd = start + t.computeInputNs;
            const outputStart = inputEnd + t.computeInferNs;
            entry.request.onActivity('COMPUTE_START', start);
            entry.request.onActivity('COMPUTE_INPUT_END', inputEnd);
            entry.request.onActivity('COMPUTE_OUTPUT_START', outputStart);
            entry.request.onActivity('COMPUTE_END', outputStart + t.computeOutputNs);
          }
          this.stats.recordSuccess({
            batchSize: entry.rows,
            requestNs: this.since(entry.request.receivedAt),
            queueNs: start - entry.enqueuedAt > 0n ? start - entry.enqueuedAt : 0n,
            timings: t,
          });
          this.onOutputs?.(entry.request, outputs);
          entry.resolve(parameters === undefined ? { outputs } : { outputs, parameters });
        }
        this.finishOne();
      };
      done[i] = true;
      if (timings === undefined) early.push(run);
      else run();
    };
    const requests: InstanceRequest[] = entries.map((entry, i) => {
      const r = entry.request;
      let last: ReadonlyMap<string, PackedTensor> = new Map();
      let lastParameters: SchedulerResponse['parameters'];
      return {
        inputs: r.inputs,
        requestedOutputs: r.requestedOutputs ?? [],
        id: r.id ?? '',
        correlationId: instanceCorrelationId(r.correlationId),
        flags: r.flags ?? 0,
        parameters: r.parameters ?? {},
        ...(r.signal !== undefined ? { signal: r.signal } : {}),
        ...(r.trace !== undefined ? { trace: r.trace } : {}),
        respond: (response) => {
          if (done[i] === true) return;
          // A response (not a final flag alone): the first one is timed for the first-response
          // histogram (`histogram_latencies=true`, decoupled models).
          if (!responded[i] && (response.outputs !== undefined || response.error !== undefined)) {
            responded[i] = true;
            this.stats.recordFirstResponse(this.since(r.receivedAt));
          }
          const error =
            response.error === undefined ? undefined : SchedulerRejection.executionFailed(response.error);
          if (r.onResponse !== undefined) {
            r.onResponse({
              ...(response.outputs !== undefined ? { outputs: response.outputs } : {}),
              ...(response.parameters !== undefined ? { parameters: response.parameters } : {}),
              ...(error !== undefined ? { error } : {}),
              final: response.final,
            });
            if (response.final) settle(i, entry, new Map());
            return;
          }
          if (response.outputs !== undefined) {
            last = response.outputs;
            lastParameters = response.parameters;
          }
          if (response.final) settle(i, entry, last, error, lastParameters);
        },
      };
    });
    try {
      if (instance.executeRequests === undefined) throw new Error('the instance has no per-request path');
      timings = await instance.executeRequests(requests);
    } catch (error) {
      // The instance failed without answering: every unanswered request fails with its error.
      timings = ZERO_TIMINGS;
      entries.forEach((entry, i) => {
        if (done[i] !== true)
          settle(i, entry, new Map(), error instanceof Error ? error : new Error(String(error)));
      });
    }
    const rows = entries.reduce((a, e) => a + e.rows, 0);
    this.stats.recordExecution(rows, timings);
    for (const s of early) s();
  }

  /**
   * Settles a finished execution's requests (`undefined`: settled already, by the per-request
   * path), in issue order when preserve_ordering is on.
   */
  private deliver(seq: number, finished: Finished | undefined): void {
    if (!this.preserveOrdering) {
      if (finished !== undefined) this.settle(finished);
      this.delivered += 1;
      return;
    }
    this.held.set(seq, finished);
    while (this.held.has(this.delivered)) {
      const next = this.held.get(this.delivered);
      this.held.delete(this.delivered);
      this.delivered += 1;
      if (next !== undefined) this.settle(next);
    }
  }
}
