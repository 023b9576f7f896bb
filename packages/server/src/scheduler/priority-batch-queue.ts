/**
 * The dynamic batcher's queue, per Triton's semantics:
 *
 * - One queue per priority level (1 = highest; `priority_levels` of them, or a single one when 0).
 *   A request's `priority` outside 1..levels (or 0) goes to `default_priority_level`.
 * - Each level has a `ModelQueuePolicy` (`priority_queue_policy[level]`, else
 *   `default_queue_policy`): `max_queue_size` (0 = unlimited; a full level rejects with "Exceeds
 *   maximum queue size"), `default_timeout_microseconds` (0 = none), `allow_timeout_override`
 *   (a request `timeout` may shorten it, never lengthen it; with no default any request timeout
 *   applies), and `timeout_action`: `REJECT` fails an expired request with "Request timeout expired",
 *   `DELAY` moves it behind every request of its level that has not expired.
 * - Batches are formed in level order (within a level: not-delayed, then delayed, FIFO). A batch
 *   never splits a request, never exceeds `max_batch_size` rows, and only holds requests whose inputs
 *   agree on datatypes and non-batch dims (a different request closes the batch).
 * - With free instances: a batch whose size is a preferred size goes at once (the largest one
 *   reachable; when adding the next request would pass the largest preferred size, what is pending
 *   goes). Otherwise the batch goes when it cannot grow (`max_batch_size` reached, next request does
 *   not fit or is incompatible), when the oldest request has waited `max_queue_delay_microseconds`,
 *   or at once when that delay is 0; until then the batcher waits for more requests.
 * @packageDocumentation
 */
import type { ServerError } from '../common/errors.js';
import type { ModelDynamicBatching, ModelQueuePolicy } from '../repository/model-config.js';
import type { QueuedRequest, SchedulingQueue, TakeResult } from './entry.js';
import { SchedulerRejection } from './errors.js';

/** Limits of one priority level (the parsed `ModelQueuePolicy`). */
interface LevelPolicy {
  readonly maxQueueSize: number;
  readonly defaultTimeoutNs: bigint;
  readonly allowTimeoutOverride: boolean;
  readonly action: 'REJECT' | 'DELAY';
}

class Level {
  normal: QueuedRequest[] = [];
  delayed: QueuedRequest[] = [];
  constructor(readonly policy: LevelPolicy) {}
  get size(): number {
    return this.normal.length + this.delayed.length;
  }
}

const NO_POLICY: LevelPolicy = {
  maxQueueSize: 0,
  defaultTimeoutNs: 0n,
  allowTimeoutOverride: false,
  action: 'REJECT',
};

function toPolicy(p: ModelQueuePolicy | undefined): LevelPolicy {
  if (p === undefined) return NO_POLICY;
  return {
    maxQueueSize: p.max_queue_size,
    defaultTimeoutNs: BigInt(p.default_timeout_microseconds) * 1000n,
    allowTimeoutOverride: p.allow_timeout_override,
    action: p.timeout_action,
  };
}

/** Options of {@link PriorityBatchQueue}. */
export interface PriorityBatchQueueOptions {
  readonly maxBatchSize: number;
  readonly dynamicBatching: ModelDynamicBatching;
}

/** See the module documentation. */
export class PriorityBatchQueue implements SchedulingQueue {
  private readonly levels: Level[];
  private readonly defaultLevel: number;
  private readonly maxBatchSize: number;
  private readonly preferred: ReadonlySet<number>;
  private readonly maxPreferred: number;
  private readonly delayNs: bigint;
  private count = 0;

  constructor(options: PriorityBatchQueueOptions) {
    const db = options.dynamicBatching;
    this.maxBatchSize = Math.max(1, options.maxBatchSize);
    const preferred = db.preferred_batch_size.filter((s) => s > 0 && s <= this.maxBatchSize);
    this.preferred = new Set(preferred);
    this.maxPreferred = preferred.length > 0 ? Math.max(...preferred) : this.maxBatchSize;
    this.delayNs = BigInt(db.max_queue_delay_microseconds) * 1000n;
    const n = db.priority_levels > 0 ? db.priority_levels : 1;
    this.levels = [];
    for (let level = 1; level <= n; level++) {
      const specific = db.priority_levels > 0 ? db.priority_queue_policy[String(level)] : undefined;
      this.levels.push(new Level(toPolicy(specific ?? db.default_queue_policy)));
    }
    const d = db.default_priority_level;
    this.defaultLevel = db.priority_levels > 0 && d >= 1 && d <= n ? d : 1;
  }

