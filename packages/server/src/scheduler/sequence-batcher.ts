/**
 * Triton's sequence batcher (`sequence_batching`, its `SequenceBatchScheduler`): routes every request
 * of a sequence (same `sequence_id`) to the slot the sequence got at START, so its requests run in
 * order on one instance, adding the control inputs the model reads (START, END, READY, CORRID). When
 * every slot is taken, new sequences wait whole in a backlog (FIFO) until one is released (END, idle
 * timeout, cancellation). A sequence idle longer than `max_sequence_idle_microseconds` loses its slot
 * (its later requests then lack START). The strategies decide how slots batch: Direct
 * (`direct-sequence-queue.ts`) and Oldest (`oldest-sequence-strategy.ts`).
 *
 * Refusals, with Triton's texts (INVALID_ARG): a request of more than one row (`must specify
 * batch-size 1 due to requirements of sequence batcher`), a request without a sequence id or with 0 /
 * "" (`must specify a non-zero or non-empty correlation ID`), a request of an unknown sequence without
 * START (`inference request for sequence <id> to model '<m>' must specify the START flag on the first
 * request of the sequence`), a string id for an integer CORRID control or an integer id for a string
 * one (`sequence batching control '<tensor>' data-type is '<BYTES|UINT64>', but model '<m>' expects
 * '<type>'`). START for a sequence that is still active continues it in its slot, as Triton (which logs
 * a warning). A backlogged sequence whose request `timeout` passes fails with `timeout of the
 * corresponding sequence has been expired` (UNAVAILABLE).
 *
 * Implicit state (`sequence_batching.state`, see `implicit-state.ts`): when a request is issued its
 * slot's state (or the state's start value after START) is added as the state input; the state
 * outputs of its execution become the slot's state before the instance runs anything else, so they
 * feed the sequence's next request, batched across slots like any input. A request that produces no
 * state output leaves the state as it was (Triton's "no update"); the END request's are dropped.
 * `iterative_sequence` is refused (UNSUPPORTED).
 * @packageDocumentation
 */
import type { PackedTensor } from '@tritonserver-ts/protocol';

import { echo } from '../common/echo.js';
import { ServerError, invalidArg } from '../common/errors.js';
import type { ModelConfig } from '../repository/model-config.js';
import {
  sequenceControls,
  sequenceControlNames,
  type CorrelationIdControl,
} from '../repository/sequence-controls.js';
import type { ModelInstance } from '../runtime/types.js';
import { ModelStatistics } from '../statistics/model-statistics.js';
import { DirectSequenceStrategy, PADDING_SLOT } from './direct-sequence-queue.js';
import { SchedulerRejection, failureReasonOf } from './errors.js';
import type { ImplicitState } from './implicit-state.js';
import { OldestSequenceStrategy } from './oldest-sequence-strategy.js';
import type { BatchLayout } from './ragged.js';
import {
  SEQUENCE_END_FLAG,
  SEQUENCE_START_FLAG,
  SequenceControlTensors,
} from './sequence-control-tensors.js';
import { inSequence, readSequenceId, type SequenceId } from './sequence-id.js';
import type {
  SequenceBatcherHooks,
  SequenceRequest,
  SequenceSlot,
  SequenceStrategy,
} from './sequence-slot.js';
import type { Scheduler, SchedulerRequest, SchedulerResponse } from './types.js';

/** Triton's text for a backlogged sequence whose request timeout passed (UNAVAILABLE). */
export const SEQUENCE_TIMEOUT_MESSAGE = 'timeout of the corresponding sequence has been expired';

/** How long the reaper looks again at an idle sequence that is still in the backlog (Triton: 50 ms). */
const BACKLOG_IDLE_WAIT_NS = 50_000_000n;

