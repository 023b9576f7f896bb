/**
 * A request while it is inside a scheduler, and the queue interface the scheduling engine drives.
 * @packageDocumentation
 */
import type { ServerError } from '../common/errors.js';
import type { SchedulerRequest, SchedulerResponse } from './types.js';

/** One request held by a scheduler. */
export interface QueuedRequest {
  readonly request: SchedulerRequest;
  /** Rows the request contributes to a batch. */
  readonly rows: number;
  /** `process.hrtime.bigint()` when the request entered the scheduler (start of its queue time). */
  readonly enqueuedAt: bigint;
  /** Requests with equal keys may share a batch. */
  readonly batchKey: string;
  /** Priority level the request is queued at (0 when the scheduler has no levels). */
  level: number;
  /** Absolute queue deadline (hrtime ns), or undefined for no timeout. */
  deadline: bigint | undefined;
  /** What happens at the deadline. */
  timeoutAction: 'REJECT' | 'DELAY';
  /** Settles the caller's promise. */
  readonly resolve: (response: SchedulerResponse) => void;
  readonly reject: (error: ServerError) => void;
  /** The request's queue-timeout timer (`REJECT` with a deadline) while it waits. */
  timer: NodeJS.Timeout | undefined;
  /**
   * Set once the request has left the queue (taken to run, or failed). A request taken as soon as
   * it is admitted is never watched for an abort and gets no timer.
   */
  left: boolean;
  /**
   * A padding row (the sequence batcher's "null request" for an idle slot): it runs in the batch,
   * counts in the execution's batch size, but was never admitted, so it is neither settled nor
   * counted as a request.
   */
  readonly padding?: boolean;
}

/** What a queue hands the engine when an instance is free. */
export type TakeResult =
  /** Run these requests as one execution (possibly after failing `expired`). */
  | { readonly kind: 'batch'; readonly entries: QueuedRequest[]; readonly expired: QueuedRequest[] }
  /** Nothing to run yet: look again after `ns` nanoseconds (the batcher's queue delay). */
  | { readonly kind: 'wait'; readonly ns: bigint; readonly expired: QueuedRequest[] }
  /** Nothing queued. */
  | { readonly kind: 'empty'; readonly expired: QueuedRequest[] };

/** The queueing and batch-forming policy of a scheduler. */
export interface SchedulingQueue {
  /**
   * False when the queue never puts two requests in one execution (it ignores
   * {@link QueuedRequest.batchKey}, so the engine does not compute it). Default true.
   */
  readonly formsBatches?: boolean;
  /** Requests waiting (not yet executing). */
  readonly size: number;
  /**
   * Queues `entry` (setting its `level`, `deadline` and `timeoutAction`), or returns the error to
   * reject it with (queue full).
   */
  admit(entry: QueuedRequest): ServerError | undefined;
  /** Removes a queued request; false when it is no longer queued. */
  remove(entry: QueuedRequest): boolean;
  /**
   * The next batch to run now. `flush` = run whatever is queued without waiting for a fuller
   * batch (draining). `expired` are requests past their deadline under `REJECT`, already removed.
   */
  take(now: bigint, flush: boolean): TakeResult;
}
