/** `StallWatch` on its own: when it probes, and what it does with the answer. */
import { describe, expect, it } from 'vitest';

import { StallWatch, type WatchedCall } from '../../src/grpc/stall-watch.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function watched(): WatchedCall & { abandonedWith: number | undefined } {
  const call = {
    abandonedWith: undefined as number | undefined,
    abandon(timeoutMs: number): void {
      call.abandonedWith = timeoutMs;
    },
  };
  return call;
}

describe('StallWatch', () => {
  it('does not probe a channel whose calls keep ending', async () => {
    let probes = 0;
    const watch = new StallWatch(
      () => {
        probes++;
        return Promise.resolve(true);
      },
      () => undefined,
      { afterMs: 60, timeoutMs: 50 },
    );
    const long = watched();
    watch.start(long);
    for (let i = 0; i < 10; i++) {
      const short = watched();
      watch.start(short);
      await sleep(20);
      watch.end(short);
    }
    expect(probes).toBe(0);
    watch.end(long);
    await sleep(100);
    expect(probes).toBe(0);
  });

  it('probes a quiet channel; an answer keeps the calls waiting', async () => {
    let probes = 0;
    let dead = 0;
    const watch = new StallWatch(
      () => {
        probes++;
        return Promise.resolve(true);
      },
      () => dead++,
      { afterMs: 30, timeoutMs: 50 },
    );
    const call = watched();
    watch.start(call);
    await sleep(150);
    expect(probes).toBeGreaterThanOrEqual(2);
    expect(call.abandonedWith).toBeUndefined();
    expect(dead).toBe(0);
    watch.end(call);
    expect(watch.size).toBe(0);
  });

  it('no answer: every call in flight is abandoned and the channel reported dead, once', async () => {
    let dead = 0;
    const watch = new StallWatch(
      () => Promise.resolve(false),
      () => dead++,
      { afterMs: 20, timeoutMs: 70 },
    );
    const a = watched();
    const b = watched();
    watch.start(a);
    watch.start(b);
    await sleep(100);
    expect(a.abandonedWith).toBe(70);
    expect(b.abandonedWith).toBe(70);
    expect(dead).toBe(1);
    expect(watch.size).toBe(0);
    // A dead watch probes no more.
    watch.start(watched());
    await sleep(60);
    expect(dead).toBe(1);
  });
});
