import 'server-only';
import calibration from '@gourmetgram/food-model/ood-calibration.json';
import type { OutOfDistribution } from '../lib/types';
import type { ModelInfo } from './triton';

/**
 * The out-of-distribution calibration of the demo model (`npm run calibrate-ood -w
 * @gourmetgram/food-model` writes it): the threshold on the model's `ood_score` output, chosen so
 * that 95 % of the build's held-out food photos stay unflagged, and the model it was computed on.
 */
export const OOD_CALIBRATION = {
  method: calibration.method,
  output: calibration.output,
  threshold: calibration.threshold,
  zeroInputLogits: calibration.model.zeroInputLogits,
} as const;

const calibratedPreprocessing = JSON.parse(calibration.model.preprocessing) as {
  mean: [number, number, number];
};

/**
 * The photo a model that takes encoded images (the Python-backend and ensemble paths) is
 * fingerprinted with: one flat colour, the nearest 8-bit colour to the calibrated model's
 * normalisation mean, so that its input tensor is nearly the all-zero one the calibration recorded
 * logits for (`[124, 116, 104]` for ImageNet's mean).
 */
export const MEAN_COLOUR = calibratedPreprocessing.mean.map((m) => Math.round(m * 255)) as [
  number,
  number,
  number,
];

/**
 * Largest difference allowed between the served model's blank-image logits and the calibration's.
 * Triton prints them with 6 decimals and the CPU build reproduces them to that; the margin leaves room
 * for reduced precision (configs/gpu.pbtxt runs TensorRT FP16; not measured here), while a head
 * trained even slightly differently moves them more (measured: L2 0.02 instead of 0.01, 0.24; 150
 * instead of 200 iterations, 0.11).
 */
export const FINGERPRINT_TOLERANCE = 0.05;

/**
 * The same margin for the mean-colour photo, plus what its 8-bit rounding costs: measured on the
 * calibrated model (onnxruntime), its logits differ from the all-zero input's by at most 0.037.
 */
export const PHOTO_FINGERPRINT_TOLERANCE = FINGERPRINT_TOLERANCE + 0.04;

/**
 * What a served model answers for the fingerprint input: its logits for the all-zero tensor (tensor
 * path), or for the {@link MEAN_COLOUR} photo (encoded-image paths; from probabilities, the logits
 * up to a constant: their logarithms). Compared up to a constant shift, which softmax ignores.
 */
export interface Fingerprint {
  input: 'zero-tensor' | 'mean-colour-photo';
  logits: readonly number[];
}

function centred(values: readonly number[]): number[] {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return values.map((v) => v - mean);
}

/**
 * Whether the calibration applies to the served model, on any path: it declares the calibrated
 * output (`ood_score`; `OOD_SCORE` on the Python-backend path) and its fingerprint matches the
 * calibrated model's logits for the blank image (so a model rebuilt with other weights, or a user's
 * own model.onnx, gets no threshold that was not chosen for it).
 */
export function oodApplies(model: Pick<ModelInfo, 'oodOutput' | 'fingerprint'>): boolean {
  if (model.oodOutput?.toLowerCase() !== OOD_CALIBRATION.output) return false;
  const served = model.fingerprint;
  const expected = OOD_CALIBRATION.zeroInputLogits;
  if (served === undefined || served.logits.length !== expected.length) return false;
  if (!served.logits.every(Number.isFinite)) return false;
  const tolerance = served.input === 'zero-tensor' ? FINGERPRINT_TOLERANCE : PHOTO_FINGERPRINT_TOLERANCE;
  const a = centred(served.logits);
  const b = centred(expected);
  return a.every((v, i) => Math.abs(v - (b[i] ?? NaN)) <= tolerance);
}

/** The API's `outOfDistribution` for one score. */
export function outOfDistribution(score: number): OutOfDistribution {
  return {
    score,
    threshold: OOD_CALIBRATION.threshold,
    flagged: score > OOD_CALIBRATION.threshold,
    method: OOD_CALIBRATION.method,
  };
}
