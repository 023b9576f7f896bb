import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildFoodModel, datasetSplit } from '../src/build.js';
import { loadNsfwjsMobileNetV2 } from '../src/convert/tfjs-artifacts.js';
import { cachedFeatures, extractFeatures } from '../src/features.js';
import { buildFeatureExtractor, FEATURE_DIM } from '../src/graph.js';
import { CACHE_DIR, MODEL_FILE } from '../src/paths.js';
import { servingPreprocessConfig } from '../src/preprocessing.js';

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

describe('determinism', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'food-model-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('rebuilding (conversion, training, serialisation) gives the same bytes as the staged model', async () => {
    // The staged model was built by a separate process (model:ensure); rebuild it here from the
    // nsfwjs files (conversion, training on the cached features, serialisation) and compare.
    const rebuilt = await buildFoodModel({
      modelFile: join(tmp, 'model.onnx'),
      reportFile: join(tmp, 'report.json'),
      cacheDir: CACHE_DIR,
    });
    expect(sha256(readFileSync(join(tmp, 'model.onnx')))).toBe(sha256(rebuilt.modelBytes));
    expect(rebuilt.report.model.sha256).toBe(sha256(rebuilt.modelBytes));
    expect(sha256(readFileSync(MODEL_FILE))).toBe(sha256(rebuilt.modelBytes));
  }, 90_000);

  it('fresh feature extraction reproduces the cached features bit for bit', async () => {
    const preprocess = servingPreprocessConfig();
    const extractor = buildFeatureExtractor(loadNsfwjsMobileNetV2(), preprocess);
    expect(sha256(buildFeatureExtractor(loadNsfwjsMobileNetV2(), preprocess))).toBe(sha256(extractor));
    const paths = datasetSplit().labelled.map((p) => p.path);
    const { features, cached } = await cachedFeatures(extractor, paths, preprocess, CACHE_DIR);
    expect(cached).toBe(true);
    const rows = [0, 100, 200, 300, paths.length - 1];
    const fresh = await extractFeatures(
      extractor,
      rows.map((r) => paths[r] as string),
      preprocess,
      { batchSize: 3 },
    );
    const expected = new Float32Array(rows.length * FEATURE_DIM);
    rows.forEach((r, i) =>
      expected.set(features.subarray(r * FEATURE_DIM, (r + 1) * FEATURE_DIM), i * FEATURE_DIM),
    );
    expect(Buffer.from(fresh.buffer).equals(Buffer.from(expected.buffer))).toBe(true);
  }, 60_000);
});
