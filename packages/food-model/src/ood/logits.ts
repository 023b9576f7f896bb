/**
 * Logits and out-of-distribution scores of photos through the built classifier (`model.onnx` in onnxruntime-node), each photo
 * preprocessed exactly like serving (`preprocessPhoto`, the web app's code and config): the numbers
 * the gateway receives from Triton for the same upload.
 */
import * as ort from 'onnxruntime-node';
import { FOOD11_CLASSES, INPUT_NAME, INPUT_SIZE, OOD_OUTPUT_NAME, OUTPUT_NAME } from '../contract.js';
import type { PreprocessConfig } from '../preprocessing.js';
import { IMAGE_FLOATS, preprocessPhoto } from '../preprocessing.js';

/** What the classifier answers for a list of photos. */
export interface ModelAnswers {
  /** Row-major `[n, 11]` logits, one row per path. */
  logits: Float32Array;
  /** `ood_score` per path (`[n]`), or `null` when the model has no such output. */
  oodScores: Float32Array | null;
}

/** Runs the classifier over photos (preprocessed like serving), in batches. */
export async function runClassifier(
  model: Uint8Array | string,
  paths: readonly string[],
  preprocess: PreprocessConfig,
  options: { batchSize?: number; threads?: number } = {},
): Promise<ModelAnswers> {
  const batchSize = options.batchSize ?? 8;
  const classes = FOOD11_CLASSES.length;
  const sessionOptions: ort.InferenceSession.SessionOptions = {
    intraOpNumThreads: options.threads ?? 2,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  };
  const session =
    typeof model === 'string'
      ? await ort.InferenceSession.create(model, sessionOptions)
      : await ort.InferenceSession.create(model, sessionOptions);
  try {
    const out = new Float32Array(paths.length * classes);
    const hasOod = session.outputNames.includes(OOD_OUTPUT_NAME);
    const ood = hasOod ? new Float32Array(paths.length) : null;
    for (let start = 0; start < paths.length; start += batchSize) {
      const slice = paths.slice(start, start + batchSize);
      const batch = new Float32Array(slice.length * IMAGE_FLOATS);
      await Promise.all(
        slice.map((p, i) =>
          preprocessPhoto(p, preprocess, batch.subarray(i * IMAGE_FLOATS, (i + 1) * IMAGE_FLOATS)),
        ),
      );
      const result = await session.run({
        [INPUT_NAME]: new ort.Tensor('float32', batch, [slice.length, 3, INPUT_SIZE, INPUT_SIZE]),
      });
      out.set(result[OUTPUT_NAME]?.data as Float32Array, start * classes);
      if (ood) ood.set(result[OOD_OUTPUT_NAME]?.data as Float32Array, start);
    }
    return { logits: out, oodScores: ood };
  } finally {
    await session.release();
  }
}

/** The logits of an all-zero input (the mean-colour image): a fingerprint of the model's weights. */
export async function zeroInputLogits(model: Uint8Array | string): Promise<number[]> {
  const session =
    typeof model === 'string'
      ? await ort.InferenceSession.create(model)
      : await ort.InferenceSession.create(model);
  try {
    const result = await session.run({
      [INPUT_NAME]: new ort.Tensor('float32', new Float32Array(IMAGE_FLOATS), [1, 3, INPUT_SIZE, INPUT_SIZE]),
    });
    return Array.from(result[OUTPUT_NAME]?.data as Float32Array);
  } finally {
    await session.release();
  }
}

/** Row `i` of a row-major `[n, k]` matrix. */
export function row(matrix: Float32Array, i: number, k: number = FOOD11_CLASSES.length): Float32Array {
  return matrix.subarray(i * k, (i + 1) * k);
}
