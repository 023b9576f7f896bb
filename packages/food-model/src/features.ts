/**
 * Extracts the 1280-d pooled MobileNetV2 features of photos with the converted backbone in
 * onnxruntime-node, in batches, and caches them on disk keyed by everything they depend on. Photos
 * are preprocessed exactly like serving (see `preprocessing.ts`).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { INPUT_NAME, INPUT_SIZE } from './contract.js';
import { FEATURE_DIM } from './graph.js';
import type { PreprocessConfig } from './preprocessing.js';
import {
  IMAGE_FLOATS,
  preprocessConfigId,
  preprocessImplementationId,
  preprocessPhoto,
} from './preprocessing.js';

/**
 * Features are rounded to multiples of 2^-12 before training, so tiny run-to-run or host-to-host
 * floating-point differences of the backbone (thread partitioning, SIMD paths) do not change the
 * trained head's bytes.
 */
export const FEATURE_QUANTUM = 2 ** -12;

/** Options for {@link extractFeatures}. */
export interface ExtractOptions {
  /** Photos per onnxruntime run (default 16). */
  batchSize?: number;
  /** onnxruntime intra-op threads (default 2). */
  threads?: number;
}

/** Rounds each value to a multiple of {@link FEATURE_QUANTUM}, in place. */
export function quantizeFeatures(data: Float32Array): Float32Array {
  for (let i = 0; i < data.length; i++)
    data[i] = Math.round((data[i] ?? 0) / FEATURE_QUANTUM) * FEATURE_QUANTUM;
  return data;
}

/**
 * Preprocesses the photos with `preprocess` (the serving config) and runs the feature extractor over
 * them; returns row-major `[paths.length, 1280]`, quantised.
 */
export async function extractFeatures(
  extractorOnnx: Uint8Array,
  paths: readonly string[],
  preprocess: PreprocessConfig,
  options: ExtractOptions = {},
): Promise<Float32Array> {
  const batchSize = options.batchSize ?? 16;
  const session = await ort.InferenceSession.create(extractorOnnx, {
    intraOpNumThreads: options.threads ?? 2,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  try {
    const out = new Float32Array(paths.length * FEATURE_DIM);
    // Decode the next batch while the current one runs; each photo is written into its batch slot.
    const decode = async (start: number): Promise<Float32Array> => {
      const slice = paths.slice(start, start + batchSize);
      const batch = new Float32Array(slice.length * IMAGE_FLOATS);
      await Promise.all(
        slice.map((p, i) =>
          preprocessPhoto(p, preprocess, batch.subarray(i * IMAGE_FLOATS, (i + 1) * IMAGE_FLOATS)),
        ),
      );
      return batch;
    };
    let pending = decode(0);
    for (let start = 0; start < paths.length; start += batchSize) {
      const batch = await pending;
      if (start + batchSize < paths.length) pending = decode(start + batchSize);
      const count = batch.length / IMAGE_FLOATS;
      const result = await session.run({
        [INPUT_NAME]: new ort.Tensor('float32', batch, [count, 3, INPUT_SIZE, INPUT_SIZE]),
      });
      const features = result.features?.data as Float32Array;
      out.set(features, start * FEATURE_DIM);
    }
    return quantizeFeatures(out);
  } finally {
    await session.release();
  }
}

/**
 * Cache key over the extractor bytes, the preprocessing (the resolved serving config and the
 * preprocessing code that runs, see {@link preprocessImplementationId}) and every photo's bytes.
 */
export function featureCacheKey(
  extractorOnnx: Uint8Array,
  paths: readonly string[],
  preprocess: PreprocessConfig,
): string {
  const h = createHash('sha256');
  h.update('features-v2\0');
  h.update(createHash('sha256').update(extractorOnnx).digest());
  h.update(`${preprocessConfigId(preprocess)}\0`);
  h.update(`${preprocessImplementationId()}\0`);
  h.update(String(FEATURE_QUANTUM));
  for (const p of paths) {
    h.update(p.slice(p.lastIndexOf('/') + 1));
    h.update(createHash('sha256').update(readFileSync(p)).digest());
  }
  return h.digest('hex');
}

/**
 * Features from `cacheDir` when the key matches, otherwise extracted and written atomically.
 * @returns the features and whether they came from the cache.
 */
export async function cachedFeatures(
  extractorOnnx: Uint8Array,
  paths: readonly string[],
  preprocess: PreprocessConfig,
  cacheDir: string,
  options: ExtractOptions = {},
): Promise<{ features: Float32Array; cached: boolean; key: string }> {
  const key = featureCacheKey(extractorOnnx, paths, preprocess);
  const file = join(cacheDir, `features-${key.slice(0, 24)}.f32`);
  try {
    const buf = readFileSync(file);
    if (buf.byteLength === paths.length * FEATURE_DIM * 4) {
      const features = new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
      return { features, cached: true, key };
    }
  } catch {
    // no cache yet
  }
  const features = await extractFeatures(extractorOnnx, paths, preprocess, options);
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, new Uint8Array(features.buffer, features.byteOffset, features.byteLength));
  renameSync(tmp, file);
  return { features, cached: false, key };
}
