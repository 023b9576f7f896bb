/**
 * Calibrates the out-of-distribution threshold of the built model: runs the model (serving
 * preprocessing) over the build's held-out food photos (in distribution) and the clearly-not-food
 * Debian sample images, picks the threshold on the held-out food alone, and reports what it gets
 * wrong on both sides, next to the logit-based scores it was compared with.
 */
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { datasetSplit } from '../build.js';
import { OOD_OUTPUT_NAME } from '../contract.js';
import { listPhotos } from '../dataset.js';
import { loadNsfwjsMobileNetV2 } from '../convert/tfjs-artifacts.js';
import { FoodModelError } from '../errors.js';
import { cachedFeatures } from '../features.js';
import { buildFeatureExtractor, FEATURE_DIM, unitRows } from '../graph.js';
import { CACHE_DIR, MODEL_CONFIG_FILE, MODEL_FILE, PACKAGE_DIR, REPO_ROOT } from '../paths.js';
import { selectRows } from '../train/evaluate.js';
import { preprocessConfigId, servingPreprocessConfig } from '../preprocessing.js';
import { row, runClassifier, zeroInputLogits } from './logits.js';
import { ensureNonFoodImages, NONFOOD_IMAGES } from './nonfood.js';
import type { NonFoodKind } from './nonfood.js';
import type { OodMethod, Rate } from './score.js';
import { auroc, errorRates, isFlagged, oodScore, thresholdKeeping } from './score.js';

/** The committed calibration (read by the web gateway). */
export const OOD_CALIBRATION_FILE = join(PACKAGE_DIR, 'ood-calibration.json');

/** Share of the held-out food photos the threshold keeps (not flagged). */
export const OOD_KEEP_HELD_OUT_FOOD = 0.95;

/** Identifier of the served score. */
export const OOD_SERVED_METHOD = 'nearest-training-photo-cosine';

/** How one score does at the threshold rule. */
export interface MethodFigures {
  method: typeof OOD_SERVED_METHOD | OodMethod;
  threshold: number;
  auroc: number;
  /** Held-out food flagged. */
  falsePositive: Rate;
  /** Non-food images passed, by kind and in all. */
  falseNegative: { photo: Rate; graphic: Rate; all: Rate };
}

/** The calibration artefact (`ood-calibration.json`). */
export interface OodCalibration {
  /** Format version of this file. */
  version: 1;
  method: typeof OOD_SERVED_METHOD;
  description: string;
  /** The model output that carries the score. */
  output: typeof OOD_OUTPUT_NAME;
  /** An upload is flagged when its score is strictly greater than this. */
  threshold: number;
  rule: string;
  /** The model this was calibrated on: a gateway compares `zeroInputLogits` with what it is served. */
  model: {
    file: string;
    sha256: string;
    /** Logits of the all-zero input tensor (the mean-colour image): the model's fingerprint. */
    zeroInputLogits: number[];
    preprocessing: string;
  };
  figures: MethodFigures;
  /**
   * Each training photo scored against the other training photos (its own features left out of the
   * reference, in JavaScript on the build's features): a second, larger in-distribution sample the
   * threshold was not chosen on.
   */
  leaveOneOutTraining: { falsePositive: Rate };
  /** The threshold chosen on one half of the held-out food, false positives counted on the other. */
  splitHalfCheck: { thresholds: [number, number]; falsePositive: Rate };
  /** Every score compared, at the same rule (the served one first). */
  comparison: MethodFigures[];
  /** IFCT photos the model was not trained on (other food groups, live animals): flagged share, for information. */
  untrainedIfctPhotos: { flagged: Rate };
  /** Per-image scores (6 decimals): held-out food by IFCT code, non-food by absolute path (as apt installs it). */
  scores: { heldOutFood: Record<string, number>; nonFood: Record<string, number> };
}

const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;

