import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureDecision } from '../src/ensure.js';

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
});
