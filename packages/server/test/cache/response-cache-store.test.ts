/**
 * The response cache's store and its place in front of a scheduler, without a server: LRU eviction
 * by size, an entry larger than the cache refused with Triton's message, bounded memory for many
 * distinct keys, concurrent identical requests (both run, one miss), failures not cached, streaming
 * requests and decoupled / sequence configs bypassing it, and the CLI and config errors.
 */
import type { PackedTensor } from '@tritonserver-ts/protocol';
import { describe, expect, it } from 'vitest';

import { parseArgs } from '../../src/cli-args.js';
import { createResponseCache } from '../../src/core/response-cache-config.js';
import { createModelConfig } from '../../src/repository/model-config-io.js';
import { CachedScheduler, usesResponseCache } from '../../src/scheduler/cached-scheduler.js';
import { responseCacheKey } from '../../src/scheduler/cache-key.js';
import {
  ENTRY_OVERHEAD_BYTES,
  ResponseCache,
  packedResponseBytes,
} from '../../src/scheduler/response-cache.js';
import type { Scheduler, SchedulerRequest, SchedulerResponse } from '../../src/scheduler/types.js';
import { ModelStatistics } from '../../src/statistics/model-statistics.js';

function tensor(name: string, n: number, fill = 1): PackedTensor {
  return { name, datatype: 'FP32', shape: [n], data: new Float32Array(n).fill(fill) };
}
function response(n: number, fill = 1): SchedulerResponse {
  return { outputs: new Map([['OUT', tensor('OUT', n, fill)]]) };
}
function request(value: number): SchedulerRequest {
  return {
    inputs: new Map([['IN', tensor('IN', 4, value)]]),
    batchSize: 1,
    priority: 0,
    receivedAt: process.hrtime.bigint(),
  };
}

describe('ResponseCache', () => {
  it('charges Triton packed size plus key and bookkeeping, and evicts the least recently used first', () => {
    const entry = packedResponseBytes(response(16));
    // 4 (count) + 8 + (4 + 3 'OUT') + (4 + 4 'FP32') + (4 + 8 shape) + (8 + 64 data)
    expect(entry).toBe(4 + 8 + 7 + 8 + 12 + 72);
    const one = entry + ENTRY_OVERHEAD_BYTES + 1;
    const cache = new ResponseCache({ sizeBytes: 3 * one });
    for (const k of ['a', 'b', 'c']) expect(cache.insert(k, response(16)).kind).toBe('inserted');
    expect(cache.lookup('a')).toBeDefined(); // a is now the most recently used
    expect(cache.insert('d', response(16))).toEqual({ kind: 'inserted', evicted: 1 });
    expect(cache.lookup('b')).toBeUndefined();
    expect(cache.lookup('a')).toBeDefined();
    expect(cache.counters()).toMatchObject({ entries: 3, evictions: 1, usedBytes: 3 * one });
  });

  it('refuses an entry larger than the whole cache with Triton message, and keeps existing keys', () => {
    const cache = new ResponseCache({ sizeBytes: 100 });
    expect(cache.insert('k', response(64))).toEqual({
      kind: 'too-large',
      message: `Requested byte_size: ${packedResponseBytes(response(64))} is greater than total cache size: 100`,
    });
    const big = new ResponseCache({ sizeBytes: 10_000 });
    big.insert('k', response(4, 1));
    expect(big.insert('k', response(4, 2))).toEqual({ kind: 'exists' });
    expect(Array.from(big.lookup('k')?.outputs.get('OUT')?.data as Float32Array)).toEqual([1, 1, 1, 1]);
  });

  it('owns copies: a backend reusing its output buffer does not change the cached response', () => {
    const cache = new ResponseCache({ sizeBytes: 10_000 });
    const r = response(4, 7);
    cache.insert('k', r);
    (r.outputs.get('OUT')?.data as Float32Array).fill(0);
    expect(Array.from(cache.lookup('k')?.outputs.get('OUT')?.data as Float32Array)).toEqual([7, 7, 7, 7]);
  });

  it('stays within its size for many distinct keys', () => {
    const cache = new ResponseCache({ sizeBytes: 64 * 1024 });
    for (let i = 0; i < 20_000; i++)
      cache.insert(responseCacheKey('m', '1', request(i).inputs, undefined), response(1));
    const c = cache.counters();
    expect(c.usedBytes).toBeLessThanOrEqual(64 * 1024);
    expect(c.entries).toBeLessThan(400);
    expect(c.evictions).toBe(20_000 - c.entries);
  });
});

