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

function onTimeout(scope: CallScope): void {
  scope.timeOut();
}

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
  #timeout: ReturnType<typeof setTimeout> | undefined;

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
      this.#timeout = setTimeout(onTimeout, timeoutMs, this);
      deadline = Date.now() + timeoutMs;
    }
    userSignal?.addEventListener('abort', this, { once: true });
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the context's signal getter reads the scope
    const scope = this;
    this.context = {
      headers,
      queryParams,
      deadline,
      timer,
      cancellation: this,
      get signal(): AbortSignal {
        return scope.signal;
      },
    };
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
    clearTimeout(this.#timeout);
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
