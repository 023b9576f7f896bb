// The calls' shared deadline timers (src/call-scope.ts). The hanging server is the in-process fault
// server (test/fault-server.ts): a real Triton cannot be made to hang on demand.
import { afterEach, describe, expect, it } from 'vitest';
import { TritonAbortError, TritonClient, TritonTimeoutError } from '../src/index.js';
import { deadlineTimers } from '../src/call-scope.js';
import { hang, reply, startFaultServer, type FaultServer } from './fault-server.js';

let server: FaultServer | undefined;
let client: TritonClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

const inputs = [{ name: 'IN', datatype: 'INT32', shape: [1, 2], data: new Int32Array([1, 2]) }] as const;

/** The calls still waiting in any deadline queue, and whether any timer still holds the process. */
function waiting(): { calls: number; refed: boolean } {
  const timers = deadlineTimers();
  return { calls: timers.reduce((n, t) => n + t.calls, 0), refed: timers.some((t) => t.refed) };
}

describe('shared deadline timers', () => {
  it('times out many calls with different deadlines, each at its own moment, with TritonTimeoutError', async () => {
    server = await startFaultServer(hang);
    client = new TritonClient({ url: server.url, maxRetries: 0 });
    const started = performance.now();
    // Interleaved: later calls with shorter deadlines must not wait for earlier, longer ones.
    const timeouts = [300, 100, 200, 100, 300, 200, 150, 100];
    const outcomes = await Promise.all(
      timeouts.map((timeoutMs, i) =>
        (i % 2 === 0
          ? client!.infer('m', inputs, { timeoutMs })
          : client!.getServerMetadata({ timeoutMs })
        ).then(
          () => ({ timeoutMs, error: undefined as unknown, ms: performance.now() - started }),
          (error: unknown) => ({ timeoutMs, error, ms: performance.now() - started }),
        ),
      ),
    );
    for (const { timeoutMs, error, ms } of outcomes) {
      expect(error).toBeInstanceOf(TritonTimeoutError);
      expect((error as TritonTimeoutError).code).toBe('TIMEOUT');
      expect((error as TritonTimeoutError).message).toContain(`${timeoutMs}`);
      expect(ms).toBeGreaterThanOrEqual(timeoutMs - 1);
      // Generous on a shared machine, but well before the next deadline group would have fired it.
      expect(ms).toBeLessThan(timeoutMs + 1000);
    }
    // The shorter ones came back first (ties allowed: a stalled event loop may fire groups together).
    const settled = (timeoutMs: number): number[] =>
      outcomes.filter((o) => o.timeoutMs === timeoutMs).map((o) => o.ms);
    expect(Math.max(...settled(100))).toBeLessThanOrEqual(Math.min(...settled(200)));
    expect(Math.max(...settled(200))).toBeLessThanOrEqual(Math.min(...settled(300)));
    expect(waiting()).toEqual({ calls: 0, refed: false });
  });

  it('leaves no call waiting and no timer holding the process once calls settle', async () => {
    server = await startFaultServer(reply(200, '{"name":"x","version":"1","extensions":[]}'));
    client = new TritonClient({ url: server.url, timeoutMs: 45_000 });
    const calls = Array.from({ length: 20 }, () => client!.getServerMetadata());
    expect(deadlineTimers().find((t) => t.timeoutMs === 45_000)).toMatchObject({
      calls: 20,
      armed: true,
      refed: true,
    });
    await Promise.all(calls);
    expect(deadlineTimers().find((t) => t.timeoutMs === 45_000)).toMatchObject({ calls: 0, refed: false });
    expect(waiting()).toEqual({ calls: 0, refed: false });
  });

  it('a call aborted by its caller leaves its queue, and later calls still time out', async () => {
    server = await startFaultServer(hang);
    client = new TritonClient({ url: server.url, maxRetries: 0, timeoutMs: 150 });
    const controller = new AbortController();
    const aborted = client.getServerMetadata({ signal: controller.signal, timeoutMs: 5000 });
    const later = client.getServerMetadata();
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(TritonAbortError);
    expect(deadlineTimers().find((t) => t.timeoutMs === 5000)).toMatchObject({ calls: 0, refed: false });
    await expect(later).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(waiting()).toEqual({ calls: 0, refed: false });
  });
});
