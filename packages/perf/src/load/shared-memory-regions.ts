/**
 * `--shared-memory system`: the run's inputs are written once into a POSIX shared-memory object
 * (`/dev/shm/<key>` on Linux) and registered with the server as one region per input of each data
 * entry; each output gets a region of `--output-shared-memory-size` bytes. Requests then name the
 * regions instead of carrying the tensors. Released (unregistered, unlinked) when the run stops.
 * @packageDocumentation
 */
import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { InferInput, InferRequestedOutput, TritonClient } from '@tritonserver-ts/client';
import { tensorDataToBytes, toTensorData } from '@tritonserver-ts/client/protocol';

import { PerfError } from '../errors.js';
import type { InputDataset, ModelProfile } from '../types.js';

/** Where POSIX shared-memory objects live on Linux. */
export const SHM_DIR = '/dev/shm';

/** Deadline of each register / unregister call. */
const CALL_TIMEOUT_MS = 10_000;

let serial = 0;

/** The registered regions of a run. */
export interface SystemSharedMemory {
  /** The inputs of `dataset.streams[s][t]`, reading from their regions. */
  readonly inputs: readonly (readonly (readonly InferInput[])[])[];
  /** The outputs to request, each written to its own region. */
  readonly outputs: readonly InferRequestedOutput[];
  /** The region names registered. */
  readonly regions: readonly string[];
  /** The shared-memory key (`/name`; the file is `/dev/shm/name`). */
  readonly key: string;
  /** Unregisters every region and removes the file (best effort, bounded). Idempotent. */
  release(): Promise<void>;
}

function align(n: number): number {
  return Math.ceil(n / 64) * 64;
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
  const name = `perf_analyzer_ts_${process.pid}_${++serial}`;
  const key = `/${name}`;
  const file = join(shmDir, name);
  // Layout: every input of every entry, then every output region, each 64-byte aligned.
  const pieces: { region: string; bytes: Uint8Array | undefined; offset: number; size: number }[] = [];
  let offset = 0;
  const inputs = dataset.streams.map((steps, s) =>
    steps.map((request, t) =>
      request.inputs.map((input): InferInput => {
        if (input.data === undefined) return input;
        const bytes = tensorDataToBytes(input.datatype, toTensorData(input.datatype, input.data));
        const region = regionName(name, input.name, s, t);
        pieces.push({ region, bytes, offset, size: bytes.byteLength });
        offset = align(offset + bytes.byteLength);
        const { data: _data, binaryData: _binary, ...rest } = input;
        return { ...rest, sharedMemory: { region, byteSize: bytes.byteLength } };
      }),
    ),
  );
  const outputs = model.outputs.map((output): InferRequestedOutput => {
    const region = regionName(name, output.name);
    pieces.push({ region, bytes: undefined, offset, size: outputByteSize });
    offset = align(offset + outputByteSize);
    return { name: output.name, sharedMemory: { region, byteSize: outputByteSize } };
  });

  const registered: string[] = [];
  let released: Promise<void> | undefined;
  const release = (): Promise<void> => {
    released ??= (async () => {
      for (const region of registered) {
        try {
          await client.unregisterSystemSharedMemory(region, { timeoutMs: CALL_TIMEOUT_MS });
        } catch {
          // The server may be gone; the file is removed below either way.
        }
      }
      await unlink(file).catch(() => undefined);
    })();
    return released;
  };

  try {
    const buffer = Buffer.alloc(Math.max(offset, 1));
    for (const piece of pieces) if (piece.bytes !== undefined) buffer.set(piece.bytes, piece.offset);
    await writeFile(file, buffer, { mode: 0o600 });
  } catch (error) {
    await release();
    throw new PerfError('SHARED_MEMORY', `cannot create the shared-memory object ${file}: ${String(error)}`, {
      cause: error,
    });
  }
  try {
    for (const piece of pieces) {
      // A zero-byte input still needs a region: register one byte.
      await client.registerSystemSharedMemory(piece.region, key, Math.max(piece.size, 1), piece.offset, {
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
  return { inputs, outputs, regions: registered, key, release };
}
