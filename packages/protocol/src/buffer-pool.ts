/**
 * Reusable memory for large messages (issue 11). A fresh buffer of hundreds of kilobytes per
 * message (one food image is 602 KB) is external memory that V8 only returns through garbage
 * collections it starts for the pressure; freed blocks of that size also fragment the C heap. A
 * {@link BufferPool} hands out buffers and takes them back once their message is done with, so
 * steady traffic allocates no message memory.
 *
 * Used by the server for request bodies (`BodyPool`) and by the gRPC client for encoded requests.
 * Bounds: only sizes from `minBytes` to `maxBytes` are pooled, and at most `maxIdleBytes` of idle
 * buffers are kept; anything else is left to the garbage collector.
 * @packageDocumentation
 */

/**
 * The capacity of a buffer for `bytes`: rounded up to a step of one eighth of its power of two, so
 * equal-sized messages reuse each other's buffers and a reused buffer wastes at most 12.5 %.
 */
export function pooledCapacityFor(bytes: number): number {
  const step = 2 ** Math.max(3, Math.floor(Math.log2(Math.max(1, bytes))) - 3);
  return Math.ceil(bytes / step) * step;
}

/** Bounds of a {@link BufferPool}. */
export interface BufferPoolOptions {
  /** Smaller sizes are not pooled. */
  readonly minBytes: number;
  /** Larger sizes are not pooled. */
  readonly maxBytes: number;
  /** Idle buffers kept for reuse, in bytes at most. */
  readonly maxIdleBytes: number;
}

/** Buffers reused from one message to the next (see the module documentation). */
export class BufferPool {
  readonly minBytes: number;
  readonly maxBytes: number;
  readonly maxIdleBytes: number;
  readonly #idle: ArrayBuffer[] = [];
  /** Buffers handed out and not given back yet: only these are taken back, each once. */
  readonly #lent = new WeakSet<ArrayBuffer>();
  #idleBytes = 0;

  /** @throws RangeError when a bound is not a non-negative integer or `minBytes` exceeds `maxBytes`. */
  constructor(options: BufferPoolOptions) {
    for (const key of ['minBytes', 'maxBytes', 'maxIdleBytes'] as const) {
      const value = options[key];
      if (!Number.isSafeInteger(value) || value < 0) {
        throw new RangeError(`BufferPool: ${key} must be a non-negative integer, got ${String(value)}`);
      }
    }
    if (options.minBytes > options.maxBytes) {
      throw new RangeError(
        `BufferPool: minBytes (${options.minBytes}) must not exceed maxBytes (${options.maxBytes})`,
      );
    }
    this.minBytes = options.minBytes;
    this.maxBytes = options.maxBytes;
    this.maxIdleBytes = options.maxIdleBytes;
  }

  /** Bytes of idle buffers kept now. */
  get idleBytes(): number {
    return this.#idleBytes;
  }

  /** Whether a message of `size` bytes gets a pooled buffer from {@link take}. */
  pools(size: number): boolean {
    return size >= this.minBytes && size <= this.maxBytes;
  }

  /**
   * A buffer of `size` bytes (contents unspecified) whose byte `alignAt` sits on an 8-byte boundary
   * in memory: from an idle buffer when one fits, else new. Give it back with {@link give} once
   * nothing reads or writes it any more. A size the pool does not pool gets a buffer of its own
   * (`give` ignores it).
   * @throws RangeError when `size` or `alignAt` is not a non-negative integer.
   */
  take(size: number, alignAt = 0): Buffer {
    if (!Number.isSafeInteger(size) || size < 0 || !Number.isSafeInteger(alignAt) || alignAt < 0) {
      throw new RangeError(
        `BufferPool.take: size and alignAt must be non-negative integers, got ${String(size)} and ${String(alignAt)}`,
      );
    }
    const pad = (8 - (alignAt % 8)) % 8;
    const need = size + pad;
    if (!this.pools(size)) {
      // Node's slab buffers start on 8-byte boundaries.
      return pad === 0
        ? Buffer.allocUnsafe(size)
        : Buffer.from(Buffer.allocUnsafeSlow(need).buffer, pad, size);
    }
    const capacity = pooledCapacityFor(need + 1);
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
      // Uninitialised memory (every byte is written before it is read); always larger than the
      // message, so no consumer mistakes the view for a buffer of its own and transfers it away.
      memory = Buffer.allocUnsafeSlow(capacity).buffer;
    }
    this.#lent.add(memory);
    return Buffer.from(memory, pad, size);
  }

  /**
   * Takes back the memory of a buffer from {@link take} once its message is done with; anything else
   * (another buffer, one given back already, one transferred away) is ignored.
   */
  give(buffer: Uint8Array): void {
    const memory = buffer.buffer;
    if (!(memory instanceof ArrayBuffer) || !this.#lent.has(memory)) return;
    this.#lent.delete(memory);
    if (memory.byteLength === 0 || this.#idleBytes + memory.byteLength > this.maxIdleBytes) return;
    this.#idle.push(memory);
    this.#idleBytes += memory.byteLength;
  }
}
