/**
 * `--shared-memory system`: the run's inputs are written once into POSIX shared-memory objects
 * (`/dev/shm/<key>` on Linux), one region (and object: Triton refuses one key under two region
 * names) per input of each data entry, as perf_analyzer lays them out; each output gets a region of
 * `--output-shared-memory-size` bytes. Requests then name the regions instead of carrying the
 * tensors. Released (unregistered, unlinked) when the run stops.
 * @packageDocumentation
 */
import { readdirSync, unlinkSync } from 'node:fs';
import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { InferInput, InferRequestedOutput, TritonClient } from '@tritonserver-ts/client';
import { tensorDataToBytes, toTensorData } from '@tritonserver-ts/protocol';

import { PerfError } from '../errors.js';
import type { InputDataset, ModelProfile } from '../types.js';

/** Where POSIX shared-memory objects live on Linux. */
export const SHM_DIR = '/dev/shm';

/** Deadline of each register / unregister call. */
const CALL_TIMEOUT_MS = 10_000;

let serial = 0;

/** The prefix of this process's region names (and shared-memory objects). */
const OWN_PREFIX = `perf_analyzer_ts_${process.pid}_`;

/**
 * Removes this process's shared-memory objects now, synchronously: for a CLI exiting at once
 * (a second Ctrl+C) before its runs could release their regions. Registrations stay on the server.
 */
export function unlinkOwnSharedMemorySync(shmDir = SHM_DIR): void {
  let names: string[];
  try {
    names = readdirSync(shmDir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(OWN_PREFIX)) continue;
    try {
      unlinkSync(join(shmDir, name));
    } catch {
      // Gone already.
    }
  }
}

/** The registered regions of a run. */
export interface SystemSharedMemory {
  /** The inputs of `dataset.streams[s][t]`, reading from their regions. */
  readonly inputs: readonly (readonly (readonly InferInput[])[])[];
  /** The outputs to request, each written to its own region. */
  readonly outputs: readonly InferRequestedOutput[];
  /** The region names registered. */
  readonly regions: readonly string[];
  /** The shared-memory keys (`/name`; the file is `/dev/shm/name`), one per region. */
  readonly keys: readonly string[];
  /** Unregisters every region and removes the file (best effort, bounded). Idempotent. */
  release(): Promise<void>;
}

/** A region name from a tensor name (shared-memory names are plain identifiers). */
function regionName(prefix: string, tensor: string, ...indices: number[]): string {
  return [prefix, tensor.replace(/[^A-Za-z0-9_.-]/g, '_'), ...indices].join('_');
}

/**
 * Writes the dataset's inputs into one shared-memory object and registers the regions.
 * @throws PerfError `SHARED_MEMORY` when the object cannot be written or a region not registered
 *   (whatever was set up is released first).
 */
export async function createSystemSharedMemory(
  client: TritonClient,
  model: ModelProfile,
  dataset: InputDataset,
  outputByteSize: number,
  shmDir = SHM_DIR,
): Promise<SystemSharedMemory> {
  const prefix = `${OWN_PREFIX}${++serial}`;
  // One object per region: the input's bytes, or an output's empty space.
  const pieces: { region: string; bytes: Uint8Array | undefined; size: number }[] = [];
  const inputs = dataset.streams.map((steps, s) =>
    steps.map((request, t) =>
      request.inputs.map((input): InferInput => {
        if (input.data === undefined) return input;
        const bytes = tensorDataToBytes(input.datatype, toTensorData(input.datatype, input.data));
        const region = regionName(prefix, input.name, s, t);
        pieces.push({ region, bytes, size: bytes.byteLength });
        const { data: _data, binaryData: _binary, ...rest } = input;
        return { ...rest, sharedMemory: { region, byteSize: bytes.byteLength } };
      }),
    ),
  );
  const outputs = model.outputs.map((output): InferRequestedOutput => {
    const region = regionName(prefix, output.name);
    pieces.push({ region, bytes: undefined, size: outputByteSize });
    return { name: output.name, sharedMemory: { region, byteSize: outputByteSize } };
  });

  const written: string[] = [];
  const registered: string[] = [];
  let released: Promise<void> | undefined;
  const release = (): Promise<void> => {
    released ??= (async () => {
      // The files first: they go even when the server no longer answers.
      await Promise.all(written.map((file) => unlink(file).catch(() => undefined)));
      for (const region of registered) {
        try {
          await client.unregisterSystemSharedMemory(region, { timeoutMs: CALL_TIMEOUT_MS });
        } catch {
          // The server may be gone.
        }
      }
    })();
    return released;
  };

  try {
    for (const piece of pieces) {
      const file = join(shmDir, piece.region);
      // A zero-byte tensor still needs a region: one byte.
      const content =
        piece.bytes !== undefined && piece.bytes.byteLength > 0
          ? piece.bytes
          : Buffer.alloc(Math.max(piece.size, 1));
      await writeFile(file, content, { mode: 0o600, flag: 'wx' });
      written.push(file);
    }
  } catch (error) {
    await release();
    throw new PerfError(
      'SHARED_MEMORY',
      `cannot create a shared-memory object in ${shmDir}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  try {
    for (const piece of pieces) {
      await client.registerSystemSharedMemory(piece.region, `/${piece.region}`, Math.max(piece.size, 1), 0, {
        timeoutMs: CALL_TIMEOUT_MS,
      });
      registered.push(piece.region);
    }
  } catch (error) {
    await release();
    const message = error instanceof Error ? error.message : String(error);
    throw new PerfError('SHARED_MEMORY', `failed to register shared memory region: ${message}`, {
      cause: error,
    });
  }
  const keys = pieces.map((piece) => `/${piece.region}`);
  return { inputs, outputs, regions: registered, keys, release };
}
