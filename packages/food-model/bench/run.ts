/**
 * `npm run bench -w @gourmetgram/food-model`: onnxruntime-node latency of the built Food-11 model at
 * batch 1 and 8 (real held-out photos, preprocessing excluded), preprocessing time per photo, and the
 * model build time (conversion + training from cached features; plus the cold feature extraction time
 * recorded by the last build). Writes artifacts/bench.json.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import * as ort from 'onnxruntime-node';
import type { BuildReport } from '../src/build.js';
import { buildFoodModel, datasetSplit } from '../src/build.js';
import { INPUT_NAME } from '../src/contract.js';
import { CACHE_DIR, MODEL_FILE, PACKAGE_DIR, REPORT_FILE } from '../src/paths.js';
import { IMAGE_FLOATS, preprocessPhoto, servingPreprocessConfig } from '../src/preprocessing.js';

function stats(samples: number[]): { meanMs: number; p50Ms: number; p90Ms: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  const round = (x: number): number => Math.round(x * 100) / 100;
  return {
    meanMs: round(s.reduce((a, b) => a + b, 0) / s.length),
    p50Ms: round(at(0.5)),
    p90Ms: round(at(0.9)),
  };
}

const { labelled, heldOut } = datasetSplit();
const paths = labelled.filter((_, i) => heldOut[i]).map((p) => p.path);

const preprocess = servingPreprocessConfig();
const preprocessMs: number[] = [];
const images: Float32Array[] = [];
for (const p of paths.slice(0, 16)) {
  const t = performance.now();
  images.push(await preprocessPhoto(p, preprocess));
  preprocessMs.push(performance.now() - t);
}

const session = await ort.InferenceSession.create(MODEL_FILE, { intraOpNumThreads: 2 });
const latency: Record<string, ReturnType<typeof stats>> = {};
for (const batch of [1, 8]) {
  const data = new Float32Array(batch * IMAGE_FLOATS);
  for (let i = 0; i < batch; i++) data.set(images[i] as Float32Array, i * IMAGE_FLOATS);
  const feeds = { [INPUT_NAME]: new ort.Tensor('float32', data, [batch, 3, 224, 224]) };
  for (let i = 0; i < 3; i++) await session.run(feeds); // warm-up
  const samples: number[] = [];
  const runs = batch === 1 ? 30 : 10;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await session.run(feeds);
    samples.push(performance.now() - t);
  }
  latency[`batch${batch}`] = stats(samples);
}
await session.release();

const tmp = join(tmpdir(), `food-model-bench-${process.pid}`);
const t0 = performance.now();
await buildFoodModel({
  modelFile: join(tmp, 'model.onnx'),
  reportFile: join(tmp, 'report.json'),
  cacheDir: CACHE_DIR,
});
const warmBuildMs = Math.round(performance.now() - t0);
rmSync(tmp, { recursive: true, force: true });
function lastRecordedBuild(): BuildReport['timingsMs'] | null {
  try {
    return (JSON.parse(readFileSync(REPORT_FILE, 'utf8')) as BuildReport).timingsMs;
  } catch {
    return null;
  }
}
const lastBuild = lastRecordedBuild();

const result = {
  onnxruntimeLatency: latency,
  preprocessPerPhoto: stats(preprocessMs),
  build: { warmBuildMs, lastRecordedBuild: lastBuild },
  threads: 2,
};
const out = join(PACKAGE_DIR, 'artifacts', 'bench.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(result, null, 2));
