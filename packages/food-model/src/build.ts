/**
 * The model build: convert the backbone, extract features of the labelled photos (cached; the photos
 * are preprocessed exactly like serving, from the `preprocess_*` parameters of the model's
 * `config.pbtxt`), evaluate (stratified 5-fold CV on the training split, held-out split), train the
 * final head on the training split, write the ONNX model atomically and a JSON report.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { FOOD11_CLASSES, UNCOVERED_CLASSES } from './contract.js';
import type { Food11Class } from './contract.js';
import { loadNsfwjsMobileNetV2 } from './convert/tfjs-artifacts.js';
import type { TfjsLayersModelArtifacts } from './convert/tfjs-artifacts.js';
import { listPhotos } from './dataset.js';
import type { Photo } from './dataset.js';
import { FoodModelError } from './errors.js';
import { cachedFeatures } from './features.js';
import { buildFeatureExtractor, buildFoodClassifier, unitRows } from './graph.js';
import {
  accuracy,
  argmaxRows,
  crossValidate,
  majorityBaseline,
  predictProbabilities,
  selectRows,
} from './train/evaluate.js';
import type { SoftmaxOptions } from './train/softmax.js';
import { DEFAULT_SOFTMAX_OPTIONS, toRawLinearHead, trainSoftmax } from './train/softmax.js';
import { heldOutMask } from './train/splits.js';
import { MODEL_CONFIG_FILE, REPO_ROOT } from './paths.js';
import type { PreprocessConfig } from './preprocessing.js';
import {
  preprocessImplementationId,
  preprocessParameters,
  servingPreprocessConfig,
} from './preprocessing.js';

/** Held-out split: every 5th photo of each class (ranks 2, 7, 12, … in code order). */
export const HELD_OUT = { every: 5, offset: 2 } as const;
/** Folds of the cross-validation on the training split. */
export const CV_FOLDS = 5;

/** Options for {@link buildFoodModel}. */
export interface BuildOptions {
  /** Where to write `model.onnx`. */
  modelFile: string;
  /** Where to write the JSON report. */
  reportFile: string;
  /** Directory for the feature cache. */
  cacheDir: string;
  /**
   * The Triton config whose `preprocess_*` parameters define how photos become model input (default:
   * `models_staging/food_classifier_onnx/config.pbtxt`, the one serving reads).
   */
  modelConfigFile?: string;
  /** Hash of the build inputs, recorded in the report (see `ensure.ts`). */
  inputsHash?: string;
  /** Progress output (default: none). */
  log?: (line: string) => void;
}

/** The JSON report written next to the package. */
export interface BuildReport {
  model: { file: string; sha256: string; bytes: number };
  inputsHash: string | null;
  /** How the photos were preprocessed: the config's parameters and what they resolve to. */
  preprocessing: {
    configFile: string;
    parameters: Record<string, string>;
    resolved: PreprocessConfig;
    /** Hash of the preprocessing code that ran (`preprocessImplementationId`). */
    implementationId: string;
  };
  dataset: {
    photos: number;
    labelled: number;
    excluded: { count: number; byGroupLetter: Record<string, number>; byReview: number };
    /** Codes the review trains as another class than their group's. */
    relabelled: Record<string, string>;
    perClass: Record<string, number>;
    uncoveredClasses: readonly string[];
    heldOut: number;
    training: number;
  };
  training: SoftmaxOptions & { finalLoss: number };
  accuracy: {
    crossValidation: { folds: number; accuracy: number; foldAccuracies: number[] };
    heldOut: number;
    majorityBaselineAll: number;
    majorityBaselineHeldOut: number;
    maxUncoveredProbabilityHeldOut: number;
  };
  heldOutCodes: string[];
  timingsMs: { convert: number; features: number; train: number; total: number };
  featuresCached: boolean;
}

function classIndex(label: Food11Class): number {
  return FOOD11_CLASSES.indexOf(label);
}

/**
 * Labelled photos (code order), their class indices and the held-out mask. The held-out split is
 * decided on the group labels, before the review ({@link CURATION}): every photo that is still
 * trained on keeps the held-out assignment it had, so figures before and after the review compare.
 */
