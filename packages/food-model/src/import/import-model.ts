/**
 * `model:import`: turns a Food-11 model trained elsewhere (the course's MobileNetV2 `food11.pth`
 * state dict, or its ONNX export) into `models_staging/food_classifier_onnx/1/model.onnx` with the
 * GourmetGram contract, checks it in onnxruntime-node, marks it imported (`model.provenance.json`,
 * which `model:ensure` respects), drops the demo's `ood_score` output from the configs, and writes
 * the model card the web app reads.
 *
 * @packageDocumentation
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { FOOD11_CLASSES, INPUT_NAME, INPUT_SIZE, MODEL_NAME, OUTPUT_NAME } from '../contract.js';
import { FoodModelError } from '../errors.js';
import {
  importedModelCard,
  IMPORTED_OOD_REASON,
  type ImportedModelCard,
  writeModelCard,
} from '../model-card.js';
import { REPO_ROOT } from '../paths.js';
import { type ConfigEdit, dropOodOutputs } from './configs.js';
import { fileSha256, type ModelProvenance, writeProvenance } from './provenance.js';
import { ensureImportPython, importPython, runImportScript } from './python.js';

/** Options of {@link importModel}. */
export interface ImportOptions {
  /** The `.pth` state dict (or pickled model) or `.onnx` file to import. */
  source: string;
  /** Repository to write into (its `models_staging/` and `packages/food-model/model-card.json`). */
  repoRoot?: string;
  /** Python with torch, torchvision and onnx (default `FOOD_MODEL_PYTHON` or `/usr/bin/python3`). */
  python?: string;
  /** Progress lines. */
  log?: (line: string) => void;
}

/** What {@link importModel} wrote. */
export interface ImportResult {
  modelFile: string;
  provenanceFile: string;
  cardFile: string;
  provenance: ModelProvenance;
  card: ImportedModelCard;
  configs: ConfigEdit[];
  /** Why the imported model is served without the out-of-distribution signal. */
  oodDisabled: string;
}

/** Paths of the imported model's files under a repository root. */
export function importPaths(repoRoot: string): {
  modelFile: string;
  provenanceFile: string;
  cardFile: string;
} {
  const version = join(repoRoot, 'models_staging', MODEL_NAME, '1');
  return {
    modelFile: join(version, 'model.onnx'),
    provenanceFile: join(version, 'model.provenance.json'),
    cardFile: join(repoRoot, 'packages', 'food-model', 'model-card.json'),
  };
}

/**
 * Checks an ONNX file against the contract in onnxruntime-node: one input `input`, one output
 * `output`, and a batch of 2 answers finite `[2, 11]` logits. Fails with `IMPORT_FAILED`.
 */
export async function checkContract(modelFile: string): Promise<void> {
  const session = await ort.InferenceSession.create(modelFile, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  try {
    if (session.inputNames.join() !== INPUT_NAME || session.outputNames.join() !== OUTPUT_NAME) {
      throw new FoodModelError(
        'IMPORT_FAILED',
        `the ONNX model has inputs [${session.inputNames.join(', ')}] and outputs [${session.outputNames.join(', ')}], ` +
          `expected [${INPUT_NAME}] and [${OUTPUT_NAME}]`,
      );
    }
    const n = 2;
    const input = new Float32Array(n * 3 * INPUT_SIZE * INPUT_SIZE);
    for (let i = 0; i < input.length; i++) input[i] = ((i * 7919) % 1000) / 500 - 1;
    const result = await session.run({
      [INPUT_NAME]: new ort.Tensor('float32', input, [n, 3, INPUT_SIZE, INPUT_SIZE]),
    });
    const out = result[OUTPUT_NAME];
    const dims = out?.dims.join(',');
    if (out === undefined || out.type !== 'float32' || dims !== `${n},${FOOD11_CLASSES.length}`) {
      throw new FoodModelError(
        'IMPORT_FAILED',
        `a batch of ${n} gave ${OUTPUT_NAME} ${out?.type ?? 'none'} [${dims ?? ''}], expected float32 [${n},${FOOD11_CLASSES.length}]`,
      );
    }
    if (!(out.data as Float32Array).every(Number.isFinite)) {
      throw new FoodModelError('IMPORT_FAILED', `the model's logits are not finite`);
    }
  } finally {
    await session.release();
  }
}

/** Imports a model (see the module comment). The repository's previous model is replaced only once everything checked. */
export async function importModel(options: ImportOptions): Promise<ImportResult> {
  const log = options.log ?? (() => {});
  const repoRoot = options.repoRoot ?? REPO_ROOT;
  const python = options.python ?? importPython();
  const source = options.source;
  if (!existsSync(source)) throw new FoodModelError('IMPORT_FAILED', `no file ${source}`);
  const { modelFile, provenanceFile, cardFile } = importPaths(repoRoot);
  ensureImportPython(python, log);

  const versionDir = join(modelFile, '..');
  mkdirSync(versionDir, { recursive: true });
  const work = mkdtempSync(join(versionDir, '.import-'));
  try {
    const tmpModel = join(work, 'model.onnx');
    const infoFile = join(work, 'info.json');
    log(`converting ${source} with ${python} (torch, torchvision, onnx)`);
    runImportScript(['export', source, tmpModel, infoFile], python);
    const converter = JSON.parse(readFileSync(infoFile, 'utf8')) as Record<string, unknown>;
    log(`checking the contract in onnxruntime-node`);
    await checkContract(tmpModel);

    const format = converter.format === 'onnx' ? 'onnx' : 'pytorch-state-dict';
    const modelSha256 = fileSha256(tmpModel);
    const provenance: ModelProvenance = {
      version: 1,
      origin: 'imported',
      source: { file: basename(source), sha256: fileSha256(source), format },
      modelSha256,
      converter,
    };
    renameSync(tmpModel, modelFile);
    writeProvenance(provenanceFile, provenance);
    const configs = dropOodOutputs(repoRoot);
    const card = importedModelCard({ modelFile, modelSha256, repoRoot, source: provenance.source });
    writeModelCard(card, cardFile);
    return {
      modelFile,
      provenanceFile,
      cardFile,
      provenance,
      card,
      configs,
      oodDisabled: IMPORTED_OOD_REASON,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
