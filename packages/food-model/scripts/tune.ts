/**
 * Dev tool: cross-validation accuracy of the softmax head over a grid of L2 strengths and iteration
 * counts (on the cached features), used to pick DEFAULT_SOFTMAX_OPTIONS.
 * `node --import tsx scripts/tune.ts 0.001,0.01,0.1 100,200,400`
 */
import { datasetSplit } from '../src/build.js';
import { loadNsfwjsMobileNetV2 } from '../src/convert/tfjs-artifacts.js';
import { cachedFeatures } from '../src/features.js';
import { buildFeatureExtractor, FEATURE_DIM } from '../src/graph.js';
import { CACHE_DIR } from '../src/paths.js';
import { servingPreprocessConfig } from '../src/preprocessing.js';
import { stratifiedFolds } from '../src/train/splits.js';
import { predictLogits, trainSoftmax } from '../src/train/softmax.js';

const t0 = performance.now();
const model = loadNsfwjsMobileNetV2();
const preprocess = servingPreprocessConfig();
const extractor = buildFeatureExtractor(model, preprocess);
const t1 = performance.now();
// The build's own split: the held-out photos are the ones the model build holds out (decided on the
// group labels, so the photo review does not move them), never a split of the reviewed list.
const { labelled: photos, labels, heldOut: held } = datasetSplit();
const { features, cached } = await cachedFeatures(
  extractor,
  photos.map((p) => p.path),
  preprocess,
  CACHE_DIR,
);
const t2 = performance.now();
console.log(`convert ${(t1 - t0).toFixed(0)} ms, features ${(t2 - t1).toFixed(0)} ms cached=${cached}`);
const trainIdx = labels.map((_, i) => i).filter((i) => !held[i]);
const sub = (idx: number[]) => {
  const d = new Float32Array(idx.length * FEATURE_DIM);
  idx.forEach((r, i) => d.set(features.subarray(r * FEATURE_DIM, (r + 1) * FEATURE_DIM), i * FEATURE_DIM));
  return { n: idx.length, dim: FEATURE_DIM, data: d };
};
const acc = (m: ReturnType<typeof trainSoftmax>, idx: number[]) => {
  const logits = predictLogits(m, sub(idx));
  let ok = 0;
  idx.forEach((r, i) => {
    let best = 0;
    for (let c = 1; c < 11; c++) if ((logits[i * 11 + c] ?? 0) > (logits[i * 11 + best] ?? 0)) best = c;
    if (best === labels[r]) ok++;
  });
  return ok / idx.length;
};
const trainLabels = trainIdx.map((i) => labels[i] ?? 0);
const folds = stratifiedFolds(trainLabels, 5);
for (const l2 of (process.argv[2] ?? '0.01').split(',').map(Number)) {
  for (const iterations of (process.argv[3] ?? '200').split(',').map(Number)) {
    const ts = performance.now();
    let correct = 0;
    for (let f = 0; f < 5; f++) {
      const tr = trainIdx.filter((_, i) => folds[i] !== f);
      const te = trainIdx.filter((_, i) => folds[i] === f);
      const m = trainSoftmax(
        sub(tr),
        tr.map((i) => labels[i] ?? 0),
        { classes: 11, l2, iterations, priorPseudoCount: 0.01 },
      );
      correct += acc(m, te) * te.length;
    }
    const m = trainSoftmax(sub(trainIdx), trainLabels, {
      classes: 11,
      l2,
      iterations,
      priorPseudoCount: 0.01,
    });
    const heldIdx = labels.map((_, i) => i).filter((i) => held[i]);
    console.log(
      `l2=${l2} it=${iterations} cv=${(correct / trainIdx.length).toFixed(4)} held=${acc(m, heldIdx).toFixed(4)} trainacc=${acc(m, trainIdx).toFixed(3)} loss=${m.loss.toFixed(4)} time=${(performance.now() - ts).toFixed(0)}ms`,
    );
  }
}
