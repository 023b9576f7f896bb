/** Default locations, relative to this package (works from `src/` under vitest/tsx and from `dist/`). */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODEL_NAME } from './contract.js';

/** The package directory (`packages/food-model`). */
export const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The repository root. */
export const REPO_ROOT = resolve(PACKAGE_DIR, '..', '..');
/** The Triton model directory `models_staging/food_classifier_onnx`. */
export const MODEL_DIR = join(REPO_ROOT, 'models_staging', MODEL_NAME);
/** The model's Triton config, whose `preprocess_*` parameters the build (and every client) follows. */
export const MODEL_CONFIG_FILE = join(MODEL_DIR, 'config.pbtxt');
/** Where the build writes the model. */
export const MODEL_FILE = join(MODEL_DIR, '1', 'model.onnx');
/**
 * Written beside an imported model by `model:import` (gitignored): what it was imported from and its
 * sha256. `model:ensure` never builds over a model this file describes.
 */
export const PROVENANCE_FILE = join(MODEL_DIR, '1', 'model.provenance.json');
/** The build report (gitignored `artifacts/`). */
export const REPORT_FILE = join(PACKAGE_DIR, 'artifacts', 'food11-report.json');
/** Feature cache (gitignored `.cache/`). */
export const CACHE_DIR = join(PACKAGE_DIR, '.cache');
