/** Accuracy figures for the Food-11 head: stratified k-fold CV, held-out accuracy, baselines. */
import { FEATURE_DIM } from '../graph.js';
import type { FeatureMatrix, SoftmaxModel, SoftmaxOptions } from './softmax.js';
import { predictLogits, softmaxRows, trainSoftmax } from './softmax.js';
import { stratifiedFolds } from './splits.js';

/** Selects rows of a `[n, FEATURE_DIM]` matrix. */
export function selectRows(features: Float32Array, rows: readonly number[]): FeatureMatrix {
  const data = new Float32Array(rows.length * FEATURE_DIM);
  rows.forEach((r, i) =>
    data.set(features.subarray(r * FEATURE_DIM, (r + 1) * FEATURE_DIM), i * FEATURE_DIM),
  );
  return { n: rows.length, dim: FEATURE_DIM, data };
}

/** Index of the largest value in each row of `[n, k]`. */
export function argmaxRows(values: Float64Array | Float32Array, k: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < values.length; i += k) {
    let best = 0;
    for (let c = 1; c < k; c++) if ((values[i + c] as number) > (values[i + best] as number)) best = c;
    out.push(best);
  }
  return out;
}

/** Fraction of equal entries. */
export function accuracy(predicted: readonly number[], expected: readonly number[]): number {
  let ok = 0;
  predicted.forEach((p, i) => {
    if (p === expected[i]) ok++;
  });
  return expected.length === 0 ? 0 : ok / expected.length;
}

/** Accuracy of always predicting the commonest label. */
export function majorityBaseline(labels: readonly number[]): number {
  const counts = new Map<number, number>();
  for (const l of labels) counts.set(l, (counts.get(l) ?? 0) + 1);
  return labels.length === 0 ? 0 : Math.max(...counts.values()) / labels.length;
}

/** Result of {@link crossValidate}. */
export interface CrossValidation {
  folds: number;
  accuracy: number;
  foldAccuracies: number[];
}

/** Stratified, deterministic k-fold cross-validation of softmax regression. */
export function crossValidate(
  features: Float32Array,
  rows: readonly number[],
  labels: readonly number[],
  k: number,
  options: SoftmaxOptions,
): CrossValidation {
  const rowLabels = rows.map((r) => labels[r] as number);
  const folds = stratifiedFolds(rowLabels, k);
  let correct = 0;
  const foldAccuracies: number[] = [];
  for (let f = 0; f < k; f++) {
    const train = rows.filter((_, i) => folds[i] !== f);
    const test = rows.filter((_, i) => folds[i] === f);
    const model = trainSoftmax(
      selectRows(features, train),
      train.map((r) => labels[r] as number),
      options,
    );
    const predicted = argmaxRows(predictLogits(model, selectRows(features, test)), options.classes);
    const acc = accuracy(
      predicted,
      test.map((r) => labels[r] as number),
    );
    foldAccuracies.push(acc);
    correct += acc * test.length;
  }
  return { folds: k, accuracy: correct / rows.length, foldAccuracies };
}

/** Softmax probabilities of a fitted model on rows of `features`. */
export function predictProbabilities(
  model: SoftmaxModel,
  features: Float32Array,
  rows: readonly number[],
): Float64Array {
  const logits = predictLogits(model, selectRows(features, rows));
  softmaxRows(logits, model.classes);
  return logits;
}
