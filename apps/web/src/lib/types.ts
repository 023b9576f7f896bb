/** Shapes shared by the API and the UI (isomorphic: no server imports). */

/**
 * How the gateway reaches the model, decided from its config: `tensor` (the gateway preprocesses and
 * sends an FP32 tensor), `python` (the original GourmetGram contract: the upload as base64 text to a
 * Python-backend model), `ensemble` (the upload's raw bytes to a server-side pipeline answering logits).
 */
export type InferencePath = 'tensor' | 'python' | 'ensemble';

/** The kinds of verdict: what the page says in words, decided on the server from the model's outputs. */
export type VerdictKind = 'likely' | 'unsure' | 'unfamiliar';

/** Which rule decided a verdict (stable; for the details, the logs and tests). */
export type VerdictReason =
  /** likely: a clear winner, and the photo is close to the training photos. */
  | 'confident'
  /** likely: a clear winner; the model gives no out-of-distribution signal, so that was not checked. */
  | 'confident-unchecked'
  /** unsure: no class has the probability a "likely" needs. */
  | 'no-clear-winner'
  /** unsure: a clear winner, but the photo is further from the training photos than most food the model knows. */
  | 'far-from-training'
  /** unfamiliar: the out-of-distribution score is over the calibrated threshold. */
  | 'unlike-training';

/**
 * The one thing the page says about a prediction (beyond Triton and the seed). Computed by the gateway
 * from the probabilities and the out-of-distribution signal, the same way on every inference path.
 */
export interface Verdict {
  kind: VerdictKind;
  reason: VerdictReason;
  /** `likely`: the class; otherwise `null` (no label is claimed). */
  label: string | null;
  /** What to show: the top class for `likely`, the three most likely for `unsure`, none for `unfamiliar`. */
  candidates: ClassProbability[];
  /** One short sentence for people, e.g. "Likely Seafood". */
  headline: string;
  /** Why, in plain words (no scores or thresholds). */
  explanation: string;
}

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
  /**
   * Every class with its probability, most likely first (a Python-backend model with only the
   * original two outputs answers the top one alone).
   */
  top: ClassProbability[];
  /** What the page says: likely X, not sure, or not like the food the model knows. */
  verdict: Verdict;
  model: { name: string; version: string; backend: string; path: InferencePath };
  image: { format: string; width: number; height: number };
  /** Milliseconds. */
  timings: { decode: number; preprocess: number; infer: number; postprocess: number; total: number };
  /**
   * `null` when the served model has no calibrated out-of-distribution output: a model without
   * `ood_score` (`OOD_SCORE` on the Python-backend path), or a model other than the one calibrated
   * (its answer for the blank, mean-colour image differs from the calibration's).
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

/** `confirm`: the person says the answer looks right; `flag`: wrong or worth a look; `correction`: the right class. */
export type FeedbackKind = 'confirm' | 'flag' | 'correction';

export interface FeedbackEvent {
  kind: FeedbackKind;
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
  /** Requests answered from the server's response cache (zero unless the model enables it). */
  cacheHit: DurationStat;
  /** Requests the response cache did not have (lookup and insertion time). */
  cacheMiss: DurationStat;
  batches: { batchSize: number; count: number; computeInferMs: number }[];
  at: string;
}
