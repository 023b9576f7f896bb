/**
 * A pool of input regions in system shared memory: up to `slots` POSIX shared-memory objects
 * (`<dir>/<name>`, the file `shm_open("/<name>")` opens on Linux) of one byte size, each created
 * and registered with the inference server the first time it is needed, then leased to one request
 * at a time and reused. Node cannot map memory, so a tensor is written with positioned file I/O;
 * the server reads it from the region instead of the request body.
 *
 * No `server-only` or configuration here: the gateway's policy (`shared-memory.ts`) decides when a
 * pool is used, and tests may drive one directly.
 * @packageDocumentation
 */
import { closeSync, constants, openSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { TritonClient } from '@tritonserver-ts/client';

/** Where POSIX shared-memory objects live on Linux. */
export const SHM_DIR = '/dev/shm';

/** The registration calls a pool needs (a `TritonClient` over HTTP or gRPC has them). */
export type ShmRegistrar = Pick<
  TritonClient,
  'registerSystemSharedMemory' | 'unregisterSystemSharedMemory' | 'getSystemSharedMemoryStatus'
>;

/** Why a pool could not give a region: stable codes. */
export type ShmPoolErrorCode = 'SHM_CREATE_FAILED' | 'SHM_REGISTER_FAILED' | 'SHM_CLOSED';

/** A region could not be created (the object) or registered (the server refused it). */
export class ShmPoolError extends Error {
  override readonly name = 'ShmPoolError';
  constructor(
    readonly code: ShmPoolErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** One leased region: write the tensor, name it in the request, release it after the response. */
export interface ShmSlot {
  /** The region name the server knows (also the object's file name). */
  readonly region: string;
  readonly byteSize: number;
  /** Writes `bytes` at the start of the region (at most its byte size). */
  write(bytes: Uint8Array): void;
  /** Gives the region back to the pool; idempotent. */
  release(): void;
}

/** How a pool is made. */
export interface ShmPoolOptions {
  /** Registers, unregisters and lists regions on the inference server. */
  readonly client: ShmRegistrar;
  /** Bytes of every region (the input tensor's size). */
  readonly byteSize: number;
  /** At most this many regions; a lease finding them all busy answers `undefined`. */
  readonly slots: number;
  /** Region names are `<prefix>_<byteSize>_<index>`; must be unique to this pool. */
  readonly prefix: string;
  /** Directory of the shared-memory objects (default {@link SHM_DIR}). */
  readonly dir?: string;
  /** Deadline of each register / unregister / status call (default 5 s). */
  readonly timeoutMs?: number;
}

interface Region {
  readonly name: string;
  readonly file: string;
  /** -1 once closed (never closed twice: the number may belong to another file by then). */
  fd: number;
  leased: boolean;
}

/** Input regions of one byte size, registered once and reused. */
export class ShmPool {
  readonly byteSize: number;
  readonly #client: ShmRegistrar;
  readonly #slots: number;
  readonly #prefix: string;
  readonly #dir: string;
  readonly #timeoutMs: number;
  readonly #regions: Region[] = [];
  /** Regions being created: counted against `slots`. */
  #creating = 0;
  /** Index of the next region's name (never reused within a pool). */
  #next = 0;
  #recovering: Promise<void> | undefined;
  #closed: Promise<void> | undefined;

  constructor(options: ShmPoolOptions) {
    if (!Number.isInteger(options.byteSize) || options.byteSize < 1) {
      throw new RangeError(`byteSize must be a positive integer, got ${options.byteSize}`);
    }
    this.byteSize = options.byteSize;
    this.#client = options.client;
    this.#slots = Math.max(1, Math.floor(options.slots));
    this.#prefix = options.prefix;
    this.#dir = options.dir ?? SHM_DIR;
    this.#timeoutMs = options.timeoutMs ?? 5000;
  }

  /** The names of the regions created (and registered) so far. */
  get regions(): string[] {
    return this.#regions.map((r) => r.name);
  }

  /** The object files created so far. */
  get files(): string[] {
    return this.#regions.map((r) => r.file);
  }

  /**
   * A free region, created and registered first if none is free and fewer than `slots` exist;
   * `undefined` when every region is leased.
   * @throws ShmPoolError `SHM_CREATE_FAILED` (the object could not be made),
   *   `SHM_REGISTER_FAILED` (the server refused it; `cause` is the client's error), `SHM_CLOSED`.
   */
  async lease(): Promise<ShmSlot | undefined> {
    if (this.#closed) throw new ShmPoolError('SHM_CLOSED', 'The shared-memory pool is closed.');
    const free = this.#regions.find((r) => !r.leased);
    if (free) return this.#slot(free);
    if (this.#regions.length + this.#creating >= this.#slots) return undefined;
    this.#creating++;
    let region: Region;
    try {
      region = await this.#create(this.#next++);
    } finally {
      this.#creating--;
    }
    if (this.#closed) {
      await this.#destroy(region);
      throw new ShmPoolError('SHM_CLOSED', 'The shared-memory pool is closed.');
    }
    this.#regions.push(region);
    return this.#slot(region);
  }

  #slot(region: Region): ShmSlot {
    region.leased = true;
    let released = false;
    return {
      region: region.name,
      byteSize: this.byteSize,
      write: (bytes) => {
        if (released || region.fd < 0) throw new Error('write to a released shared-memory slot');
        if (bytes.byteLength > this.byteSize) {
          throw new RangeError(`${bytes.byteLength} bytes do not fit a ${this.byteSize}-byte region`);
        }
        let done = 0;
        while (done < bytes.byteLength) {
          done += writeSync(region.fd, bytes, done, bytes.byteLength - done, done);
        }
      },
      release: () => {
        if (released) return;
        released = true;
        region.leased = false;
      },
    };
  }

  /** A new object (zero-filled, so its pages exist) registered under its own name as key. */
  async #create(index: number): Promise<Region> {
    const name = `${this.#prefix}_${this.byteSize}_${index}`;
    const file = join(this.#dir, name);
    let fd: number;
    try {
      fd = openSync(file, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, 0o600);
    } catch (cause) {
      throw new ShmPoolError('SHM_CREATE_FAILED', `cannot create ${file}: ${String(cause)}`, { cause });
    }
    const region: Region = { name, file, fd, leased: false };
    try {
      const zeros = new Uint8Array(Math.min(this.byteSize, 1 << 20));
      for (let at = 0; at < this.byteSize;) {
        at += writeSync(fd, zeros, 0, Math.min(zeros.byteLength, this.byteSize - at), at);
      }
    } catch (cause) {
      this.#unlink(region);
      throw new ShmPoolError('SHM_CREATE_FAILED', `cannot fill ${file}: ${String(cause)}`, { cause });
    }
    try {
      await this.#register(region);
    } catch (cause) {
      this.#unlink(region);
      throw cause;
    }
    return region;
  }

  async #register(region: Region): Promise<void> {
    try {
      await this.#client.registerSystemSharedMemory(region.name, `/${region.name}`, this.byteSize, 0, {
        timeoutMs: this.#timeoutMs,
      });
    } catch (cause) {
      throw new ShmPoolError(
        'SHM_REGISTER_FAILED',
        `the inference server did not register shared-memory region '${region.name}': ${cause instanceof Error ? cause.message : String(cause)}`,
        { cause },
      );
    }
  }

  /**
   * Whether the server still knows `region` (false when it answers without it, e.g. after a
   * restart); throws when the server cannot be asked.
   */
  async registered(region: string): Promise<boolean> {
    const all = await this.#client.getSystemSharedMemoryStatus('', { timeoutMs: this.#timeoutMs });
    return all.some((r) => r.name === region);
  }

  /**
   * Registers again every region the server no longer knows (a restarted server forgets them).
   * Concurrent callers share one recovery.
   * @throws ShmPoolError `SHM_REGISTER_FAILED` when the regions cannot be listed or one cannot be
   *   registered (`cause`: the client's error).
   */
  recover(): Promise<void> {
    this.#recovering ??= (async () => {
      try {
        let known: Set<string>;
        try {
          const status = await this.#client.getSystemSharedMemoryStatus('', { timeoutMs: this.#timeoutMs });
          known = new Set(status.map((r) => r.name));
        } catch (cause) {
          throw new ShmPoolError(
            'SHM_REGISTER_FAILED',
            `cannot list the server's shared-memory regions: ${cause instanceof Error ? cause.message : String(cause)}`,
            { cause },
          );
        }
        for (const region of this.#regions) if (!known.has(region.name)) await this.#register(region);
      } finally {
        this.#recovering = undefined;
      }
    })();
    return this.#recovering;
  }

  /**
   * Unregisters every region (best effort, bounded) and removes the objects. Idempotent; leases
   * after it fail.
   */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      const regions = this.#regions.splice(0);
      for (const r of regions) this.#unlink(r);
      await Promise.all(regions.map((r) => this.#unregister(r.name)));
    })();
    return this.#closed;
  }

  /** Removes the objects now, synchronously (for `process.on('exit')`); the server keeps its view. */
  unlinkAllSync(): void {
    for (const r of this.#regions) this.#unlink(r);
  }

  async #destroy(region: Region): Promise<void> {
    this.#unlink(region);
    await this.#unregister(region.name);
  }

  async #unregister(name: string): Promise<void> {
    try {
      await this.#client.unregisterSystemSharedMemory(name, { timeoutMs: this.#timeoutMs, maxRetries: 0 });
    } catch {
      // The server may be gone or restarted; it forgets the region then.
    }
  }

  #unlink(region: Region): void {
    if (region.fd >= 0) {
      try {
        closeSync(region.fd);
      } catch {
        // Nothing to do.
      }
      region.fd = -1;
    }
    try {
      unlinkSync(region.file);
    } catch {
      // Already removed.
    }
  }
}
