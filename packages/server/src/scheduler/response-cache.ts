/**
 * The response cache (`--cache-config local,size=N`): one store of inference results shared by every
 * model of the server, bounded by a byte budget and evicting the least recently used entry first, as
 * Triton's `local` cache implementation does.
 *
 * An entry's size is what Triton's cache charges for it (a `uint32` output count, then per output a
 * `uint64` size, its name, datatype and shape with their `uint32` lengths, a `uint64` data size and the
 * data), plus what this server charges beyond Triton: the key and a fixed bookkeeping overhead per
 * entry, so that a flood of distinct tiny responses cannot hold more memory than the budget says.
 * Entries own copies of their tensors; a hit hands out the stored tensors, which nothing mutates.
 * @packageDocumentation
 */
import {
  BytesList,
  tensorDataToBytes,
  type PackedTensor,
  type PackedTensorData,
} from '@tritonserver-ts/protocol';

import type { ParameterValue } from '../common/types.js';

/** What a cached entry holds: a request's outputs (and its response parameters, if it had any). */
export interface CachedResponse {
  readonly outputs: ReadonlyMap<string, PackedTensor>;
  readonly parameters?: Readonly<Record<string, ParameterValue>>;
}

/** The outcome of {@link ResponseCache.insert}. */
export type CacheInsertResult =
  | { readonly kind: 'inserted'; readonly evicted: number }
  /** Another request with the same key inserted first (Triton's ALREADY_EXISTS: not a miss). */
  | { readonly kind: 'exists' }
  /** The entry alone is larger than the whole cache; `message` is Triton's. */
  | { readonly kind: 'too-large'; readonly message: string };

/** Counters of the whole cache (what Triton's `local` cache keeps for its own gauges). */
export interface ResponseCacheCounters {
  readonly entries: number;
  readonly usedBytes: number;
  readonly sizeBytes: number;
  readonly lookups: number;
  readonly hits: number;
  readonly misses: number;
  readonly evictions: number;
}

/** Bytes charged per entry beyond Triton's packed size (map slots, objects, the LRU position). */
export const ENTRY_OVERHEAD_BYTES = 128;

interface Entry {
  readonly response: CachedResponse;
  readonly bytes: number;
}

const UTF8 = new TextEncoder();

function dataBytes(tensor: PackedTensor): number {
  return tensorDataToBytes(tensor.datatype, tensor.data).byteLength;
}

/** Triton's packed size of one response (`CacheEntry::SetBufferSize`). */
export function packedResponseBytes(response: CachedResponse): number {
  let bytes = 4;
  for (const tensor of response.outputs.values()) {
    bytes += 8; // the output's packed size
    bytes += 4 + UTF8.encode(tensor.name).byteLength;
    bytes += 4 + tensor.datatype.length;
    bytes += 4 + 8 * tensor.shape.length;
    bytes += 8 + dataBytes(tensor);
  }
  if (response.parameters !== undefined) {
    bytes += UTF8.encode(
      JSON.stringify(response.parameters, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)),
    ).byteLength;
  }
  return bytes;
}

function copyData(data: PackedTensorData): PackedTensorData {
  if (BytesList.isBytesList(data)) return data.copy();
  return data.slice();
}

/** A copy the cache owns (the produced tensors may be views into buffers the backend reuses). */
function ownedCopy(response: CachedResponse): CachedResponse {
  const outputs = new Map<string, PackedTensor>();
  for (const [name, t] of response.outputs) {
    outputs.set(name, { name: t.name, datatype: t.datatype, shape: [...t.shape], data: copyData(t.data) });
  }
  return response.parameters !== undefined
    ? { outputs, parameters: { ...response.parameters } }
    : { outputs };
}

/** See the module documentation. */
export class ResponseCache {
  /** The byte budget (`size` of `--cache-config local,size=N`). */
  readonly sizeBytes: number;
  // A Map iterates in insertion order: re-inserting a key on use keeps the least recently used first.
  readonly #entries = new Map<string, Entry>();
  #used = 0;
  #lookups = 0;
  #hits = 0;
  #misses = 0;
  #evictions = 0;

  constructor(options: { readonly sizeBytes: number }) {
    if (!Number.isSafeInteger(options.sizeBytes) || options.sizeBytes < 0) {
      throw new RangeError(`response cache size must be a non-negative integer (got ${options.sizeBytes})`);
    }
    this.sizeBytes = options.sizeBytes;
  }

  /** The entry of `key`, made the most recently used; `undefined` on a miss. */
  lookup(key: string): CachedResponse | undefined {
    this.#lookups += 1;
    const entry = this.#entries.get(key);
    if (entry === undefined) {
      this.#misses += 1;
      return undefined;
    }
    this.#hits += 1;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.response;
  }

  /**
   * Stores a copy of `response` under `key`, evicting least recently used entries until it fits. An
   * existing key is left as it is; an entry larger than the whole cache is refused.
   */
  insert(key: string, response: CachedResponse): CacheInsertResult {
    const packed = packedResponseBytes(response);
    if (packed > this.sizeBytes) {
      return {
        kind: 'too-large',
        message: `Requested byte_size: ${packed} is greater than total cache size: ${this.sizeBytes}`,
      };
    }
    if (this.#entries.has(key)) return { kind: 'exists' };
    const bytes = packed + ENTRY_OVERHEAD_BYTES + key.length;
    let evicted = 0;
    while (this.#used + bytes > this.sizeBytes && this.#entries.size > 0) {
      const [oldest, entry] = this.#entries.entries().next().value as [string, Entry];
      this.#entries.delete(oldest);
      this.#used -= entry.bytes;
      evicted += 1;
    }
    this.#evictions += evicted;
    if (this.#used + bytes > this.sizeBytes) {
      // Only the bookkeeping this server adds does not fit in an empty cache.
      return {
        kind: 'too-large',
        message: `Requested byte_size: ${bytes} is greater than total cache size: ${this.sizeBytes}`,
      };
    }
    this.#entries.set(key, { response: ownedCopy(response), bytes });
    this.#used += bytes;
    return { kind: 'inserted', evicted };
  }

  /** Current counters. */
  counters(): ResponseCacheCounters {
    return {
      entries: this.#entries.size,
      usedBytes: this.#used,
      sizeBytes: this.sizeBytes,
      lookups: this.#lookups,
      hits: this.#hits,
      misses: this.#misses,
      evictions: this.#evictions,
    };
  }
}
