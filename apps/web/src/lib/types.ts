/** Shapes shared by the API and the UI (isomorphic: no server imports). */

export interface ClassProbability {
  /** Class index in the model's output; -1 when the model answers only a label (python path). */
  index: number;
  label: string;
  probability: number;
}

/**
 * How unlike the food the model was trained on the upload is (beyond Triton and the seed: computed
 * from the model's `ood_score` output and the threshold calibrated in packages/food-model).
 */
export interface OutOfDistribution {
  /** The model's `ood_score`: cosine distance of the image's features to the nearest training photo's. */
  score: number;
  /** Calibrated on held-out food photos (95 % kept) and clearly-not-food images. */
  threshold: number;
  /** `score > threshold`: the photo does not look like the food the model knows. */
  flagged: boolean;
  /** The score's method, as the calibration names it. */
  method: string;
}

export interface Prediction {
  requestId: string;
  label: string;
  probability: number;
  /** Every class with its probability, most likely first (the python path knows only the top one). */
  top: ClassProbability[];
  model: { name: string; version: string; backend: string; path: 'tensor' | 'python' };
  image: { format: string; width: number; height: number };
  /** Milliseconds. */
  timings: { decode: number; preprocess: number; infer: number; postprocess: number; total: number };
  /**
   * `null` when the served model has no calibrated out-of-distribution output: the Python-backend
   * path (it answers only a label and a probability), a model without `ood_score`, or a model other
   * than the one calibrated (its logits for a blank image differ from the calibration's).
   */
  outOfDistribution: OutOfDistribution | null;
  createdAt: string;
}

export interface ApiError {
  error: { code: string; message: string; requestId?: string };
}

export interface Health {
  app: 'ok';
  server: { url: string; live: boolean; ready: boolean; error?: string };
  model: { name: string; ready: boolean; error?: string };
  ok: boolean;
}

export interface FeedbackEvent {
  kind: 'flag' | 'correction';
  correctLabel?: string;
  comment?: string;
  at: string;
}

export interface FeedbackRecord {
  predictionId: string;
  prediction?: Omit<Prediction, 'top'> & { top: ClassProbability[] };
  upload?: { key: string; contentType: string; bytes: number };
  /** The upload's object in the original GourmetGram production layout (S3 storage only). */
  production?: { bucket: string; key: string; contentType: string };
  events: FeedbackEvent[];
}

export interface DurationStat {
  count: number;
  ms: number;
}

export interface ModelStats {
  name: string;
  version: string;
  inferenceCount: number;
  executionCount: number;
  lastInference: number;
  success: DurationStat;
  fail: DurationStat;
  queue: DurationStat;
  computeInput: DurationStat;
  computeInfer: DurationStat;
  computeOutput: DurationStat;
  batches: { batchSize: number; count: number; computeInferMs: number }[];
  at: string;
}
