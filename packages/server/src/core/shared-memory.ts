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
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
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

function nonNegativeInt(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalidArg(`${what} must be a non-negative integer`);
  }
  return value;
}

/** Registered system shared-memory regions. */
export class SystemSharedMemoryManager {
  readonly #regions = new Map<string, Region>();
  readonly #dir: string;

  /** @param dir - directory of the shared-memory objects (tests may point it elsewhere). */
  constructor(dir = SHM_DIR) {
    this.#dir = dir;
  }

  /** Registers `name` → `key` (`POST .../region/{name}/register` body `{key, offset, byte_size}`). */
  register(name: string, body: unknown): void {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw invalidArg('Shared memory register request JSON must be an object');
    }
    const { key, offset = 0, byte_size: byteSize } = body as Record<string, unknown>;
    if (typeof key !== 'string' || key === '') {
      throw invalidArg("Shared memory register request JSON must have a string 'key'");
    }
    const off = nonNegativeInt(offset, "'offset'");
    const size = nonNegativeInt(byteSize, "'byte_size'");
    if (this.#regions.has(name)) {
      throw new ServerError('ALREADY_EXISTS', `shared memory region '${name}' already in manager`);
    }
    if ([...this.#regions.values()].some((r) => r.key === key)) {
      throw invalidArg(
        `registering an active shared memory key, "${key}", under a different name is not currently supported`,
      );
    }
    const file = key.replace(/^\/+/, '');
    if (file === '' || file.includes('/') || file === '.' || file === '..') {
      throw invalidArg(`Unable to open shared memory region: '${key}'`);
    }
    let fd: number;
    try {
      fd = openSync(join(this.#dir, file), 'r+');
    } catch (cause) {
      throw new ServerError('INTERNAL', `Unable to open shared memory region: '${key}'`, { cause });
    }
    const fileSize = fstatSync(fd).size;
    if (off + size > fileSize) {
      closeSync(fd);
      throw invalidArg(`failed to register shared memory region '${name}': invalid args`);
    }
    this.#regions.set(name, { name, key, offset: off, byte_size: size, fd });
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
    const names = name === undefined ? [...this.#regions.keys()] : [name];
    for (const n of names) {
      const region = this.#regions.get(n);
      if (region === undefined) continue;
      this.#regions.delete(n);
      closeSync(region.fd);
    }
  }

  #locate(ref: SharedMemoryRef): Region {
    const region = this.#regions.get(ref.region);
    if (region === undefined) throw notFound(`Unable to find shared memory region: '${ref.region}'`);
    if (ref.offset < 0 || ref.byteSize < 0 || ref.offset + ref.byteSize > region.byte_size) {
      throw invalidArg(`Invalid offset + byte size for shared memory region: '${ref.region}'`);
    }
    return region;
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
    const region = this.#locate(ref);
    const out = new Uint8Array(ref.byteSize);
    let done = 0;
    while (done < out.byteLength) {
      const n = readSync(region.fd, out, done, out.byteLength - done, region.offset + ref.offset + done);
      if (n === 0) throw invalidArg(`shared memory region '${ref.region}' is shorter than registered`);
      done += n;
    }
    return out;
  }

  /** Writes `bytes` at `ref`; `bytes` must fit in `ref.byteSize`. */
  write(ref: SharedMemoryRef, bytes: Uint8Array, outputName: string): void {
    const region = this.#locate(ref);
    if (bytes.byteLength > ref.byteSize) {
      throw invalidArg(
        `shared memory size specified with the request for output '${outputName}' (${ref.byteSize} bytes) should be at least ${bytes.byteLength} bytes to hold the results`,
      );
    }
    let done = 0;
    while (done < bytes.byteLength) {
      done += writeSync(region.fd, bytes, done, bytes.byteLength - done, region.offset + ref.offset + done);
    }
  }

  /** Closes every region (server shutdown). */
  close(): void {
    this.unregister();
  }
}

/** CUDA shared memory on a host without CUDA: status is empty, unregister is a no-op, register fails. */
export class CudaSharedMemoryManager {
  readonly #system: SystemSharedMemoryManager | undefined;

  /** @param system - the system regions (one namespace, as in Triton), for status messages. */
  constructor(system?: SystemSharedMemoryManager) {
    this.#system = system;
  }

  /** Always fails: no GPU / CUDA runtime is available to this server. */
  register(name: string, _body: unknown): never {
    throw unsupported(`failed to register CUDA shared memory region: '${name}', GPUs not supported`);
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

  /** Nothing to unregister. */
  unregister(_name?: string): void {}
}
