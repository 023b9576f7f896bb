/**
 * Triton's system shared-memory extension, for real: a region is a POSIX shared-memory object
 * (`/dev/shm/<key>`, the file `shm_open(key)` creates on Linux) opened when registered. Inputs are
 * read from and outputs written to `region offset + tensor offset` with positioned file I/O, so
 * clients such as `tritonclient.utils.shared_memory` work unchanged.
 *
 * CUDA shared memory needs a GPU; every CUDA register call fails the way a Triton build without GPU
 * support answers.
 * @packageDocumentation
 */
import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';

import { ServerError, invalidArg, notFound, unsupported } from './errors.js';
import type { SharedMemoryRef } from './types.js';

/** One registered region as `GET .../status` reports it. */
export interface SystemShmRegionStatus {
  readonly name: string;
  readonly key: string;
  readonly offset: number;
  readonly byte_size: number;
}

interface Region extends SystemShmRegionStatus {
  readonly fd: number;
}

/** Where POSIX shared-memory objects live. */
const SHM_DIR = '/dev/shm';

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

/** Registered system shared-memory regions. */
export class SystemSharedMemoryManager {
  readonly #regions = new Map<string, Region>();
  readonly #dir: string;
  readonly #allowClientShm: boolean;

  /**
   * @param dir - directory of the shared-memory objects (tests may point it elsewhere).
   * @param allowClientShm - `--allow-client-shm`; default false, as in Triton.
   */
  constructor(dir = SHM_DIR, allowClientShm = false) {
    this.#dir = dir;
    this.#allowClientShm = allowClientShm;
  }

  /** Whether clients may register and unregister regions (`--allow-client-shm`). */
  get clientShmAllowed(): boolean {
    return this.#allowClientShm;
  }

  /**
   * Registers `name` → `key` with Triton's checks and messages, in its order (the wire has already
   * read and type-checked the fields). The key is opened as `shm_open(key, O_RDWR)` does: one name
   * directly under the shared-memory directory, symbolic links not followed, and only a regular file
   * is accepted.
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
    if ([...this.#regions.values()].some((r) => r.key === key)) {
      throw invalidArg(
        `registering an active shared memory key, "${key}", under a different name is not currently supported`,
      );
    }
    const fd = this.#open(file, key);
    let fileSize: number;
    try {
      fileSize = fstatSync(fd).size;
    } catch (cause) {
      closeSync(fd);
      throw new ServerError('INTERNAL', `Unable to open shared memory region: '${key}'`, { cause });
    }
    if (offset + byteSize > BigInt(fileSize)) {
      closeSync(fd);
      throw invalidArg(`failed to register shared memory region '${name}': invalid args`);
    }
    this.#regions.set(name, { name, key, offset: Number(offset), byte_size: Number(byteSize), fd });
  }

  /**
   * `shm_open(key, O_RDWR)`: glibc refuses names with another `/` and the names `.` and `..`; the
   * object is opened without following links (`O_NOFOLLOW`) and must be a regular file.
   */
  #open(file: string, key: string): number {
    const refuse = (cause?: unknown): ServerError =>
      new ServerError('INTERNAL', `Unable to open shared memory region: '${key}'`, { cause });
    if (file.includes('/') || file.includes('\0') || file === '.' || file === '..') throw refuse();
    let fd: number;
    try {
      fd = openSync(join(this.#dir, file), constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (cause) {
      throw refuse(cause);
    }
    let regular: boolean;
    try {
      regular = fstatSync(fd).isFile();
    } catch {
      regular = false;
    }
    if (!regular) {
      closeSync(fd);
      throw refuse();
    }
    return fd;
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
    const names = name === undefined ? [...this.#regions.keys()] : [name];
    for (const n of names) {
      const region = this.#regions.get(n);
      if (region === undefined) continue;
      this.#regions.delete(n);
      closeSync(region.fd);
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

  /** Validates a reference without reading it. */
  check(ref: SharedMemoryRef): void {
    this.#locate(ref);
  }

  /** Reads `ref.byteSize` bytes of a region into a new buffer. */
  read(ref: SharedMemoryRef): Uint8Array {
    const { region, offset, byteSize } = this.#locate(ref);
    const out = new Uint8Array(byteSize);
    let done = 0;
    while (done < out.byteLength) {
      const n = readSync(region.fd, out, done, out.byteLength - done, region.offset + offset + done);
      if (n === 0) throw invalidArg(`shared memory region '${ref.region}' is shorter than registered`);
      done += n;
    }
    return out;
  }

  /** Writes `bytes` at `ref`; `bytes` must fit in `ref.byteSize`. */
  write(ref: SharedMemoryRef, bytes: Uint8Array, outputName: string): void {
    const { region, offset, byteSize } = this.#locate(ref);
    if (bytes.byteLength > byteSize) {
      throw invalidArg(
        `shared memory size specified with the request for output '${outputName}' (${byteSize} bytes) should be at least ${bytes.byteLength} bytes to hold the results`,
      );
    }
    let done = 0;
    while (done < bytes.byteLength) {
      done += writeSync(region.fd, bytes, done, bytes.byteLength - done, region.offset + offset + done);
    }
  }

  /** Closes every region (server shutdown). */
  close(): void {
    this.#close();
  }
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
