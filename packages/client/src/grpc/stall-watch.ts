/**
 * Notices a gRPC connection that stopped answering without a word. A header field over 64 KiB (a
 * server's huge `grpc-message`, for example) is an HPACK error for Node's HTTP/2: the session sends
 * GOAWAY, stops reading the socket and emits nothing, so grpc-js never learns the connection is gone
 * and that call, and every later one on the channel, waits forever. No HTTP/2 setting of Node or
 * grpc-js changes that (the 64 KiB is nghttp2's own limit).
 *
 * The watch keeps, per channel, the unary calls in flight. When one has waited {@link
 * StallProbeOptions.afterMs} and no call of the channel has ended in that time, it sends a probe
 * (`ServerLive`, a few bytes) on the same channel. A server that answers it (any status it sends) is
 * alive and the calls keep waiting; no answer within {@link StallProbeOptions.timeoutMs} means the
 * connection is dead: the calls in flight are abandoned with a typed error and the transport moves
 * to a new connection. Busy channels, where calls keep ending, are never probed.
 * @packageDocumentation
 */

/** When a stalled channel is probed; `false` in the transport options turns the watch off. */
export interface StallProbeOptions {
  /**
   * A call that has waited this long, while no call of its channel ended, triggers a probe
   * (default 2000 ms).
   */
  readonly afterMs?: number;
  /**
   * The probe's deadline; no answer in time means the connection is dead (default 8000 ms: generous,
   * so a healthy but busy server on a loaded host is never taken for a dead one).
   */
  readonly timeoutMs?: number;
}

/** Defaults of {@link StallProbeOptions}. */
export const DEFAULT_STALL_PROBE: Required<StallProbeOptions> = Object.freeze({
  afterMs: 2000,
  timeoutMs: 8000,
});

/** A call the watch can give up on. */
export interface WatchedCall {
  /** Ends the call at once; `timeoutMs` is the probe's deadline, for the message. */
  abandon(timeoutMs: number): void;
}

/**
 * Sends the probe on the watched channel; resolves `true` when the server answered (with any
 * status), `false` when nothing came back before `deadline`.
 */
type StallProbe = (deadline: Date) => Promise<boolean>;

/** The unary calls of one channel, and the probe of a channel that went quiet. */
export class StallWatch {
  readonly #calls = new Set<WatchedCall>();
  readonly #probe: StallProbe;
  readonly #onDead: () => void;
  readonly #afterMs: number;
  readonly #timeoutMs: number;
  /** When a call last ended, or calls started after a quiet time, or a probe was answered (ms). */
  #lastProgress = 0;
  #timer: NodeJS.Timeout | undefined;
  #probing = false;
  #dead = false;

  /**
   * @param probe - sends the probe on the channel.
   * @param onDead - called once when the channel is found dead (after its calls were abandoned).
   */
  constructor(probe: StallProbe, onDead: () => void, options: StallProbeOptions = {}) {
    this.#probe = probe;
    this.#onDead = onDead;
    this.#afterMs = options.afterMs ?? DEFAULT_STALL_PROBE.afterMs;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_STALL_PROBE.timeoutMs;
  }

  /** Calls in flight (diagnostics). */
  get size(): number {
    return this.#calls.size;
  }

  /** A call started on the channel. */
  start(call: WatchedCall): void {
    if (this.#calls.size === 0) {
      this.#lastProgress = performance.now();
      // A timer left from earlier calls checks again from the new start; no timer churn per call.
      if (this.#timer === undefined && !this.#dead) this.#schedule(this.#afterMs);
    }
    this.#calls.add(call);
  }

  /** A call ended (answered or failed): the channel made progress. */
  end(call: WatchedCall): void {
    if (this.#calls.delete(call)) this.#lastProgress = performance.now();
  }

  #schedule(ms: number): void {
    this.#timer = setTimeout(() => this.#check(), Math.max(1, ms));
    this.#timer.unref();
  }

  #stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #check(): void {
    this.#timer = undefined;
    if (this.#calls.size === 0 || this.#probing || this.#dead) return;
    const quiet = performance.now() - this.#lastProgress;
    if (quiet < this.#afterMs) {
      this.#schedule(this.#afterMs - quiet);
      return;
    }
    this.#probing = true;
    void this.#probe(new Date(Date.now() + this.#timeoutMs)).then(
      (answered) => this.#probed(answered),
      () => this.#probed(false),
    );
  }

  #probed(answered: boolean): void {
    this.#probing = false;
    if (this.#dead) return;
    if (answered) {
      this.#lastProgress = performance.now();
      if (this.#calls.size > 0) this.#schedule(this.#afterMs);
      return;
    }
    this.#dead = true;
    this.#stop();
    const calls = [...this.#calls];
    this.#calls.clear();
    for (const call of calls) call.abandon(this.#timeoutMs);
    this.#onDead();
  }
}
