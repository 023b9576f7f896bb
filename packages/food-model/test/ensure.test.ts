import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureDecision } from '../src/ensure.js';
import { writeProvenance } from '../src/import/provenance.js';

describe('model:ensure decision', () => {
  const dir = mkdtempSync(join(tmpdir(), 'food-ensure-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const model = join(dir, 'model.onnx');
  const report = join(dir, 'report.json');
  const bytes = Buffer.from('pretend model bytes');
  const record = (inputsHash: string): void =>
    writeFileSync(
      report,
      JSON.stringify({ inputsHash, model: { sha256: createHash('sha256').update(bytes).digest('hex') } }),
    );

  it('builds when the model is missing, is a no-op when up to date, rebuilds when inputs change', () => {
    expect(ensureDecision(model, report, 'h1')).toEqual({ action: 'build', reason: 'model file is missing' });
    writeFileSync(model, bytes);
    record('h1');
    expect(ensureDecision(model, report, 'h1')).toEqual({ action: 'up-to-date' });
    expect(ensureDecision(model, report, 'h2')).toEqual({ action: 'build', reason: 'build inputs changed' });
  });

  it('never overwrites a model.onnx it did not build (a user-supplied model)', () => {
    writeFileSync(model, Buffer.from('my own model'));
    record('h1');
    expect(ensureDecision(model, report, 'h1').action).toBe('keep-foreign');
    rmSync(report);
    expect(ensureDecision(model, report, 'h1').action).toBe('keep-foreign');
  });

  it('never builds over an imported model (model.provenance.json beside it), not even a missing one', () => {
    const provenance = join(dir, 'model.provenance.json');
    // The demo build's bytes and report, so that only the provenance file stands in the way.
    writeFileSync(model, bytes);
    record('h1');
    writeProvenance(provenance, {
      version: 1,
      origin: 'imported',
      source: { file: 'food11.pth', sha256: 'a'.repeat(64), format: 'pytorch-state-dict' },
      modelSha256: createHash('sha256').update(bytes).digest('hex'),
      converter: {},
    });
    const kept = ensureDecision(model, report, 'h2', provenance);
    expect(kept.action).toBe('keep-foreign');
    expect(kept.action === 'keep-foreign' && kept.reason).toContain('imported from food11.pth');
    rmSync(model);
    const missing = ensureDecision(model, report, 'h2', provenance);
    expect(missing.action).toBe('keep-foreign');
    expect(missing.action === 'keep-foreign' && missing.reason).toContain('run model:import again');
    // Without the provenance file the same situation builds.
    rmSync(provenance);
    expect(ensureDecision(model, report, 'h2', provenance).action).toBe('build');
  });
});