function figures(
  method: MethodFigures['method'],
  food: readonly number[],
  nonFood: readonly number[],
  kinds: readonly NonFoodKind[],
): MethodFigures {
  const threshold = thresholdKeeping(food, OOD_KEEP_HELD_OUT_FOOD);
  const of = (kind: NonFoodKind | null) => nonFood.filter((_, i) => kind === null || kinds[i] === kind);
  const fn = (kind: NonFoodKind | null) => errorRates(food, of(kind), threshold).falseNegative;
  return {
    method,
    threshold: round6(threshold),
    auroc: round6(auroc(food, nonFood)),
    falsePositive: errorRates(food, [], threshold).falsePositive,
    falseNegative: { photo: fn('photo'), graphic: fn('graphic'), all: fn(null) },
  };
}

/**
 * `1 − max cos` of every row against every other row of `features` (rows `[n, FEATURE_DIM]`): the
 * served score of each training photo with itself left out of the reference set.
 */
export function leaveOneOutScores(features: Float32Array | Float64Array): number[] {
  const unit = unitRows(features);
  const n = unit.length / FEATURE_DIM;
  const scores: number[] = [];
  for (let i = 0; i < n; i++) {
    let best = -Infinity;
    for (let j = 0; j < n; j++) {
      if (j === i) continue;
      let dot = 0;
      for (let k = 0; k < FEATURE_DIM; k++)
        dot += (unit[i * FEATURE_DIM + k] as number) * (unit[j * FEATURE_DIM + k] as number);
      best = Math.max(best, dot);
    }
    scores.push(1 - best);
  }
  return scores;
}

/** Options for {@link calibrateOod}. */
export interface CalibrateOptions {
  modelFile?: string;
  modelConfigFile?: string;
  /** Install the Debian packages of the non-food images when missing (as root; default true). */
  install?: boolean;
  log?: (line: string) => void;
}

/**
 * Computes the calibration of the built model (nothing is written). Fails with `CALIBRATION_INVALID`
 * when the model has no `ood_score` output.
 */
