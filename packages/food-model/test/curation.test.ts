import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { datasetSplit } from '../src/build.js';
import { FOOD11_CLASSES } from '../src/contract.js';
import { CURATION, curationTable, listPhotos } from '../src/dataset.js';
import { heldOutMask } from '../src/train/splits.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('the photo review (CURATION)', () => {
  const photos = listPhotos();
  const { labelled, labels, heldOut } = datasetSplit(photos);

  it('is the table of the README, word for word', () => {
    const start = readme.indexOf(
      '<!-- prettier-ignore-start -->\n',
      readme.indexOf('<!-- curation-table:start -->'),
    );
    const end = readme.indexOf('\n<!-- prettier-ignore-end -->', start);
    expect(start).toBeGreaterThan(0);
    expect(readme.slice(start + '<!-- prettier-ignore-start -->\n'.length, end)).toBe(curationTable());
  });

  it('names every code once, and only codes of photos that exist and that a group would train', () => {
    const all = CURATION.flatMap((e) => e.codes);
    expect(new Set(all).size).toBe(all.length);
    const byCode = new Map(photos.map((p) => [p.code, p]));
    for (const code of all) expect(byCode.get(code)?.groupLabel, code).not.toBeNull();
    for (const e of CURATION) expect(e.action === 'relabel', e.reason).toBe(e.label !== undefined);
  });

  it('is what training uses: excluded codes are not trained on, relabelled ones carry their new class', () => {
    const trained = new Map(labelled.map((p, i) => [p.code, FOOD11_CLASSES[labels[i] as number]]));
    for (const e of CURATION) {
      for (const code of e.codes) {
        if (e.action === 'exclude') expect(trained.has(code), code).toBe(false);
        else expect(trained.get(code), code).toBe(e.label);
      }
    }
    // Everything else keeps its group's class.
    const curated = new Set(CURATION.flatMap((e) => e.codes));
    for (const p of labelled) if (!curated.has(p.code)) expect(p.label).toBe(p.groupLabel);
  });

  it('leaves the held-out split where it was: every kept photo keeps its assignment', () => {
    const grouped = photos.filter((p) => p.groupLabel !== null);
    const before = heldOutMask(
      grouped.map((p) => FOOD11_CLASSES.indexOf(p.groupLabel as (typeof FOOD11_CLASSES)[number])),
      5,
      2,
    );
    const wasHeldOut = new Map(grouped.map((p, i) => [p.code, before[i]]));
    labelled.forEach((p, i) => expect(heldOut[i], p.code).toBe(wasHeldOut.get(p.code)));
    expect(before.filter(Boolean)).toHaveLength(89); // the split the 91.0 % was measured on
  });
});