export function datasetSplit(photos: readonly Photo[] = listPhotos()): {
  labelled: Photo[];
  labels: number[];
  heldOut: boolean[];
} {
  const grouped = photos.filter((p): p is Photo & { groupLabel: Food11Class } => p.groupLabel !== null);
  const groupHeldOut = heldOutMask(
    grouped.map((p) => classIndex(p.groupLabel)),
    HELD_OUT.every,
    HELD_OUT.offset,
  );
  const heldOutByCode = new Map(grouped.map((p, i) => [p.code, groupHeldOut[i] === true]));
  const labelled = photos.filter((p): p is Photo & { label: Food11Class } => p.label !== null);
  const labels = labelled.map((p) => classIndex(p.label));
  return { labelled, labels, heldOut: labelled.map((p) => heldOutByCode.get(p.code) === true) };
}

/** Builds the model and the report. */
export async function buildFoodModel(
  options: BuildOptions,
): Promise<{ report: BuildReport; modelBytes: Uint8Array }> {
  const log = options.log ?? (() => undefined);
  const t0 = performance.now();
  const configFile = options.modelConfigFile ?? MODEL_CONFIG_FILE;
  const preprocess = servingPreprocessConfig(configFile);
  const backbone: TfjsLayersModelArtifacts = loadNsfwjsMobileNetV2();
  const extractor = buildFeatureExtractor(backbone, preprocess);
  const t1 = performance.now();
  log(`converted MobileNetV2 (${backbone.layers.length} Keras layers) in ${(t1 - t0).toFixed(0)} ms`);

  const photos = listPhotos();
  const { labelled, labels, heldOut } = datasetSplit(photos);
  const excluded: Record<string, number> = {};
  for (const p of photos)
    if (p.groupLabel === null) excluded[p.code.charAt(0)] = (excluded[p.code.charAt(0)] ?? 0) + 1;
  const reviewed = photos.filter((p) => p.groupLabel !== null && p.label !== p.groupLabel);
  const { features, cached } = await cachedFeatures(
    extractor,
    labelled.map((p) => p.path),
    preprocess,
    options.cacheDir,
  );
  const t2 = performance.now();
  log(
    `features of ${labelled.length} photos ${cached ? 'from cache' : 'extracted'} in ${(t2 - t1).toFixed(0)} ms`,
  );

  const softmax: SoftmaxOptions = { classes: FOOD11_CLASSES.length, ...DEFAULT_SOFTMAX_OPTIONS };
  const rows = labels.map((_, i) => i);
  const trainRows = rows.filter((i) => !heldOut[i]);
  const heldRows = rows.filter((i) => heldOut[i]);
  const cv = crossValidate(features, trainRows, labels, CV_FOLDS, softmax);
  const model = trainSoftmax(
    selectRows(features, trainRows),
    trainRows.map((r) => labels[r] as number),
    softmax,
  );
  const heldLabels = heldRows.map((r) => labels[r] as number);
  const probs = predictProbabilities(model, features, heldRows);
  const heldAcc = accuracy(argmaxRows(probs, softmax.classes), heldLabels);
  const uncovered = UNCOVERED_CLASSES.map((c) => classIndex(c));
  let maxUncovered = 0;
  for (let i = 0; i < heldRows.length; i++) {
    for (const c of uncovered)
      maxUncovered = Math.max(maxUncovered, probs[i * softmax.classes + c] as number);
  }
  const t3 = performance.now();
  if (!Number.isFinite(model.loss)) throw new FoodModelError('TRAINING_FAILED', 'non-finite loss');

  // The out-of-distribution output compares an image with the photos the head was trained on.
  const ood = { rows: trainRows.length, unitFeatures: unitRows(selectRows(features, trainRows).data) };
  const modelBytes = buildFoodClassifier(backbone, toRawLinearHead(model), preprocess, ood);
  const sha256 = createHash('sha256').update(modelBytes).digest('hex');
  mkdirSync(dirname(options.modelFile), { recursive: true });
  const tmp = `${options.modelFile}.${process.pid}.tmp`;
  writeFileSync(tmp, modelBytes);
  renameSync(tmp, options.modelFile);

  const perClass: Record<string, number> = {};
  for (const c of FOOD11_CLASSES) perClass[c] = 0;
  for (const l of labels) {
    const name = FOOD11_CLASSES[l] as string;
    perClass[name] = (perClass[name] ?? 0) + 1;
  }
  const report: BuildReport = {
    model: { file: relative(REPO_ROOT, options.modelFile), sha256, bytes: modelBytes.byteLength },
    inputsHash: options.inputsHash ?? null,
    preprocessing: {
      configFile: relative(REPO_ROOT, configFile),
      parameters: preprocessParameters(configFile),
      resolved: preprocess,
      implementationId: preprocessImplementationId(),
    },
    dataset: {
      photos: photos.length,
      labelled: labelled.length,
      excluded: {
        count: photos.length - labelled.length,
        byGroupLetter: Object.fromEntries(Object.entries(excluded).sort()),
        byReview: reviewed.filter((p) => p.label === null).length,
      },
      relabelled: Object.fromEntries(
        reviewed.filter((p) => p.label !== null).map((p) => [p.code, p.label as string]),
      ),
      perClass,
      uncoveredClasses: UNCOVERED_CLASSES,
      heldOut: heldRows.length,
      training: trainRows.length,
    },
    training: { ...softmax, finalLoss: model.loss },
    accuracy: {
      crossValidation: cv,
      heldOut: heldAcc,
      majorityBaselineAll: majorityBaseline(labels),
      majorityBaselineHeldOut: majorityBaseline(heldLabels),
      maxUncoveredProbabilityHeldOut: maxUncovered,
    },
    heldOutCodes: heldRows.map((r) => (labelled[r] as Photo).code),
    timingsMs: {
      convert: Math.round(t1 - t0),
      features: Math.round(t2 - t1),
      train: Math.round(t3 - t2),
      total: Math.round(performance.now() - t0),
    },
    featuresCached: cached,
  };
  mkdirSync(dirname(options.reportFile), { recursive: true });
  writeFileSync(options.reportFile, `${JSON.stringify(report, null, 2)}\n`);
  return { report, modelBytes };
}

