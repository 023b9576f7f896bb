/**
 * The cancellation of one client call (its timeout and the caller's abort signal), cheap on the
 * path where nothing fires: no `AbortController` unless somebody reads `signal`, no closures.
 * `TritonClient` makes one {@link CallScope} per call and hands it to the transport as the
 * {@link TransportContext}; its own transports follow the cancellation through
 * {@link Cancellation} listeners, other transports through the standard `signal`.
 * @packageDocumentation
 */
import { TritonAbortError, TritonTimeoutError } from './errors.js';
import type { InferTimer } from './infer-stat.js';
import type { QueryParams } from './query-params.js';
import type { Cancellation, CancellationListener, TransportContext } from './transport.js';

/**
 * The calls whose timeout is `timeoutMs`, in the order they started, so in the order their
 * deadlines fall (on the monotonic clock), sharing one timer armed for the earliest: a call links
 * and unlinks itself (no timer made or cleared per call). While the queue has calls its timer is
 * ref'd (it keeps the process alive, as a timer per call did); once empty it is unref'd, and when
 * it then fires with nothing due it is dropped.
 */
class DeadlineQueue {
  readonly timeoutMs: number;
  head: CallScope | undefined = undefined;
  tail: CallScope | undefined = undefined;
  timer: ReturnType<typeof setTimeout> | undefined = undefined;

  constructor(timeoutMs: number) {
    this.timeoutMs = timeoutMs;
  }

  add(scope: CallScope): void {
    const tail = this.tail;
    scope.prev = tail;
    scope.next = undefined;
    if (tail === undefined) this.head = scope;
    else tail.next = scope;
    this.tail = scope;
    if (this.timer === undefined) this.timer = setTimeout(fireQueue, this.timeoutMs, this);
    else if (tail === undefined) this.timer.ref();
  }

  remove(scope: CallScope): void {
    const { prev, next } = scope;
    if (prev === undefined) this.head = next;
    else prev.next = next;
    if (next === undefined) this.tail = prev;
    else next.prev = prev;
    scope.prev = undefined;
    scope.next = undefined;
    if (this.head === undefined) this.timer?.unref();
  }

  /** The timer fired: times out every call that is due, then re-arms for the next (or drops the timer). */
  fire(): void {
    // `timer` stays the fired timer during the loop: a call started by a timeout listener only links itself.
    const now = performance.now();
    for (let scope = this.head; scope !== undefined && scope.due <= now; scope = this.head) {
      this.remove(scope);
      scope.queue = undefined;
      scope.timeOut();
    }
    this.timer = undefined;
    const head = this.head;
    if (head === undefined) {
      if (queues.get(this.timeoutMs) === this) queues.delete(this.timeoutMs);
      return;
    }
    // Never early: a timer may fire up to a millisecond before the monotonic clock reaches `due`.
    this.timer = setTimeout(fireQueue, Math.max(1, Math.ceil(head.due - now)), this);
  }
}

function fireQueue(queue: DeadlineQueue): void {
  queue.fire();
}

/** One deadline queue per timeout value in use (a client has one default timeout). */
const queues = new Map<number, DeadlineQueue>();

function queueFor(timeoutMs: number): DeadlineQueue {
  let queue = queues.get(timeoutMs);
  if (queue === undefined) {
    queue = new DeadlineQueue(timeoutMs);
    queues.set(timeoutMs, queue);
  }
  return queue;
}

/** The deadline timers in use (for tests): per timeout value, the calls waiting and whether a timer is armed and ref'd. */
export function deadlineTimers(): { timeoutMs: number; calls: number; armed: boolean; refed: boolean }[] {
  const out: { timeoutMs: number; calls: number; armed: boolean; refed: boolean }[] = [];
  for (const queue of queues.values()) {
    let calls = 0;
    for (let s = queue.head; s !== undefined; s = s.next) calls++;
    out.push({
      timeoutMs: queue.timeoutMs,
      calls,
      armed: queue.timer !== undefined,
      refed: queue.timer?.hasRef() ?? false,
    });
  }
  return out;
}

/** The context's `signal`: the scope's, made on first read. */
const SIGNAL_PROPERTY: PropertyDescriptor = {
  get(this: { readonly cancellation: CallScope }): AbortSignal {
    return this.cancellation.signal;
  },
  enumerable: true,
  configurable: true,
};

/**
 * One call's cancellation (timeout or user abort), readable as a lazily made `AbortSignal` or
 * through {@link Cancellation} listeners, and its {@link TransportContext}.
 */
