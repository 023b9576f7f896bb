import { describe, expect, it } from 'vitest';
import { Semaphore } from '../src/server/semaphore';

describe('Semaphore (bounds concurrent decodes)', () => {
  it('never runs more than the limit at once and runs everything in order', async () => {
    const s = new Semaphore(3);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        s.run(async () => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((r) => setTimeout(r, 5));
          order.push(i);
          running--;
        }),
      ),
    );
    expect(peak).toBe(3);
    expect(order).toHaveLength(12);
    expect(s.inUse).toBe(0);
  });

  it('a waiter whose request is cancelled leaves the queue', async () => {
    const s = new Semaphore(1);
    let release!: () => void;
    const holder = s.run(() => new Promise<void>((r) => (release = r)));
    const ac = new AbortController();
    const waiter = s.run(() => Promise.resolve('ran'), ac.signal);
    ac.abort();
    await expect(waiter).rejects.toMatchObject({ name: 'AbortError' });
    release();
    await holder;
    await expect(s.run(() => Promise.resolve('next'))).resolves.toBe('next');
    expect(s.inUse).toBe(0);
  });

  it('weighs holders: units never exceed the limit, a heavy waiter is not starved by light ones', async () => {
    const s = new Semaphore(10);
    let held = 0;
    let peak = 0;
    const order: string[] = [];
    const job = (name: string, weight: number, ms: number) =>
      s.run(
        async () => {
          held += Math.min(weight, 10);
          peak = Math.max(peak, held);
          order.push(name);
          await new Promise((r) => setTimeout(r, ms));
          held -= Math.min(weight, 10);
        },
        undefined,
        weight,
      );
    await Promise.all([job('a', 6, 20), job('heavy', 8, 5), job('b', 2, 5), job('huge', 50, 5)]);
    expect(peak).toBeLessThanOrEqual(10);
    // FIFO: 'b' fits beside 'a' but waits behind 'heavy'; 'huge' (capped at the limit) runs alone.
    expect(order).toEqual(['a', 'heavy', 'b', 'huge']);
    expect(s.inUse).toBe(0);
  });
});