/** Options of {@link SequenceBatcher}. */
export interface SequenceBatcherOptions {
  readonly modelName: string;
  readonly modelVersion: string;
  /** The model's config; it has `sequence_batching` (validated at load). */
  readonly config: ModelConfig;
  readonly instances: readonly ModelInstance[];
  readonly statistics?: ModelStatistics;
  readonly batchLayout?: BatchLayout;
  /** Monotonic ns clock (tests). */
  readonly clock?: () => bigint;
  /**
   * The model's implicit states, validated and with their start values (`loadImplicitStates`);
   * required when the config has `sequence_batching.state`.
   */
  readonly implicitStates?: readonly ImplicitState[];
}

/** Which slot and sequence an issued request with implicit state belongs to. */
interface StateOwner {
  readonly slot: SequenceSlot;
  readonly key: string | undefined;
  readonly end: boolean;
}

/** Sequences waiting for a slot, in arrival order of their first request. */
interface Backlog {
  readonly key: string;
  readonly items: SequenceRequest[];
  /** The backlog holds the sequence's END. */
  ended: boolean;
  timer: NodeJS.Timeout | undefined;
  expiresAt: bigint | undefined;
}

function corridTypeOf(id: SequenceId): string {
  return id.kind === 'string' ? 'BYTES' : 'UINT64';
}

function configTypeName(control: CorrelationIdControl): string {
  return control.dataType === 'TYPE_STRING' ? 'BYTES' : control.dataType.replace('TYPE_', '');
}

/** See the module documentation. */
export class SequenceBatcher implements Scheduler {
  readonly #model: string;
  readonly #stats: ModelStatistics;
  readonly #clock: () => bigint;
  readonly #controls: SequenceControlTensors;
  readonly #corrid: CorrelationIdControl | undefined;
  readonly #idleNs: bigint;
  readonly #strategy: SequenceStrategy;
  /** Free slots; the lowest slot number first, then the lowest instance (spreads sequences). */
  readonly #ready: SequenceSlot[] = [];
  /** Sequences holding a slot (until their END is queued, or timeout / cancellation). */
  readonly #active = new Map<string, SequenceSlot>();
  readonly #backlogs: Backlog[] = [];
  readonly #backlogByKey = new Map<string, Backlog>();
  /** Last request time of each sequence, for the idle reaper. */
  readonly #lastSeen = new Map<string, bigint>();
  #reaper: NodeJS.Timeout | undefined;
  #reaperAt: bigint | undefined;
  #backlogged = 0;
  #draining = false;
  readonly #states: readonly ImplicitState[];
  /** Issued requests of a model with implicit state, until their outputs come back. */
  readonly #stateOwners = new WeakMap<object, StateOwner>();

  constructor(options: SequenceBatcherOptions) {
    const { config } = options;
    const sb = config.sequence_batching;
    if (sb === undefined) throw new ServerError('INTERNAL', 'the sequence batcher needs sequence_batching');
    if (options.instances.length === 0) {
      throw new ServerError('INTERNAL', 'a scheduler needs at least one model instance');
    }
    this.#model = config.name === '' ? options.modelName : config.name;
    if (sb.iterative_sequence) {
      throw new ServerError(
        'UNSUPPORTED',
        `model '${this.#model}': sequence_batching.iterative_sequence is not supported`,
      );
    }
    if (sb.state.length > 0 && options.implicitStates === undefined) {
      throw new ServerError('INTERNAL', `model '${this.#model}': its implicit states were not loaded`);
    }
    this.#states = options.implicitStates ?? [];
    this.#stats = options.statistics ?? new ModelStatistics(options.modelName, options.modelVersion);
    this.#clock = options.clock ?? (() => process.hrtime.bigint());
    const batching = config.max_batch_size > 0;
    const controls = sequenceControls(config);
    this.#controls = new SequenceControlTensors(controls, batching);
    this.#corrid = controls.corrid;
    this.#idleNs = BigInt(sb.max_sequence_idle_microseconds) * 1000n;
    const candidates = sb.oldest?.max_candidate_sequences ?? 0;
    const slotCount = candidates > 0 ? candidates : Math.max(1, config.max_batch_size);
    const slots = options.instances.map((_, instance) =>
      Array.from({ length: slotCount }, (_, index): SequenceSlot => ({
        instance,
        index,
        key: undefined,
        releasePending: false,
        state: undefined,
      })),
    );
    for (let index = 0; index < slotCount; index++)
      for (const s of slots) this.#ready.push(s[index] as SequenceSlot);
    const hooks: SequenceBatcherHooks = {
      prepare: (slot, item) => this.#prepare(slot, item),
      executed: (request, outputs) => this.#executed(request, outputs),
      release: (slot) => this.#release(slot),
      cancelled: (slot, key) => this.#cancelled(slot, key),
    };
    const common = {
      instances: options.instances,
      slots,
      statistics: this.#stats,
      batching,
      maxBatchSize: config.max_batch_size,
      hooks,
      clock: this.#clock,
      ...(options.batchLayout === undefined ? {} : { batchLayout: options.batchLayout }),
    };
    this.#strategy =
      sb.oldest !== undefined
        ? new OldestSequenceStrategy({ ...common, oldest: sb.oldest })
        : new DirectSequenceStrategy({
            ...common,
            maxQueueDelayUs: sb.direct?.max_queue_delay_microseconds ?? 0,
            minimumSlotUtilization: sb.direct?.minimum_slot_utilization ?? 0,
            controlNames: new Set(sequenceControlNames(config)),
          });
  }

