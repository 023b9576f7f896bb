/**
 * The provenance file of an imported model (`1/model.provenance.json` beside `model.onnx`): it marks
 * the model as imported by `model:import`, so `model:ensure` never builds the demo model over it.
 *
 * @packageDocumentation
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

/** What `model:import` records beside the model it wrote. */
export interface ModelProvenance {
  /** Format version of this file. */
  version: 1;
  /** Always `imported`: the model was trained elsewhere, not built by this package. */
  origin: 'imported';
  /** The file it was imported from: its base name, sha256 and format. */
  source: { file: string; sha256: string; format: 'pytorch-state-dict' | 'onnx' };
  /** sha256 of the `model.onnx` written. */
  modelSha256: string;
  /** What the converter did (key layout, renamed tensors, torch/onnx versions, opset). */
  converter: Record<string, unknown>;
}

/** sha256 (hex) of a file's bytes. */
export function fileSha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** Reads a provenance file; `undefined` when there is none or it is not one. */
export function readProvenance(file: string): ModelProvenance | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as Partial<ModelProvenance>;
    return value.origin === 'imported' && typeof value.modelSha256 === 'string'
      ? (value as ModelProvenance)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Writes a provenance file atomically. */
export function writeProvenance(file: string, provenance: ModelProvenance): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(provenance, null, 2)}\n`);
  renameSync(tmp, file);
}