export class CallScope implements Cancellation {
  /**
   * What the transport gets: a plain object (so a wrapper may spread it), whose `signal` is a
   * getter of {@link CallScope.signal} and whose `cancellation` is this scope.
   */
  readonly context: TransportContext;
  /** The call's timeout in ms (0 or Infinity: none). */
  readonly timeoutMs: number;
  /** The caller's signal, if any. */
  readonly userSignal: AbortSignal | undefined;
  #aborted = false;
  #reason: unknown = undefined;
  #timedOut = false;
  #controller: AbortController | undefined;
  #listeners: CancellationListener[] | undefined;
  /** The deadline queue this call waits in (none without a timeout, or once timed out or disposed). */
  queue: DeadlineQueue | undefined = undefined;
  /** When the call times out, on the monotonic clock (`performance.now()`). */
  due = 0;
  /** Neighbours in {@link CallScope.queue}. */
  prev: CallScope | undefined = undefined;
  next: CallScope | undefined = undefined;

  constructor(
    headers: Readonly<Record<string, string>>,
    queryParams: Readonly<QueryParams>,
    timeoutMs: number,
    userSignal: AbortSignal | undefined,
    timer: InferTimer | undefined,
  ) {
    this.timeoutMs = timeoutMs;
    this.userSignal = userSignal;
    let deadline: number | undefined;
    // 0 or Infinity: no deadline (the Python client's `None`).
    if (timeoutMs > 0 && Number.isFinite(timeoutMs)) {
      this.due = performance.now() + timeoutMs;
      deadline = Date.now() + timeoutMs;
      const queue = queueFor(timeoutMs);
      this.queue = queue;
      queue.add(this);
    }
    userSignal?.addEventListener('abort', this, { once: true });
    const context = { headers, queryParams, deadline, timer, cancellation: this };
    // An own, enumerable getter (a wrapper may spread the context), defined with one shared
    // descriptor: a getter in an object literal would make each context a dictionary-mode object.
    Object.defineProperty(context, 'signal', SIGNAL_PROPERTY);
    this.context = context as typeof context & { readonly signal: AbortSignal };
  }

  /** Fires on user abort or timeout; made on first use. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  /** Whether the call's timeout fired. */
  get timedOut(): boolean {
    return this.#timedOut;
  }

  addListener(listener: CancellationListener): void {
    (this.#listeners ??= []).push(listener);
  }

  removeListener(listener: CancellationListener): void {
    const listeners = this.#listeners;
    if (listeners === undefined) return;
    const i = listeners.indexOf(listener);
    if (i >= 0) listeners.splice(i, 1);
  }

  /** The timeout fired. */
  timeOut(): void {
    this.#timedOut = true;
    this.#abort(new TritonTimeoutError(this.timeoutMs));
  }

  /** The caller's signal fired (the scope is its event listener). */
  handleEvent(): void {
    this.#abort(new TritonAbortError({ cause: this.userSignal?.reason }));
  }

  #abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    const listeners = this.#listeners;
    if (listeners === undefined) return;
    this.#listeners = undefined;
    for (const listener of listeners) listener.onCallAbort(reason);
  }

  /**
   * The error to report for a failure: the timeout or abort error when the call was cancelled
   * (with the failure as its cause), else the failure itself.
   */
  classify(raw: unknown): unknown {
    if (this.#timedOut) return new TritonTimeoutError(this.timeoutMs, { cause: raw });
    if (this.userSignal?.aborted === true) return new TritonAbortError({ cause: raw });
    return raw;
  }

  /** Stops the timer and the user-signal listener (the call is over). */
  dispose(): void {
    const queue = this.queue;
    if (queue !== undefined) {
      this.queue = undefined;
      queue.remove(this);
    }
    this.userSignal?.removeEventListener('abort', this);
  }
}

/** Follows an `AbortSignal` as a {@link Cancellation} (for contexts not made by `TritonClient`). */
class SignalCancellation implements Cancellation {
  readonly #signal: AbortSignal;
  readonly #bound = new Map<CancellationListener, () => void>();

  constructor(signal: AbortSignal) {
    this.#signal = signal;
  }

  get aborted(): boolean {
    return this.#signal.aborted;
  }

  get reason(): unknown {
    return this.#signal.reason as unknown;
  }

  addListener(listener: CancellationListener): void {
    const signal = this.#signal;
    const bound = (): void => listener.onCallAbort(signal.reason);
    this.#bound.set(listener, bound);
    signal.addEventListener('abort', bound, { once: true });
  }

  removeListener(listener: CancellationListener): void {
    const bound = this.#bound.get(listener);
    if (bound === undefined) return;
    this.#bound.delete(listener);
    this.#signal.removeEventListener('abort', bound);
  }
}

/** The context's {@link Cancellation}: its own when it has one, else one that follows its signal. */
export function cancellationOf(ctx: TransportContext): Cancellation {
  return ctx.cancellation ?? new SignalCancellation(ctx.signal);
}
