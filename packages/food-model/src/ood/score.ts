/**
 * Out-of-distribution scores computed from what the classifier already answers (its logits), the
 * threshold rule and the figures that describe a threshold. Higher score = less like the training food.
 */

/** The scores compared by the calibration; `energy` is the one served. */
export type OodMethod = 'energy' | 'max-softmax' | 'max-logit';

/** `log Σ exp(x_i)`, computed stably in float64. */
export function logSumExp(logits: ArrayLike<number>): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i] as number);
  if (!Number.isFinite(max)) return max;
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp((logits[i] as number) - max);
  return max + Math.log(sum);
}

/**
 * The free energy of the logits, `−log Σ exp(logit_i)` (Liu et al., 2020, "Energy-based
 * Out-of-distribution Detection"): low (very negative) when some class fits the image strongly,
 * higher when no class does.
 */
export function energyScore(logits: ArrayLike<number>): number {
  return -logSumExp(logits);
}

/** `−max softmax probability` (the baseline of Hendrycks & Gimpel, 2017). */
export function maxSoftmaxScore(logits: ArrayLike<number>): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i] as number);
  return -Math.exp(max - logSumExp(logits));
}

/** `−max logit`. */
export function maxLogitScore(logits: ArrayLike<number>): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i] as number);
  return -max;
}

/** The score of `method` for one row of logits. */
export function oodScore(method: OodMethod, logits: ArrayLike<number>): number {
  switch (method) {
    case 'energy':
      return energyScore(logits);
    case 'max-softmax':
      return maxSoftmaxScore(logits);
    case 'max-logit':
      return maxLogitScore(logits);
  }
}

/**
 * The threshold that keeps `keep` of the in-distribution scores: with `k = ceil(keep · n)` of the
 * sorted scores to keep, halfway between the k-th and the (k+1)-th (the largest kept and the smallest
 * flagged), so floating-point noise on either photo (another batch size, another host) cannot move it
 * across. An image is flagged when its score is **strictly greater** than the threshold.
 */
export function thresholdKeeping(inDistribution: readonly number[], keep: number): number {
  if (inDistribution.length === 0) throw new RangeError('no in-distribution scores');
  if (!(keep > 0 && keep <= 1)) throw new RangeError(`keep must be in (0, 1], got ${keep}`);
  const sorted = [...inDistribution].sort((a, b) => a - b);
  const k = Math.ceil(keep * sorted.length);
  const kept = sorted[k - 1] as number;
  return k < sorted.length ? (kept + (sorted[k] as number)) / 2 : kept;
}

/** Whether a score is flagged as out of distribution at `threshold`. */
export function isFlagged(score: number, threshold: number): boolean {
  return score > threshold;
}

/** A count and its share. */
export interface Rate {
  count: number;
  of: number;
  rate: number;
}

function rate(count: number, of: number): Rate {
  return { count, of, rate: of === 0 ? 0 : count / of };
}

/**
 * False-positive rate (in-distribution images flagged) and false-negative rate (out-of-distribution
 * images passed) at `threshold`.
 */
export function errorRates(
  inDistribution: readonly number[],
  outOfDistribution: readonly number[],
  threshold: number,
): { falsePositive: Rate; falseNegative: Rate } {
  return {
    falsePositive: rate(inDistribution.filter((s) => isFlagged(s, threshold)).length, inDistribution.length),
    falseNegative: rate(
      outOfDistribution.filter((s) => !isFlagged(s, threshold)).length,
      outOfDistribution.length,
    ),
  };
}

/**
 * Area under the ROC curve of the score as an in/out separator: the probability that a random
 * out-of-distribution image scores higher than a random in-distribution one (ties count half).
 */
export function auroc(inDistribution: readonly number[], outOfDistribution: readonly number[]): number {
  let wins = 0;
  for (const o of outOfDistribution) for (const i of inDistribution) wins += o > i ? 1 : o === i ? 0.5 : 0;
  return wins / (inDistribution.length * outOfDistribution.length);
}
