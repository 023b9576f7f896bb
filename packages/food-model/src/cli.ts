#!/usr/bin/env node
/**
 * `node dist/cli.js build|ensure|calibrate-ood|model-card`: `build` always rebuilds the Food-11 model; `ensure`
 * rebuilds only when the model is missing or its recorded inputs changed (a fast no-op otherwise);
 * `calibrate-ood` recomputes the out-of-distribution threshold of the built model and writes
 * `ood-calibration.json`; `model-card` writes `model-card.json` (trained classes, held-out photos
 * and the model's answers for them) from the build's report.
 */
import { existsSync } from 'node:fs';
import { buildFoodModel, summarize } from './build.js';
import { buildInputsHash, ensureDecision } from './ensure.js';
import { buildModelCard, MODEL_CARD_FILE, writeModelCard } from './model-card.js';
import { calibrateOod, OOD_CALIBRATION_FILE, summarizeOod, writeOodCalibration } from './ood/calibrate.js';
import { CACHE_DIR, MODEL_FILE, REPORT_FILE } from './paths.js';

async function main(command: string | undefined): Promise<void> {
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
    console.error('usage: cli.js build|ensure|calibrate-ood|model-card');
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
    const decision = ensureDecision(MODEL_FILE, REPORT_FILE, inputsHash);
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
}

main(process.argv[2]).catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
});
