#!/usr/bin/env node
/**
 * `node dist/cli.js build|ensure|calibrate-ood|model-card|import <file>`: `import` turns a model trained
 * elsewhere (a MobileNetV2 `food11.pth` or an ONNX file) into the served model (`src/import/`); `build` always rebuilds the Food-11 model; `ensure`
 * rebuilds only when the model is missing or its recorded inputs changed (a fast no-op otherwise);
 * `calibrate-ood` recomputes the out-of-distribution threshold of the built model and writes
 * `ood-calibration.json`; `model-card` writes `model-card.json` (trained classes, held-out photos
 * and the model's answers for them) from the build's report.
 */
import { existsSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildFoodModel, summarize } from './build.js';
import { buildInputsHash, ensureDecision } from './ensure.js';
import { importModel } from './import/import-model.js';
import { readProvenance } from './import/provenance.js';
import { buildModelCard, IMPORTED_OOD_REASON, MODEL_CARD_FILE, writeModelCard } from './model-card.js';
import { calibrateOod, OOD_CALIBRATION_FILE, summarizeOod, writeOodCalibration } from './ood/calibrate.js';
import { CACHE_DIR, MODEL_FILE, PROVENANCE_FILE, REPORT_FILE } from './paths.js';

async function main(command: string | undefined, args: readonly string[]): Promise<void> {
  if (command === 'import') {
    // `--repository <dir>`: import into another checkout (the tests' temporary copies).
    const at = args.indexOf('--repository');
    const repoRoot = at >= 0 ? args[at + 1] : undefined;
    const rest = at >= 0 ? args.filter((_, i) => i !== at && i !== at + 1) : args;
    const source = rest[0];
    if (source === undefined || rest.length > 1 || (at >= 0 && repoRoot === undefined)) {
      console.error('usage: npm run model:import -- <food11.pth | model.onnx> [--repository <dir>]');
      process.exitCode = 2;
      return;
    }
    const cwd = process.env.INIT_CWD ?? process.cwd();
    const result = await importModel({
      source: resolve(cwd, source),
      ...(repoRoot === undefined ? {} : { repoRoot: resolve(cwd, repoRoot) }),
      log: (line) => console.log(`  ${line}`),
    });
    console.log(`imported: ${result.modelFile} (sha256 ${result.provenance.modelSha256.slice(0, 12)}…)`);
    console.log(`provenance: ${result.provenanceFile} (model:ensure keeps this model)`);
    for (const c of result.configs.filter((e) => e.removed > 0))
      console.log(`config: ${c.file}: the out-of-distribution output removed`);
    console.log(`model card: ${result.cardFile} (all 11 classes, trained elsewhere, no held-out figures)`);
    console.log(`out-of-distribution signal switched off: ${result.oodDisabled}`);
    return;
  }
  const imported =
    command === 'calibrate-ood' || command === 'model-card' ? readProvenance(PROVENANCE_FILE) : undefined;
  if (imported) {
    // An imported model has its card from model:import and no ood_score to calibrate.
    console.error(
      command === 'calibrate-ood'
        ? `not calibrated: the served model was imported from ${imported.source.file}. ${IMPORTED_OOD_REASON}`
        : `the served model was imported from ${imported.source.file}: model:import wrote its card (${MODEL_CARD_FILE})`,
    );
    process.exitCode = 1;
    return;
  }
  if (command === 'calibrate-ood') {
    const calibration = await calibrateOod({ log: (line) => console.log(`  ${line}`) });
    writeOodCalibration(calibration);
    console.log(summarizeOod(calibration));
    console.log(`written: ${OOD_CALIBRATION_FILE}`);
    return;
  }
  if (command === 'model-card') {
    const card = await buildModelCard();
    writeModelCard(card);
    const trained = card.classes.filter((c) => c.training > 0).map((c) => `${c.label} (${c.training})`);
    console.log(`trained on: ${trained.join(', ')}`);
    console.log(`held out: ${card.heldOutAccuracy.correct} of ${card.heldOutAccuracy.of} right`);
    console.log(`written: ${MODEL_CARD_FILE}`);
    return;
  }
  if (command !== 'build' && command !== 'ensure') {
    console.error('usage: cli.js build|ensure|calibrate-ood|model-card|import <file>');
    process.exitCode = 2;
    return;
  }
  const started = performance.now();
  let inputsHash: string;
  try {
    inputsHash = buildInputsHash();
  } catch (error) {
    // e.g. a production install without the devDependencies (nsfwjs, the photos): keep what exists.
    if (command === 'ensure' && existsSync(MODEL_FILE)) {
      console.log(`food model left as is (cannot check its build inputs: ${(error as Error).message})`);
      return;
    }
    throw error;
  }
  if (command === 'ensure') {
    const decision = ensureDecision(MODEL_FILE, REPORT_FILE, inputsHash, PROVENANCE_FILE);
    const took = `checked in ${(performance.now() - started).toFixed(0)} ms`;
    if (decision.action === 'up-to-date') {
      console.log(`food model up to date: ${MODEL_FILE} (${took})`);
      return;
    }
    if (decision.action === 'keep-foreign') {
      console.log(`food model left as is: ${decision.reason} (${took})`);
      return;
    }
    console.log(`building the food model: ${decision.reason}`);
  }
  const { report } = await buildFoodModel({
    modelFile: MODEL_FILE,
    reportFile: REPORT_FILE,
    cacheDir: CACHE_DIR,
    inputsHash,
    log: (line) => console.log(`  ${line}`),
  });
  console.log(summarize(report));
  console.log(`report: ${REPORT_FILE}`);
  const replaced = readProvenance(PROVENANCE_FILE);
  if (replaced) {
    rmSync(PROVENANCE_FILE);
    console.log(
      `replaced the model imported from ${replaced.source.file}; its configs and model card are still the ` +
        `imported model's: git restore models_staging packages/food-model/model-card.json`,
    );
  }
}

main(process.argv[2], process.argv.slice(3)).catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
});