  get pendingCount(): number {
    return this.#strategy.pendingCount + this.#backlogged;
  }

  enqueue(request: SchedulerRequest): Promise<SchedulerResponse> {
    const id = readSequenceId(request.correlationId);
    const flags = request.flags ?? 0;
    const start = (flags & SEQUENCE_START_FLAG) !== 0;
    const end = (flags & SEQUENCE_END_FLAG) !== 0;
    const prefix = request.id !== undefined && request.id !== '' ? `[request id: ${echo(request.id)}] ` : '';
    const model = echo(this.#model);
    const corrid = this.#corrid;
    if (
      corrid !== undefined &&
      inSequence(id) &&
      (id.kind === 'string') !== (corrid.dataType === 'TYPE_STRING')
    ) {
      return this.#refuse(
        request,
        invalidArg(
          `${prefix}sequence batching control '${echo(corrid.name)}' data-type is '${corridTypeOf(id)}', but model '${model}' expects '${configTypeName(corrid)}'`,
        ),
      );
    }
    if (request.batchSize > 1) {
      return this.#refuse(
        request,
        invalidArg(
          `inference request to model '${model}' must specify batch-size 1 due to requirements of sequence batcher`,
        ),
      );
    }
    if (!inSequence(id)) {
      return this.#refuse(
        request,
        invalidArg(
          `inference request to model '${model}' must specify a non-zero or non-empty correlation ID`,
        ),
      );
    }
    if (this.#draining && start) return this.#refuse(request, SchedulerRejection.stopping());
    const key = id.key;
    const bound = this.#active.get(key);
    const backlog = this.#backlogByKey.get(key);
    if (!start && bound === undefined && backlog === undefined) {
      return this.#refuse(
        request,
        invalidArg(
          `inference request for sequence ${echo(id.text)} to model '${model}' must specify the START flag on the first request of the sequence`,
        ),
      );
    }
    const now = this.#clock();
    this.#lastSeen.set(key, now);
    this.#armReaper(now + this.#idleNs);
    return new Promise<SchedulerResponse>((resolve, reject) => {
      const item: SequenceRequest = {
        request: { ...request, inputs: new Map(request.inputs) },
        id,
        flags,
        resolve,
        reject,
      };
      if (bound !== undefined) {
        if (end) this.#active.delete(key);
        this.#strategy.enqueue(bound, [item]);
        return;
      }
      if (backlog !== undefined) {
        this.#addToBacklog(backlog, item);
        if (end) {
          backlog.ended = true;
          this.#backlogByKey.delete(key);
        }
        return;
      }
      const slot = this.#takeReadySlot();
      if (slot !== undefined) {
        slot.key = key;
        slot.state = undefined;
        if (!end) this.#active.set(key, slot);
        this.#strategy.enqueue(slot, [item]);
        return;
      }
      const created: Backlog = { key, items: [], ended: end, timer: undefined, expiresAt: undefined };
      this.#backlogs.push(created);
      if (!end) this.#backlogByKey.set(key, created);
      this.#addToBacklog(created, item);
    });
  }

  async drain(): Promise<void> {
    this.#draining = true;
    for (const backlog of this.#backlogs.splice(0)) this.#failBacklog(backlog, SchedulerRejection.stopping());
    this.#backlogByKey.clear();
    await this.#strategy.drain();
    if (this.#reaper !== undefined) clearTimeout(this.#reaper);
    this.#reaper = undefined;
    this.#lastSeen.clear();
  }

  #refuse(request: SchedulerRequest, error: ServerError): Promise<never> {
    const d = this.#clock() - request.receivedAt;
    this.#stats.recordFailure({
      requestNs: d > 0n ? d : 0n,
      reason: error.kind === 'INVALID_ARG' ? 'REJECTED' : failureReasonOf(error),
    });
    return Promise.reject(error);
  }

  #takeReadySlot(): SequenceSlot | undefined {
    let best = -1;
    for (let i = 0; i < this.#ready.length; i++) {
      const s = this.#ready[i] as SequenceSlot;
      const b = this.#ready[best];
      if (b === undefined || s.index < b.index || (s.index === b.index && s.instance < b.instance)) best = i;
    }
    return best < 0 ? undefined : this.#ready.splice(best, 1)[0];
  }

  #addToBacklog(backlog: Backlog, item: SequenceRequest): void {
    backlog.items.push(item);
    this.#backlogged += 1;
    this.#stats.adjustPending(1);
    const timeoutUs = item.request.timeoutUs;
    if (timeoutUs === undefined || timeoutUs === 0) return;
    const expiresAt = this.#clock() + BigInt(timeoutUs) * 1000n;
    if (backlog.expiresAt !== undefined && backlog.expiresAt <= expiresAt) return;
    backlog.expiresAt = expiresAt;
    if (backlog.timer !== undefined) clearTimeout(backlog.timer);
    backlog.timer = setTimeout(
      () => {
        backlog.timer = undefined;
        const i = this.#backlogs.indexOf(backlog);
        if (i < 0) return;
        this.#backlogs.splice(i, 1);
        if (this.#backlogByKey.get(backlog.key) === backlog) this.#backlogByKey.delete(backlog.key);
        this.#failBacklog(backlog, new ServerError('UNAVAILABLE', SEQUENCE_TIMEOUT_MESSAGE), 'REJECTED');
      },
      Math.max(0, Math.ceil(timeoutUs / 1000)),
    );
  }

  /** Takes a backlog's requests out of the pending count (it leaves the backlog). */
  #leaveBacklog(backlog: Backlog): void {
    if (backlog.timer !== undefined) clearTimeout(backlog.timer);
    backlog.timer = undefined;
    this.#backlogged -= backlog.items.length;
    this.#stats.adjustPending(-backlog.items.length);
  }

  #failBacklog(backlog: Backlog, error: ServerError, reason = failureReasonOf(error)): void {
    this.#leaveBacklog(backlog);
    for (const item of backlog.items) {
      const d = this.#clock() - item.request.receivedAt;
      this.#stats.recordFailure({ requestNs: d > 0n ? d : 0n, reason });
      item.reject(error);
    }
  }

  /** Control tensors of a request (or of a padding row) about to run in `slot`. */
  #prepare(slot: SequenceSlot, item: SequenceRequest): void {
    const inputs = item.request.inputs;
    if (slot === PADDING_SLOT) {
      this.#controls.addTo(inputs, 0, undefined);
      // A padding row copied its representative's state inputs (zeroed); otherwise the start value.
      for (const s of this.#states) if (!inputs.has(s.inputName)) inputs.set(s.inputName, s.start);
      return;
    }
    if ((item.flags & SEQUENCE_START_FLAG) !== 0) slot.state = undefined;
    this.#controls.addTo(inputs, item.flags, item.id);
    if (this.#states.length === 0) return;
    for (const s of this.#states) inputs.set(s.inputName, slot.state?.get(s.inputName) ?? s.start);
    this.#stateOwners.set(item.request, {
      slot,
      key: slot.key,
      end: (item.flags & SEQUENCE_END_FLAG) !== 0,
    });
  }

  /** Keeps the state outputs of an executed request as its slot's state (see the module doc). */
  #executed(request: object, outputs: ReadonlyMap<string, PackedTensor>): void {
    const owner = this.#stateOwners.get(request);
    if (owner === undefined) return;
    this.#stateOwners.delete(request);
    const { slot } = owner;
    // The sequence ended, or the slot was released (timeout, cancellation) and maybe taken again.
    if (owner.end || slot.key === undefined || slot.key !== owner.key) return;
    let next: Map<string, PackedTensor> | undefined;
    for (const s of this.#states) {
      const tensor = outputs.get(s.outputName);
      if (tensor === undefined) continue;
      next ??= new Map(slot.state);
      next.set(s.inputName, tensor.name === s.inputName ? tensor : { ...tensor, name: s.inputName });
    }
    if (next !== undefined) slot.state = next;
  }

  /** Frees `slot`, or hands it to the oldest backlogged sequence (Triton's `ReleaseSequenceSlot`). */
  #release(slot: SequenceSlot): void {
    const old = slot.key;
    if (old !== undefined && this.#active.get(old) === slot) this.#active.delete(old);
    slot.key = undefined;
    slot.releasePending = false;
    slot.state = undefined;
    while (this.#backlogs.length > 0) {
      const backlog = this.#backlogs.shift() as Backlog;
      if (this.#backlogByKey.get(backlog.key) === backlog) this.#backlogByKey.delete(backlog.key);
      if (backlog.items.some((i) => i.request.signal?.aborted === true)) {
        this.#failBacklog(backlog, SchedulerRejection.cancelled());
        continue;
      }
      this.#leaveBacklog(backlog);
      if (!backlog.ended) this.#active.set(backlog.key, slot);
      slot.key = backlog.key;
      // Not inside the strategy's own batching pass that released the slot.
      queueMicrotask(() => this.#strategy.enqueue(slot, backlog.items));
      return;
    }
    this.#ready.push(slot);
  }

  /** A request of `key` in `slot` was cancelled: the rest of that sequence is cancelled too. */
  #cancelled(slot: SequenceSlot, key: string): void {
    if (slot.key !== key) return;
    this.#lastSeen.delete(key);
    this.#release(slot);
    this.#strategy.cancelQueued(slot);
  }

  #armReaper(at: bigint): void {
    if (this.#reaper !== undefined && this.#reaperAt !== undefined && this.#reaperAt <= at) return;
    if (this.#reaper !== undefined) clearTimeout(this.#reaper);
    this.#reaperAt = at;
    const ms = Math.max(0, Math.ceil(Number(at - this.#clock()) / 1e6));
    this.#reaper = setTimeout(() => this.#reap(), ms);
    this.#reaper.unref();
  }

  /** Triton's reaper: sequences idle past `max_sequence_idle_microseconds` lose their slot. */
  #reap(): void {
    this.#reaper = undefined;
    this.#reaperAt = undefined;
    const now = this.#clock();
    let next: bigint | undefined;
    for (const [key, seen] of [...this.#lastSeen]) {
      const due = seen + this.#idleNs;
      if (due > now) {
        if (next === undefined || due < next) next = due;
        continue;
      }
      const slot = this.#active.get(key);
      if (slot !== undefined) {
        this.#active.delete(key);
        this.#lastSeen.delete(key);
        this.#strategy.forceEnd(slot);
      } else if (this.#backlogByKey.has(key)) {
        const again = now + BACKLOG_IDLE_WAIT_NS;
        if (next === undefined || again < next) next = again;
      } else {
        this.#lastSeen.delete(key);
      }
    }
    if (next !== undefined) this.#armReaper(next);
  }
}

/** Creates the sequence batcher of a model with `sequence_batching`. */
export function createSequenceBatcher(options: SequenceBatcherOptions): SequenceBatcher {
  return new SequenceBatcher(options);
}
