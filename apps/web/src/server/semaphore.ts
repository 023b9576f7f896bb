import 'server-only';

interface Waiter {
  readonly weight: number;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

/**
 * A weighted semaphore: holders take `weight` units out of `limit` (one each by default); others
 * wait in FIFO order, so a large holder is never starved by smaller ones behind it. Bounds the
 * memory of concurrent image decodes: counted (`DECODE_CONCURRENCY`) and by pixels
 * (`DECODE_PIXEL_BUDGET`: a 40 MP upload decodes to 120 MB of RGB). A weight above the limit takes
 * the whole limit. A waiter whose signal aborts leaves the queue.
 */
export class Semaphore {
  private used = 0;
  private readonly queue: Waiter[] = [];

  constructor(readonly limit: number) {}

  /** Units held now. */
  get inUse(): number {
    return this.used;
  }

  async run<T>(fn: () => Promise<T>, signal?: AbortSignal, weight = 1): Promise<T> {
    const units = Math.min(Math.max(1, Math.ceil(weight)), this.limit);
    await this.acquire(units, signal);
    try {
      return await fn();
    } finally {
      this.release(units);
    }
  }

  private acquire(units: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortError());
    if (this.queue.length === 0 && this.used + units <= this.limit) {
      this.used += units;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const entry: Waiter = { weight: units, resolve, reject };
      this.queue.push(entry);
      signal?.addEventListener(
        'abort',
        () => {
          const i = this.queue.indexOf(entry);
          if (i >= 0) {
            this.queue.splice(i, 1);
            reject(abortError());
            this.grant(); // the head may have changed
          }
        },
        { once: true },
      );
    });
  }

  private release(units: number): void {
    this.used -= units;
    this.grant();
  }

  /** Admits waiters from the head while they fit. */
  private grant(): void {
    for (let head = this.queue[0]; head && this.used + head.weight <= this.limit; head = this.queue[0]) {
      this.queue.shift();
      this.used += head.weight;
      head.resolve();
    }
  }
}

/** The platform's abort error (a `DOMException` named `AbortError`), as `fetch` and streams throw it. */
function abortError(): Error {
  return new DOMException('The request was cancelled by the client.', 'AbortError');
}
