/**
 * The verdict of a prediction: the one thing the page says about it, decided here from the model's
 * outputs before anything is drawn, by the same function on every inference path (tensor, Python
 * backend, ensemble), and returned in the API (`verdict`).
 *
 * - `unfamiliar`: the out-of-distribution score is over the calibrated threshold (95 % of held-out
 *   food photos stay under it): "This does not look like food the model knows"; no label is claimed.
 * - `likely`: the top class has at least {@link VERDICT_RULES}.likelyMinProbability and, when the
 *   model gives the signal, the photo is at least as close to the training photos as 90 % of the
 *   held-out food photos ({@link VERDICT_RULES}.familiarBelow).
 * - `unsure` otherwise: the three most likely classes are shown, none as the answer.
 *
 * @packageDocumentation
 */
import 'server-only';
import calibration from '@gourmetgram/food-model/ood-calibration.json';
import type { ClassProbability, OutOfDistribution, Verdict } from '../lib/types';

/**
 * The score that keeps the share `keep` of `scores` at or under it: with k = ⌈keep · n⌉, halfway
 * between the k-th and the (k+1)-th smallest (the calibration's own rule for its threshold).
 */
export function scoreKeeping(scores: readonly number[], keep: number): number {
  const sorted = [...scores].sort((a, b) => a - b);
  const k = Math.ceil(keep * sorted.length);
  const at = sorted[k - 1];
  if (at === undefined) throw new RangeError(`cannot keep ${keep} of ${sorted.length} scores`);
  const next = sorted[k];
  return next === undefined ? at : (at + next) / 2;
}

/** Share of held-out food photos close enough to the training photos for a `likely` verdict. */
const FAMILIAR_KEEP = 0.9;

/**
 * The verdict rules. `familiarBelow` is computed from the committed calibration's held-out food
 * scores (`ood-calibration.json`), like its threshold, with 90 % instead of 95 %: a photo scoring
 * between the two is food-like but further from the training photos than most held-out food, and
 * gets "not sure" however high its top probability.
 */
export const VERDICT_RULES = {
  /** The top class's probability a `likely` needs. */
  likelyMinProbability: 0.8,
  familiarKeep: FAMILIAR_KEEP,
  familiarBelow: scoreKeeping(Object.values(calibration.scores.heldOutFood), FAMILIAR_KEEP),
  /** Classes an `unsure` verdict shows. */
  unsureShown: 3,
} as const;

function list(labels: readonly string[]): string {
  if (labels.length <= 1) return labels[0] ?? '';
  return `${labels.slice(0, -1).join(', ')} or ${labels.at(-1)}`;
}

/**
 * The verdict of a prediction from its classes (most likely first) and its out-of-distribution
 * signal (`null` when the model gives none).
 */
export function verdictOf(top: readonly ClassProbability[], ood: OutOfDistribution | null): Verdict {
  const best = top[0];
  if (ood?.flagged) {
    return {
      kind: 'unfamiliar',
      reason: 'unlike-training',
      label: null,
      candidates: [],
      headline: 'This does not look like food the model knows',
      explanation:
        'The photo is unlike every photo the model was trained on, so any category it picked would be a guess. Try a photo of a single food, close up.',
    };
  }
  const shown = top.slice(0, VERDICT_RULES.unsureShown);
  if (best && best.probability >= VERDICT_RULES.likelyMinProbability) {
    if (ood === null) {
      return {
        kind: 'likely',
        reason: 'confident-unchecked',
        label: best.label,
        candidates: [best],
        headline: `Likely ${best.label}`,
        explanation:
          'The model clearly prefers this category. This model cannot tell whether a photo looks like the food it was trained on, so it may be confidently wrong on anything else.',
      };
    }
    if (ood.score > VERDICT_RULES.familiarBelow) {
      return {
        kind: 'unsure',
        reason: 'far-from-training',
        label: null,
        candidates: shown,
        headline: 'Not sure',
        explanation: `The model leans towards ${best.label}, but the photo is less like the food it was trained on than most, so this may be a guess.`,
      };
    }
    return {
      kind: 'likely',
      reason: 'confident',
      label: best.label,
      candidates: [best],
      headline: `Likely ${best.label}`,
      explanation:
        'The model clearly prefers this category, and the photo looks like the food it was trained on. It can still be wrong.',
    };
  }
  return {
    kind: 'unsure',
    reason: 'no-clear-winner',
    label: null,
    candidates: shown,
    headline: 'Not sure',
    explanation:
      shown.length > 1
        ? `Its best guesses are ${list(shown.map((c) => c.label))}, none clearly ahead.`
        : 'The model does not clearly prefer any category.',
  };
}