export async function calibrateOod(options: CalibrateOptions = {}): Promise<OodCalibration> {
  const log = options.log ?? (() => undefined);
  const modelFile = options.modelFile ?? MODEL_FILE;
  const preprocess = servingPreprocessConfig(options.modelConfigFile ?? MODEL_CONFIG_FILE);
  const { labelled, heldOut } = datasetSplit();
  const held = labelled.filter((_, i) => heldOut[i]);
  const nonFoodPaths = ensureNonFoodImages({ install: options.install ?? true, log });
  const kinds = NONFOOD_IMAGES.map((i) => i.kind);
  const trainedCodes = new Set(labelled.map((p) => p.code));
  const untrained = listPhotos().filter((p) => !trainedCodes.has(p.code));

  const t0 = performance.now();
  const food = await runClassifier(
    modelFile,
    held.map((p) => p.path),
    preprocess,
  );
  const nonFood = await runClassifier(modelFile, nonFoodPaths, preprocess);
  const other = await runClassifier(
    modelFile,
    untrained.map((p) => p.path),
    preprocess,
  );
  log(
    `scored ${held.length} held-out food photos, ${nonFoodPaths.length} non-food images and ` +
      `${untrained.length} untrained IFCT photos in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  if (!food.oodScores || !nonFood.oodScores || !other.oodScores) {
    throw new FoodModelError(
      'CALIBRATION_INVALID',
      `${modelFile} has no ${OOD_OUTPUT_NAME} output; rebuild it with npm run model:build`,
    );
  }
  const foodScores = Array.from(food.oodScores);
  const nonFoodScores = Array.from(nonFood.oodScores);
  const served = figures(OOD_SERVED_METHOD, foodScores, nonFoodScores, kinds);
  const byLogits = (['energy', 'max-softmax', 'max-logit'] as const).map((method) =>
    figures(
      method,
      held.map((_, i) => oodScore(method, row(food.logits, i))),
      nonFoodPaths.map((_, i) => oodScore(method, row(nonFood.logits, i))),
      kinds,
    ),
  );

  // Split-half check: the threshold from the even-ranked held-out photos, judged on the odd ones, and back.
  const halves = [0, 1].map((h) => foodScores.filter((_, i) => i % 2 === h));
  const [even, odd] = halves as [number[], number[]];
  const tEven = thresholdKeeping(even, OOD_KEEP_HELD_OUT_FOOD);
  const tOdd = thresholdKeeping(odd, OOD_KEEP_HELD_OUT_FOOD);
  const fpOdd = errorRates(odd, [], tEven).falsePositive;
  const fpEven = errorRates(even, [], tOdd).falsePositive;
  const fpCount = fpOdd.count + fpEven.count;

  // The build's (cached) features of the training photos, the ones the model's reference set holds.
  const extractor = buildFeatureExtractor(loadNsfwjsMobileNetV2(), preprocess);
  const { features } = await cachedFeatures(
    extractor,
    labelled.map((p) => p.path),
    preprocess,
    CACHE_DIR,
  );
  const trainRows = labelled.map((_, i) => i).filter((i) => !heldOut[i]);
  const loo = leaveOneOutScores(selectRows(features, trainRows).data);
  const looFlagged = loo.filter((s) => isFlagged(s, served.threshold)).length;

  const otherFlagged = Array.from(other.oodScores).filter((s) => isFlagged(s, served.threshold)).length;
  const modelBytes = readFileSync(modelFile);
  return {
    version: 1,
    method: OOD_SERVED_METHOD,
    description:
      "1 − the largest cosine similarity between the image's 1280-d MobileNetV2 features and the features of " +
      'the training photos (the model output ood_score); higher is less like the food the model was trained on',
    output: OOD_OUTPUT_NAME,
    threshold: served.threshold,
    rule:
      `keep ${OOD_KEEP_HELD_OUT_FOOD * 100} % of the held-out food photos: with k = ceil(${OOD_KEEP_HELD_OUT_FOOD} · n), halfway between ` +
      'the k-th and the (k+1)-th smallest held-out score; flagged when score > threshold',
    model: {
      file: relative(REPO_ROOT, modelFile),
      sha256: createHash('sha256').update(modelBytes).digest('hex'),
      zeroInputLogits: (await zeroInputLogits(modelFile)).map(round6),
      preprocessing: preprocessConfigId(preprocess),
    },
    figures: served,
    leaveOneOutTraining: {
      falsePositive: { count: looFlagged, of: loo.length, rate: looFlagged / loo.length },
    },
    splitHalfCheck: {
      thresholds: [round6(tEven), round6(tOdd)],
      falsePositive: { count: fpCount, of: foodScores.length, rate: fpCount / foodScores.length },
    },
    comparison: [served, ...byLogits],
    untrainedIfctPhotos: {
      flagged: { count: otherFlagged, of: untrained.length, rate: otherFlagged / untrained.length },
    },
    scores: {
      heldOutFood: Object.fromEntries(held.map((p, i) => [p.code, round6(foodScores[i] as number)])),
      nonFood: Object.fromEntries(nonFoodPaths.map((p, i) => [p, round6(nonFoodScores[i] as number)])),
    },
  };
}

/** Writes the calibration as `ood-calibration.json` (atomically). */
export function writeOodCalibration(calibration: OodCalibration, file: string = OOD_CALIBRATION_FILE): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(calibration, null, 2)}\n`);
  renameSync(tmp, file);
}

/** A short human-readable summary. */
export function summarizeOod(c: OodCalibration): string {
  const pct = (r: Rate): string => `${(100 * r.rate).toFixed(1)} % (${r.count} of ${r.of})`;
  const lines = [
    `out-of-distribution score: ${c.method} (model output ${c.output}); threshold ${c.threshold}`,
    `  rule: ${c.rule}`,
    `  false positives (held-out food flagged): ${pct(c.figures.falsePositive)}; split-half check ${pct(c.splitHalfCheck.falsePositive)}`,
    `  training photos flagged, each against the others (leave-one-out): ${pct(c.leaveOneOutTraining.falsePositive)}`,
    `  false negatives (non-food passed): photos ${pct(c.figures.falseNegative.photo)}, graphics ${pct(c.figures.falseNegative.graphic)}, all ${pct(c.figures.falseNegative.all)}`,
    `  untrained IFCT photos flagged: ${pct(c.untrainedIfctPhotos.flagged)}`,
    '  comparison at the same rule (AUROC, false negatives on all non-food):',
    ...c.comparison.map(
      (m) => `    ${m.method.padEnd(32)} AUROC ${m.auroc.toFixed(3)}  FN ${pct(m.falseNegative.all)}`,
    ),
  ];
  return lines.join('\n');
}
