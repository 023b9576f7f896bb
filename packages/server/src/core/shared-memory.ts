/**
 * Triton's system shared-memory extension, for real: a region is a POSIX shared-memory object
 * (`/dev/shm/<key>`, the file `shm_open(key)` creates on Linux), checked when registered. Inputs are
 * read from and outputs written to `region offset + tensor offset` with positioned file I/O, so
 * clients such as `tritonclient.utils.shared_memory` work unchanged.
 *
 * No descriptor is kept per region (issue 23 item 5: one per region let registrations use up the
 * process's file limit): each read or write opens the object again (`O_NOFOLLOW`), checks that it is
 * still the file registered (same device and inode, long enough) and closes it. Inputs are read off
 * the event loop in bounded chunks; the number of regions is capped (`--client-shm-max-regions`).
 *
 * Unregistering a region that in-flight requests refer to succeeds at once, as in Triton: the region
 * stays registered (and listed) until the last of those requests is answered, its outputs written,
 * then it goes away by itself; requests sent meanwhile may still use it. No request ever finds a
 * region gone between the time it was checked and the time its bytes are read or written.
 *
 * CUDA shared memory needs a GPU; every CUDA register call fails the way a Triton build without GPU
 * support answers.
 * @packageDocumentation
 */
import { closeSync, constants, fstatSync, openSync, readSync, writeSync, type BigIntStats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

import { ServerError, invalidArg, notFound, unsupported } from '../common/errors.js';
import type { SharedMemoryRef } from '../common/types.js';

/** One registered region as `GET .../status` reports it. */
export interface SystemShmRegionStatus {
  readonly name: string;
  readonly key: string;
  readonly offset: number;
  readonly byte_size: number;
}

interface Region extends SystemShmRegionStatus {
  /** The object's file name under the shared-memory directory. */
  readonly file: string;
  /** Device and inode of the object registered: a file put in its place is not used. */
  readonly dev: bigint;
  readonly ino: bigint;
  /** In-flight requests that refer to the region ({@link SystemSharedMemoryManager.hold}). */
  users: number;
  /** Unregistered while in use: removed once its last user is done. */
  unregistering: boolean;
}

/** Where POSIX shared-memory objects live. */
const SHM_DIR = '/dev/shm';

/** Default of `--client-shm-max-regions` (this project's): registered system regions. */
export const DEFAULT_MAX_SHM_REGIONS = 1024;

/** Bytes one read call takes from a region: the event loop runs between two of them. */
export const SHM_READ_CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * Reads up to this size are done inline (a memory copy of at most 1 MiB, like decoding a small body
 * inline): four thread-pool round trips would cost a small request more than the copy itself.
 */
export const SHM_INLINE_READ_BYTES = 1024 * 1024;

/** Flags every open of an object uses: no symbolic link is followed, a FIFO never blocks the open. */
const OPEN_FLAGS = constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Keys Triton keeps for its Python backend's own regions. */
const RESERVED_KEY_PREFIX = 'triton_python_backend_shm_region_';

const UINT64_MAX = 0xffff_ffff_ffff_ffffn;

/** Triton's refusal while client shared memory is disabled. */
export const CLIENT_SHM_DISABLED =
  "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable.";

/**
 * `SystemSharedMemoryRegister`: map region `name` to the shared-memory object `key`, the window
 * `[offset, offset + byteSize)` of it (uint64 values, exact). Each wire builds it from its request
 * (HTTP: `http/shared-memory-json.ts`; gRPC: the message's fields).
 */
export interface RegisterSystemSharedMemory {
  readonly name: string;
  readonly key: string;
  readonly offset: bigint;
  readonly byteSize: bigint;
}

/**
 * `CudaSharedMemoryRegister`. The fields are those of the request as far as the wire could read them;
 * none is used here, since every CUDA registration fails (no GPU).
 */
export interface RegisterCudaSharedMemory {
  readonly name: string;
  /** The serialized `cudaIpcMemHandle_t`. */
  readonly rawHandle?: Uint8Array;
  readonly deviceId?: bigint;
  readonly byteSize?: bigint;
}

/**
 * A registration refused because `--client-shm-max-regions` regions are registered already
 * (INVALID_ARG, like Triton's other refused registrations: HTTP 400, gRPC INVALID_ARGUMENT).
 */
export class TooManyShmRegionsError extends ServerError {
  constructor(name: string, max: number) {
    super(
      'INVALID_ARG',
      `failed to register shared memory region '${name}': ${max} regions are registered, the most this server allows (--client-shm-max-regions)`,
    );
    this.name = 'TooManyShmRegionsError';
  }
}

/** Options of {@link SystemSharedMemoryManager}. */
export interface SystemSharedMemoryOptions {
  /** Directory of the shared-memory objects (default `/dev/shm`; tests may point it elsewhere). */
  readonly dir?: string;
  /** `--allow-client-shm`; default false, as in Triton. */
  readonly allowClientShm?: boolean;
  /** `--client-shm-max-regions`: regions that may be registered at once; default {@link DEFAULT_MAX_SHM_REGIONS}. */
  readonly maxRegions?: number;
}

/** Registered system shared-memory regions. */
export class SystemSharedMemoryManager {
  readonly #regions = new Map<string, Region>();
  /** Keys of the registered regions (a key may be registered under one name only). */
  readonly #keys = new Set<string>();
  readonly #dir: string;
  readonly #allowClientShm: boolean;
  readonly #maxRegions: number;

  constructor(options: SystemSharedMemoryOptions = {}) {
    this.#dir = options.dir ?? SHM_DIR;
    this.#allowClientShm = options.allowClientShm ?? false;
    this.#maxRegions = options.maxRegions ?? DEFAULT_MAX_SHM_REGIONS;
  }

  /** `--client-shm-max-regions`. */
  get maxRegions(): number {
    return this.#maxRegions;
  }

  /** Whether clients may register and unregister regions (`--allow-client-shm`). */
  get clientShmAllowed(): boolean {
    return this.#allowClientShm;
  }

  /**
   * Registers `name` → `key` with Triton's checks and messages, in its order (the wire has already
   * read and type-checked the fields), then this server's cap on regions. The key is opened as
   * `shm_open(key, O_RDWR)` does: one name directly under the shared-memory directory, symbolic links
   * not followed, and only a regular file is accepted; it is closed again once checked.
   * @throws TooManyShmRegionsError when `--client-shm-max-regions` regions are registered
   */
  register(command: RegisterSystemSharedMemory): void {
    this.assertClientShmAllowed();
    const { name, key, offset, byteSize } = command;
    const file = key.replace(/^\/+/, '');
    if (file === '') {
      throw invalidArg(`cannot register shared memory region '${name}' - invalid shm key '${key}'`);
    }
    if (file.startsWith(RESERVED_KEY_PREFIX)) {
      throw invalidArg(
        `cannot register shared memory region '${name}' with key '${key}' as the key contains the reserved prefix '${RESERVED_KEY_PREFIX}'`,
      );
    }
    if (this.#regions.has(name)) {
      throw new ServerError('ALREADY_EXISTS', `shared memory region '${name}' already in manager`);
    }
    if (this.#keys.has(key)) {
      throw invalidArg(
        `registering an active shared memory key, "${key}", under a different name is not currently supported`,
      );
    }
    if (this.#regions.size >= this.#maxRegions) throw new TooManyShmRegionsError(name, this.#maxRegions);
    const fd = this.#openSync(file, key, constants.O_RDWR);
    let stats: BigIntStats;
    try {
      stats = fstatSync(fd, { bigint: true });
    } catch (cause) {
      throw openFailure(key, cause);
    } finally {
      closeSync(fd);
    }
    if (!stats.isFile()) throw openFailure(key);
    if (offset + byteSize > stats.size) {
      throw invalidArg(`failed to register shared memory region '${name}': invalid args`);
    }
    this.#regions.set(name, {
      name,
      key,
      offset: Number(offset),
      byte_size: Number(byteSize),
      file,
      dev: stats.dev,
      ino: stats.ino,
      users: 0,
      unregistering: false,
    });
    this.#keys.add(key);
  }

  /**
   * Holds the registered regions among `names` for one request (unknown names are skipped: the
   * request fails on them with Triton's message when they are resolved). While held, unregistering
   * one only marks it; it goes away when the last holder gives it back.
   * @returns gives the regions back (idempotent)
   */
  hold(names: Iterable<string>): () => void {
    const held: Region[] = [];
    for (const name of new Set(names)) {
      const region = this.#regions.get(name);
      if (region === undefined) continue;
      region.users += 1;
      held.push(region);
    }
    let released = held.length === 0;
    return () => {
      if (released) return;
      released = true;
      for (const region of held) {
        region.users -= 1;
        if (region.users === 0 && region.unregistering && this.#regions.get(region.name) === region) {
          this.#regions.delete(region.name);
          this.#keys.delete(region.key);
        }
      }
    };
  }

  /**
   * `shm_open(key, flags)`: glibc refuses names with another `/` and the names `.` and `..`; the
   * object is opened without following links (`O_NOFOLLOW`).
   */
  #openSync(file: string, key: string, flags: number): number {
    if (file.includes('/') || file.includes('\0') || file === '.' || file === '..') throw openFailure(key);
    try {
      return openSync(join(this.#dir, file), flags | OPEN_FLAGS);
    } catch (cause) {
      throw openFailure(key, cause);
    }
  }

  /**
   * Checks that an object opened again for a use is the one registered (same device and inode: not a
   * file put in its place since) and still holds `end` bytes.
   */
  #checkSame(region: Region, stats: BigIntStats, end: number): void {
    if (stats.dev !== region.dev || stats.ino !== region.ino) {
      throw invalidArg(
        `shared memory region '${region.name}' no longer refers to the object registered with key '${region.key}'; register it again`,
      );
    }
    if (stats.size < BigInt(end)) {
      throw invalidArg(`shared memory region '${region.name}' is shorter than registered`);
    }
  }

  /**
   * `--allow-client-shm=false` (Triton's default): client register and unregister are refused
   * (UNSUPPORTED). A front end may call it before reading a register request's fields.
   */
  assertClientShmAllowed(): void {
    if (!this.#allowClientShm) throw unsupported(CLIENT_SHM_DISABLED);
  }

  /** Status of one region (NOT_FOUND when unknown) or of all regions. */
  status(name?: string): SystemShmRegionStatus[] {
    const pick = ({ name: n, key, offset, byte_size }: Region): SystemShmRegionStatus => ({
      name: n,
      key,
      offset,
      byte_size,
    });
    if (name === undefined) return [...this.#regions.values()].map(pick);
    const region = this.#regions.get(name);
    if (region === undefined) throw notFound(`Unable to find system shared memory region: '${name}'`);
    return [pick(region)];
  }

  /** Unregisters one region (unknown names are ignored, as in Triton) or all of them. */
  unregister(name?: string): void {
    this.assertClientShmAllowed();
    this.#close(name);
  }

  #close(name?: string): void {
    const regions = name === undefined ? [...this.#regions.values()] : [this.#regions.get(name)];
    for (const region of regions) {
      if (region === undefined) continue;
      // In use: Triton's "will be unregistered after in-flight requests complete".
      if (region.users > 0) {
        region.unregistering = true;
        continue;
      }
      this.#regions.delete(region.name);
      this.#keys.delete(region.key);
    }
  }

  /**
   * Resolves a reference with Triton's checks and messages, in its order (`GetMemoryInfo`): unknown
   * region, offset past the region's last byte, `offset + byte_size` past 2^64 − 1, then past the
   * region's end (computed as Triton does in uint64: a 0-byte reference at offset 0 wraps and is
   * refused too). The bounds are those of the registered window.
   */
  #locate(ref: SharedMemoryRef): { region: Region; offset: number; byteSize: number } {
    const region = this.#regions.get(ref.region);
    if (region === undefined) throw notFound(`Unable to find shared memory region: '${ref.region}'`);
    const offset = BigInt(ref.offset ?? 0);
    const byteSize = BigInt(ref.byteSize);
    const end = region.byte_size > 0 ? BigInt(region.byte_size) - 1n : 0n;
    if (offset < 0n || offset > end) {
      throw invalidArg(`Invalid offset for shared memory region: '${ref.region}'`);
    }
    if (byteSize < 0n || byteSize > UINT64_MAX - offset) {
      throw invalidArg(
        `Integer overflow detected: byte_size (${byteSize}) + offset (${offset}) exceeds maximum value (${UINT64_MAX}) for region '${ref.region}'`,
      );
    }
    if (BigInt.asUintN(64, offset + byteSize - 1n) > end) {
      throw invalidArg(`Invalid offset + byte size for shared memory region: '${ref.region}'`);
    }
    return { region, offset: Number(offset), byteSize: Number(byteSize) };
  }

  /** Whether a region named `name` is registered. */
  has(name: string): boolean {
    return this.#regions.has(name);
  }

  /**
   * Validates a reference without reading it.
   * @returns the byte size it names
   */
  check(ref: SharedMemoryRef): number {
    return this.#locate(ref).byteSize;
  }

  /**
   * Reads `ref.byteSize` bytes of a region into a new buffer, off the event loop: the object is
   * opened again, checked ({@link SystemSharedMemoryManager} header) and read in chunks of
   * {@link SHM_READ_CHUNK_BYTES} on libuv's thread pool, then closed (up to
   * {@link SHM_INLINE_READ_BYTES}: the same, inline). The caller bounds the size
   * (`core/shared-memory-inputs.ts`).
   */
  async read(ref: SharedMemoryRef): Promise<Uint8Array> {
    const { region, offset, byteSize } = this.#locate(ref);
    const start = region.offset + offset;
    if (byteSize <= SHM_INLINE_READ_BYTES) return this.#readInline(region, ref.region, start, byteSize);
    let handle: FileHandle;
    try {
      handle = await open(join(this.#dir, region.file), constants.O_RDONLY | OPEN_FLAGS);
    } catch (cause) {
      throw openFailure(region.key, cause);
    }
    try {
      this.#checkSame(region, await handle.stat({ bigint: true }), start + byteSize);
      const out = new Uint8Array(byteSize);
      let done = 0;
      while (done < byteSize) {
        const want = Math.min(SHM_READ_CHUNK_BYTES, byteSize - done);
        const { bytesRead } = await handle.read(out, done, want, start + done);
        if (bytesRead === 0)
          throw invalidArg(`shared memory region '${ref.region}' is shorter than registered`);
        done += bytesRead;
      }
      return out;
    } finally {
      await handle.close();
    }
  }

  /** {@link SystemSharedMemoryManager.read} of a small range, with synchronous calls. */
  #readInline(region: Region, name: string, start: number, byteSize: number): Uint8Array {
    const fd = this.#openSync(region.file, region.key, constants.O_RDONLY);
    try {
      let stats: BigIntStats;
      try {
        stats = fstatSync(fd, { bigint: true });
      } catch (cause) {
        throw openFailure(region.key, cause);
      }
      this.#checkSame(region, stats, start + byteSize);
      const out = new Uint8Array(byteSize);
      let done = 0;
      while (done < byteSize) {
        const n = readSync(fd, out, done, byteSize - done, start + done);
        if (n === 0) throw invalidArg(`shared memory region '${name}' is shorter than registered`);
        done += n;
      }
      return out;
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Writes `bytes` at `ref` (a response's output: bytes the server already holds); `bytes` must fit
   * in `ref.byteSize`. The object is opened again and checked like {@link SystemSharedMemoryManager.read}.
   */
  write(ref: SharedMemoryRef, bytes: Uint8Array, outputName: string): void {
    const { region, offset, byteSize } = this.#locate(ref);
    if (bytes.byteLength > byteSize) {
      throw invalidArg(
        `shared memory size specified with the request for output '${outputName}' (${byteSize} bytes) should be at least ${bytes.byteLength} bytes to hold the results`,
      );
    }
    const start = region.offset + offset;
    const fd = this.#openSync(region.file, region.key, constants.O_WRONLY);
    try {
      let stats: BigIntStats;
      try {
        stats = fstatSync(fd, { bigint: true });
      } catch (cause) {
        throw openFailure(region.key, cause);
      }
      this.#checkSame(region, stats, start + bytes.byteLength);
      let done = 0;
      while (done < bytes.byteLength) {
        done += writeSync(fd, bytes, done, bytes.byteLength - done, start + done);
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Forgets every region, in use or not (server shutdown). */
  close(): void {
    this.#regions.clear();
    this.#keys.clear();
  }
}

/** Triton's answer when an object cannot be opened (INTERNAL: HTTP 500). */
function openFailure(key: string, cause?: unknown): ServerError {
  return new ServerError('INTERNAL', `Unable to open shared memory region: '${key}'`, { cause });
}

/** CUDA shared memory on a host without CUDA: status is empty, unregister is a no-op, register fails. */
export class CudaSharedMemoryManager {
  readonly #system: SystemSharedMemoryManager | undefined;

  /** @param system - the system regions (one namespace, as in Triton), for status messages. */
  constructor(system?: SystemSharedMemoryManager) {
    this.#system = system;
  }

  /** `--allow-client-shm=false` (Triton's default): client register and unregister are refused. */
  assertClientShmAllowed(): void {
    if (this.#system?.clientShmAllowed !== true) throw unsupported(CLIENT_SHM_DISABLED);
  }

  /** Always fails: client shared memory disabled, or no GPU / CUDA runtime available to this server. */
  register(command: RegisterCudaSharedMemory): never {
    this.assertClientShmAllowed();
    throw unsupported(`failed to register CUDA shared memory region: '${command.name}', GPUs not supported`);
  }

  /** No region can exist: empty list for all, NOT_FOUND (Triton's texts) for a named region. */
  status(name?: string): never[] {
    if (name === undefined) return [];
    if (this.#system?.has(name) === true) {
      throw notFound(
        `The region named '${name}' is registered as system shared memory, not CUDA shared memory`,
      );
    }
    throw notFound(`Unable to find system shared memory region: '${name}'`);
  }

  /** Nothing to unregister (refused, like register, while client shared memory is disabled). */
  unregister(_name?: string): void {
    this.assertClientShmAllowed();
  }
}
