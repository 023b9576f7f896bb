/**
 * Reusable memory for request bodies (issue 11). A binary-extension infer body of a known length
 * (`Content-Length`, no content coding) is received straight into a buffer taken from this pool
 * instead of being gathered as chunks and joined into a fresh buffer; the listener gives the
 * buffer back when the request's handler settles, after the reply has been encoded (every
 * reply is its own memory). Steady traffic then allocates no body memory per request: a fresh
 * 600 KB buffer per request is external memory that V8 only returns through garbage collections it
 * starts for the pressure (most of the server's per-request CPU beyond the model before this pool),
 * and freed 600 KB blocks fragment the C heap.
 *
 * Bounds: only bodies from {@link POOLED_BODY_MIN_BYTES} to {@link POOLED_BODY_MAX_BYTES} are
 * pooled, and at most {@link DEFAULT_BODY_POOL_IDLE_BYTES} of idle buffers are kept; anything else
 * is left to the garbage collector as before. The bodies in flight are bounded by the in-flight
 * body budget as before; the pool adds at most its idle bytes. Not a Triton setting.
 * @packageDocumentation
 */

/** Smaller bodies arrive in one piece and cost little: they are not pooled. */
export const POOLED_BODY_MIN_BYTES = 64 * 1024;
/** Larger bodies are rare and costly to keep idle: they are not pooled. */
export const POOLED_BODY_MAX_BYTES = 16 * 1024 * 1024;
/** Idle buffers kept for reuse, in bytes, by default. */
export const DEFAULT_BODY_POOL_IDLE_BYTES = 32 * 1024 * 1024;

/**
 * The capacity of a buffer for `bytes`: rounded up to a step of one eighth of its power of two, so
 * equal-sized bodies reuse each other's buffers and a reused buffer wastes at most 12.5 %.
 */
export function bodyCapacityFor(bytes: number): number {
  const step = 2 ** Math.max(3, Math.floor(Math.log2(Math.max(1, bytes))) - 3);
  return Math.ceil(bytes / step) * step;
}

/** Buffers for request bodies, reused from one request to the next (see the module documentation). */
export class BodyPool {
  readonly #idle: ArrayBuffer[] = [];
  /** Buffers handed out and not given back yet: only these are taken back, each once. */
  readonly #lent = new WeakSet<ArrayBuffer>();
  #idleBytes = 0;

  /** @param maxIdleBytes - idle buffers kept at most, in bytes. */
  constructor(readonly maxIdleBytes = DEFAULT_BODY_POOL_IDLE_BYTES) {}

  /** Bytes of idle buffers kept now. */
  get idleBytes(): number {
    return this.#idleBytes;
  }

  /** Whether a body of `size` bytes is received into a pooled buffer. */
  pools(size: number): boolean {
    return size >= POOLED_BODY_MIN_BYTES && size <= POOLED_BODY_MAX_BYTES;
  }

  /**
   * A buffer of `size` bytes (contents unspecified) whose byte `alignAt` sits on an 8-byte boundary
   * in memory, from an idle buffer when one fits, else new. Give it back with {@link give}.
   */
  take(size: number, alignAt = 0): Buffer {
    const pad = (8 - (alignAt % 8)) % 8;
    const need = size + pad;
    const capacity = bodyCapacityFor(need + 1);
    let found = -1;
    for (let i = 0; i < this.#idle.length; i++) {
      const length = (this.#idle[i] as ArrayBuffer).byteLength;
      if (length > need && length <= capacity) {
        found = i;
        break;
      }
    }
    let memory: ArrayBuffer;
    if (found >= 0) {
      memory = this.#idle[found] as ArrayBuffer;
      this.#idle.splice(found, 1);
      this.#idleBytes -= memory.byteLength;
    } else {
      // Uninitialised memory (every byte is written before it is read); always larger than the body,
      // so no consumer mistakes the view for a buffer of its own and transfers it away.
      memory = Buffer.allocUnsafeSlow(capacity).buffer;
    }
    this.#lent.add(memory);
    return Buffer.from(memory, pad, size);
  }

  /**
   * Takes back the memory of a buffer from {@link take} once its request is over; anything else
   * (another buffer, one given back already, one transferred away) is ignored.
   */
  give(body: Uint8Array): void {
    const memory = body.buffer;
    if (!(memory instanceof ArrayBuffer) || !this.#lent.has(memory)) return;
    this.#lent.delete(memory);
    if (memory.byteLength === 0 || this.#idleBytes + memory.byteLength > this.maxIdleBytes) return;
    this.#idle.push(memory);
    this.#idleBytes += memory.byteLength;
  }
}