describe('responseCacheKey', () => {
  it('differs by datatype, shape, bytes, input name, model, version and requested outputs', () => {
    const data = new Uint8Array(16);
    const key = (
      over: Partial<PackedTensor> = {},
      model = 'm',
      version = '1',
      outputs: string[] | undefined = undefined,
    ): string =>
      responseCacheKey(
        model,
        version,
        new Map([['IN', { name: 'IN', datatype: 'UINT8', shape: [16], data, ...over }]]),
        outputs,
      );
    const keys = [
      key(),
      key({ shape: [2, 8] }),
      key({ datatype: 'INT8', data: new Int8Array(16) }),
      key({ data: new Uint8Array(16).fill(1) }),
      key({}, 'n'),
      key({}, 'm', '2'),
      key({}, 'm', '1', ['A']),
      key({}, 'm', '1', []),
    ];
    expect(new Set(keys).size).toBe(keys.length);
    expect(key()).toBe(key());
    // Input order does not matter (sorted by name, as Triton).
    const a = { name: 'A', datatype: 'UINT8', shape: [1], data: new Uint8Array([1]) } as PackedTensor;
    const b = { name: 'B', datatype: 'UINT8', shape: [1], data: new Uint8Array([2]) } as PackedTensor;
    expect(
      responseCacheKey(
        'm',
        '1',
        new Map([
          ['A', a],
          ['B', b],
        ]),
        ['X', 'Y'],
      ),
    ).toBe(
      responseCacheKey(
        'm',
        '1',
        new Map([
          ['B', b],
          ['A', a],
        ]),
        ['Y', 'X'],
      ),
    );
  });
});

/** A scheduler whose executions the test releases. */
class HeldScheduler implements Scheduler {
  readonly held: {
    request: SchedulerRequest;
    resolve: (r: SchedulerResponse) => void;
    reject: (e: Error) => void;
  }[] = [];
  pendingCount = 0;
  enqueue(request: SchedulerRequest): Promise<SchedulerResponse> {
    return new Promise((resolve, reject) => this.held.push({ request, resolve, reject }));
  }
  drain(): Promise<void> {
    return Promise.resolve();
  }
}