  get size(): number {
    return this.count;
  }

  /** The level (1-based) a request priority maps to. */
  levelOf(priority: number): number {
    return Number.isInteger(priority) && priority >= 1 && priority <= this.levels.length
      ? priority
      : this.defaultLevel;
  }

  admit(entry: QueuedRequest): ServerError | undefined {
    const levelNo = this.levelOf(entry.request.priority);
    const level = this.levels[levelNo - 1] as Level;
    const policy = level.policy;
    if (policy.maxQueueSize > 0 && level.size >= policy.maxQueueSize) return SchedulerRejection.queueFull();
    let timeoutNs = policy.defaultTimeoutNs;
    const requested = entry.request.timeoutUs;
    if (policy.allowTimeoutOverride && requested !== undefined && requested > 0) {
      const override = BigInt(Math.trunc(requested)) * 1000n;
      if (timeoutNs === 0n || override < timeoutNs) timeoutNs = override;
    }
    entry.level = levelNo;
    entry.deadline = timeoutNs > 0n ? entry.enqueuedAt + timeoutNs : undefined;
    entry.timeoutAction = policy.action;
    level.normal.push(entry);
    this.count += 1;
    return undefined;
  }

  remove(entry: QueuedRequest): boolean {
    const level = this.levels[entry.level - 1];
    if (level === undefined) return false;
    for (const list of [level.normal, level.delayed]) {
      const at = list.indexOf(entry);
      if (at >= 0) {
        list.splice(at, 1);
        this.count -= 1;
        return true;
      }
    }
    return false;
  }

  /** Moves expired DELAY requests behind their level; removes and returns expired REJECT requests. */
  private applyPolicy(now: bigint): QueuedRequest[] {
    const expired: QueuedRequest[] = [];
    for (const level of this.levels) {
      if (level.policy.defaultTimeoutNs === 0n && !level.policy.allowTimeoutOverride) continue;
      const keep: QueuedRequest[] = [];
      for (const e of level.normal) {
        if (e.deadline !== undefined && now >= e.deadline) {
          if (e.timeoutAction === 'DELAY') level.delayed.push(e);
          else {
            expired.push(e);
            this.count -= 1;
          }
        } else keep.push(e);
      }
      if (keep.length !== level.normal.length) level.normal = keep;
    }
    return expired;
  }

  take(now: bigint, flush: boolean): TakeResult {
    const expired = this.applyPolicy(now);
    if (this.count === 0) return { kind: 'empty', expired };
    const batch: QueuedRequest[] = [];
    let rows = 0;
    let key: string | undefined;
    let best = 0;
    let sendNow = false;
    let oldest: bigint | undefined;
    outer: for (const level of this.levels) {
      for (const list of [level.normal, level.delayed]) {
        for (const e of list) {
          if (batch.length > 0) {
            if (rows + e.rows > this.maxPreferred && best === 0) best = batch.length;
            if (rows + e.rows > this.maxBatchSize || e.batchKey !== key) {
              sendNow = true;
              break outer;
            }
          } else key = e.batchKey;
          batch.push(e);
          rows += e.rows;
          if (oldest === undefined || e.enqueuedAt < oldest) oldest = e.enqueuedAt;
          if (this.preferred.has(rows)) best = batch.length;
        }
      }
    }
    const age = now - (oldest ?? now);
    const delayExceeded = flush || (this.delayNs > 0n && age >= this.delayNs);
    let chosen: QueuedRequest[] | undefined;
    if (best > 0 && !delayExceeded) chosen = batch.slice(0, best);
    else if (sendNow || rows >= this.maxPreferred || delayExceeded || this.delayNs === 0n) chosen = batch;
    if (chosen === undefined) return { kind: 'wait', ns: this.delayNs - age, expired };
    this.removeTaken(chosen);
    return { kind: 'batch', entries: chosen, expired };
  }

  /** Removes a batch, which is a prefix of the level-ordered queue. */
  private removeTaken(taken: readonly QueuedRequest[]): void {
    const set = new Set(taken);
    for (const level of this.levels) {
      if (level.normal.length > 0 && set.has(level.normal[0] as QueuedRequest)) {
        level.normal = level.normal.filter((e) => !set.has(e));
      }
      if (level.delayed.length > 0 && set.has(level.delayed[0] as QueuedRequest)) {
        level.delayed = level.delayed.filter((e) => !set.has(e));
      }
    }
    this.count -= taken.length;
  }
}
