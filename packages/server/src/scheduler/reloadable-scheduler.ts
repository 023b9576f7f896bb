/**
 * Reload without dropping requests (`poll` / explicit reload of a loaded version): the core keeps one
 * {@link ReloadableScheduler} per served model version and hands every request to it; on reload it
 * builds the new instances and scheduler (and runs warmup), then calls
 * {@link ReloadableScheduler.replace}: new requests go to the new scheduler at once, while the old one
 * finishes everything it already holds, then `onRetired` disposes its instances.
 * @packageDocumentation
 */
import type { Scheduler, SchedulerRequest, SchedulerResponse } from './types.js';

/** See the module documentation. */
export class ReloadableScheduler implements Scheduler {
  private current: Scheduler;
  private readonly retiring = new Set<Scheduler>();
  private readonly retirements = new Set<Promise<void>>();

  constructor(initial: Scheduler) {
    this.current = initial;
  }

  /** The scheduler new requests go to. */
  get active(): Scheduler {
    return this.current;
  }

  enqueue(request: SchedulerRequest): Promise<SchedulerResponse> {
    return this.current.enqueue(request);
  }

  /** Requests held by the active scheduler and by every one still draining. */
  get pendingCount(): number {
    let n = this.current.pendingCount;
    for (const s of this.retiring) n += s.pendingCount;
    return n;
  }

  /**
   * Makes `next` the active scheduler and retires the previous one: resolves after it drained and
   * `onRetired` (e.g. disposing its instances) finished. `onRetired` errors are passed on.
   */
  async replace(next: Scheduler, onRetired?: () => Promise<void>): Promise<void> {
    const old = this.current;
    this.current = next;
    this.retiring.add(old);
    const retirement = (async () => {
      try {
        await old.drain();
      } finally {
        this.retiring.delete(old);
      }
      await onRetired?.();
    })();
    this.retirements.add(retirement);
    try {
      await retirement;
    } finally {
      this.retirements.delete(retirement);
    }
  }

  /** Drains the active scheduler and waits for every retirement in progress. */
  async drain(): Promise<void> {
    await Promise.all([this.current.drain(), ...[...this.retirements].map((r) => r.catch(() => undefined))]);
  }
}
