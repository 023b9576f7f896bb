/**
 * The protocol layer's BufferPool (shared by the server's request bodies and the gRPC client's
 * encoded requests, issue 11): sizes outside its bounds get buffers of their own, aligned as asked,
 * that it never takes back; pooled ones come back once and are reused. (The server's
 * `test/http/body-pool.test.ts` tests the same class as `BodyPool`, with its defaults.)
 */
import { describe, expect, it } from 'vitest';

import { BufferPool, pooledCapacityFor } from '../../src/buffer-pool.js';

const bounds = { minBytes: 1024, maxBytes: 1 << 20, maxIdleBytes: 4 << 20 };

describe('BufferPool', () => {
  it('sizes outside its bounds get buffers of their own, aligned as asked, never taken back', () => {
    const pool = new BufferPool(bounds);
    for (const size of [10, 1023, (1 << 20) + 1]) {
      for (const alignAt of [0, 3]) {
        const b = pool.take(size, alignAt);
        expect(b.byteLength).toBe(size);
        expect((b.byteOffset + alignAt) % 8).toBe(0);
        pool.give(b);
        expect(pool.idleBytes).toBe(0);
      }
    }
  });

  it('a pooled size comes back once and is reused for the next message of that size', () => {
    const pool = new BufferPool(bounds);
    const a = pool.take(5000);
    expect(a.buffer.byteLength).toBe(pooledCapacityFor(5001));
    pool.give(a);
    pool.give(a);
    expect(pool.idleBytes).toBe(a.buffer.byteLength);
    const b = pool.take(4900);
    expect(b.buffer).toBe(a.buffer);
    expect(b.byteLength).toBe(4900);
    expect(pool.idleBytes).toBe(0);
  });

  it('keeps no more idle bytes than its bound', () => {
    const pool = new BufferPool({ ...bounds, maxIdleBytes: pooledCapacityFor(300_001) });
    const taken = [pool.take(300_000), pool.take(300_000)];
    for (const b of taken) pool.give(b);
    expect(pool.idleBytes).toBe(pooledCapacityFor(300_001));
  });

  it('refuses bad bounds and bad sizes with a RangeError naming them', () => {
    expect(() => new BufferPool({ ...bounds, minBytes: -1 })).toThrow(
      /minBytes must be a non-negative integer/,
    );
    expect(() => new BufferPool({ ...bounds, maxIdleBytes: Number.NaN })).toThrow(/maxIdleBytes/);
    expect(() => new BufferPool({ ...bounds, minBytes: 10, maxBytes: 5 })).toThrow(
      /must not exceed maxBytes/,
    );
    const pool = new BufferPool(bounds);
    for (const [size, alignAt] of [
      [-1, 0],
      [1.5, 0],
      [Number.NaN, 0],
      [100, -2],
    ] as const) {
      expect(() => pool.take(size, alignAt)).toThrow(RangeError);
    }
    expect(pool.take(0).byteLength).toBe(0);
  });
});
