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

/**
 * Largest difference allowed between the served model's blank-image logits and the calibration's.
 * Triton prints them with 6 decimals and the CPU build reproduces them to that; the margin leaves room
 * for reduced precision (configs/gpu.pbtxt runs TensorRT FP16; not measured here), while a head
 * trained even slightly differently moves them more (measured: L2 0.02 instead of 0.01, 0.24; 150
 * instead of 200 iterations, 0.11).
 */
export const FINGERPRINT_TOLERANCE = 0.05;

/**
 * Whether the calibration applies to the served model: it declares the calibrated output and its
 * logits for the blank image match the calibrated model's (so a model rebuilt with other weights, or
 * a user's own model.onnx, gets no threshold that was not chosen for it).
 */
export function oodApplies(model: {
  path: ModelInfo['path'];
  oodOutput?: string | undefined;
  zeroInputLogits?: readonly number[] | undefined;
}): boolean {
  if (model.path !== 'tensor' || model.oodOutput !== OOD_CALIBRATION.output) return false;
  const served = model.zeroInputLogits;
  const expected = OOD_CALIBRATION.zeroInputLogits;
  return (
    served !== undefined &&
    served.length === expected.length &&
    served.every((v, i) => Math.abs(v - (expected[i] ?? NaN)) <= FINGERPRINT_TOLERANCE)
  );
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