describe('CachedScheduler', () => {
  it('runs concurrent identical requests both, counting one miss (the second insert finds the key)', async () => {
    const inner = new HeldScheduler();
    const statistics = new ModelStatistics('m', '1');
    const cached = new CachedScheduler(inner, {
      modelName: 'm',
      modelVersion: '1',
      cache: new ResponseCache({ sizeBytes: 1 << 20 }),
      statistics,
    });
    const first = cached.enqueue(request(1));
    const second = cached.enqueue(request(1));
    expect(inner.held).toHaveLength(2);
    for (const h of inner.held) h.resolve(response(4));
    await Promise.all([first, second]);
    await cached.enqueue(request(1));
    expect(inner.held).toHaveLength(2);
    const s = statistics.snapshot();
    expect([s.inference_stats.cache_miss.count, s.inference_stats.cache_hit.count]).toEqual([1n, 1n]);
    expect(s.responseCache).toBe(true);
  });

  it('does not cache a failure, and hands streaming requests straight on', async () => {
    const inner = new HeldScheduler();
    const statistics = new ModelStatistics('m', '1');
    const cache = new ResponseCache({ sizeBytes: 1 << 20 });
    const cached = new CachedScheduler(inner, { modelName: 'm', modelVersion: '1', cache, statistics });
    const failing = cached.enqueue(request(2));
    inner.held[0]?.reject(new Error('backend failed'));
    await expect(failing).rejects.toThrow('backend failed');
    expect(cache.counters().entries).toBe(0);
    const streaming = cached.enqueue({ ...request(3), onResponse: () => undefined });
    inner.held[1]?.resolve({ outputs: new Map() });
    await streaming;
    expect(cache.counters()).toMatchObject({ entries: 0, lookups: 1 });
    expect(statistics.snapshot().inference_stats.cache_miss.count).toBe(0n);
  });

  it('reports an entry too large for the cache as Triton logs it', async () => {
    const inner = new HeldScheduler();
    const errors: string[] = [];
    const cached = new CachedScheduler(inner, {
      modelName: 'm',
      modelVersion: '1',
      cache: new ResponseCache({ sizeBytes: 64 }),
      onInsertError: (m) => errors.push(m),
    });
    const p = cached.enqueue(request(4));
    inner.held[0]?.resolve(response(64));
    await p;
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /^Failed to insert key \[[0-9a-f]{64}\] into response cache: Requested byte_size: \d+ is greater than total cache size: 64$/,
    );
  });

  it('is used only by models that enable it and are neither decoupled nor sequence models', () => {
    const config = (extra: object) => createModelConfig({ name: 'm', backend: 'identity', ...extra });
    expect(usesResponseCache(config({ response_cache: { enable: true } }))).toBe(true);
    expect(usesResponseCache(config({}))).toBe(false);
    expect(usesResponseCache(config({ response_cache: { enable: true }, sequence_batching: {} }))).toBe(
      false,
    );
    expect(
      usesResponseCache(
        config({ response_cache: { enable: true }, model_transaction_policy: { decoupled: true } }),
      ),
    ).toBe(false);
  });
});

describe('configuration', () => {
  const args = (...extra: string[]) => parseArgs(['--model-repository=/m', ...extra]);

  it('reads --cache-config and the deprecated --response-cache-byte-size as Triton does', () => {
    expect(args('--cache-config=local,size=1048576').server.responseCache).toEqual({
      name: 'local',
      settings: { size: '1048576' },
    });
    const old = args('--response-cache-byte-size=8192');
    expect(old.server.responseCache).toEqual({ name: 'local', settings: { size: '8192' } });
    expect(old.warnings).toContain(
      "Warning: '--response-cache-byte-size' has been deprecated! This will default to the 'local' cache implementation with the provided byte size for its config. Please use '--cache-config' instead. The equivalent --cache-config CLI args would be: '--cache-config=local,size=8192'",
    );
    expect(args().server.responseCache).toBeUndefined();
  });

  it("refuses malformed values with Triton's messages", () => {
    expect(() => args('--response-cache-byte-size=1', '--cache-config=local,size=2')).toThrow(
      'Error: Incompatible flags --response-cache-byte-size and --cache-config both provided. Please provide one or the other.',
    );
    expect(() => args('--cache-config=size=2')).toThrow(
      'No cache specified. --cache-config option format is <cache name>,<setting>=<value>. Got size=2',
    );
    expect(() => args('--cache-config=local,size')).toThrow(
      "--cache-config option format is '<cache name>,<setting>=<value>'. Got local,size",
    );
    expect(() => args('--cache-config=local,size=1', '--cache-config=redis,host=h')).toThrow(
      'multiple cache configurations',
    );
  });

  it("creates only the local cache, with Triton's errors for the rest", () => {
    expect(createResponseCache({ name: 'local', settings: { size: '4096' } }).sizeBytes).toBe(4096);
    expect(() =>
      createResponseCache({ name: 'redis', settings: { host: 'h' }, directory: '/caches' }),
    ).toThrow("unable to find 'libtritoncache_redis.so' for cache. Searched: /caches");
    expect(() => createResponseCache({ name: 'local', settings: {} })).toThrow(
      "Failed to initialize LocalCache: config didn't contain a valid 'size' field.",
    );
    expect(() => createResponseCache({ name: 'local', settings: { size: 'abc' } })).toThrow(
      'Failed to initialize LocalCache: stoull',
    );
  });
});