/** A short human-readable summary of a report. */
export function summarize(report: BuildReport): string {
  const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
  const a = report.accuracy;
  const p = report.preprocessing.resolved;
  return [
    `Food-11 model: ${report.model.file} (${(report.model.bytes / 1e6).toFixed(1)} MB, sha256 ${report.model.sha256.slice(0, 16)}…)`,
    `  preprocessing (${report.preprocessing.configFile} parameters, @gourmetgram/image-preprocess): ` +
      `${p.resize} ${p.height}×${p.width}, ${p.kernel} (${p.resampler} resampler), ${p.layout} ${p.color}`,
    `  photos: ${report.dataset.labelled} labelled of ${report.dataset.photos}; excluded ${report.dataset.excluded.count} ` +
      `(groups ${Object.entries(report.dataset.excluded.byGroupLetter)
        .map(([k, v]) => `${k}:${v}`)
        .join(' ')}; ${report.dataset.excluded.byReview} by the photo review), ` +
      `${Object.keys(report.dataset.relabelled).length} relabelled by the review`,
    `  ${a.crossValidation.folds}-fold CV accuracy (training split, ${report.dataset.training} photos): ${pct(a.crossValidation.accuracy)}` +
      ` [${a.crossValidation.foldAccuracies.map(pct).join(', ')}]; majority baseline ${pct(a.majorityBaselineAll)}`,
    `  held-out accuracy (${report.dataset.heldOut} photos): ${pct(a.heldOut)}; ` +
      `max probability of an uncovered class: ${a.maxUncoveredProbabilityHeldOut.toExponential(2)}`,
    `  time: ${(report.timingsMs.total / 1000).toFixed(1)} s (convert ${report.timingsMs.convert} ms, features ` +
      `${report.timingsMs.features} ms${report.featuresCached ? ' cached' : ''}, train ${report.timingsMs.train} ms)`,
  ].join('\n');
}
