import 'server-only';

/**
 * At most `limit` holders at once; others wait in FIFO order. Bounds the memory of concurrent image
 * decodes (a 40 MP upload decodes to 120 MB of RGB). A waiter whose signal aborts leaves the queue.
 */
export class Semaphore {
  private active = 0;
  private readonly queue: {
    resolve: () => void;
    reject: (e: unknown) => void;
    signal?: AbortSignal | undefined;
  }[] = [];

  constructor(readonly limit: number) {}

  get inUse(): number {
    return this.active;
  }

  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  private acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortError());
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const entry = { resolve, reject, signal };
      this.queue.push(entry);
      signal?.addEventListener(
        'abort',
        () => {
          const i = this.queue.indexOf(entry);
          if (i >= 0) {
            this.queue.splice(i, 1);
            reject(abortError());
          }
        },
        { once: true },
      );
    });
  }

  private release(): void {
    const next = this.queue.shift();
    if (next) next.resolve();
    else this.active--;
  }
}

function abortError(): Error {
  return Object.assign(new Error('The request was cancelled by the client.'), { name: 'AbortError' });
}
