/** Stable error codes raised by the food-model package. */
export type FoodModelErrorCode =
  | 'SOURCE_MODEL_INVALID'
  | 'UNSUPPORTED_LAYER'
  | 'UNSUPPORTED_CONFIG'
  | 'WEIGHT_MISSING'
  | 'DATASET_INVALID'
  | 'PREPROCESS_CONFIG_INVALID'
  | 'IMAGE_DECODE_FAILED'
  | 'TRAINING_FAILED'
  | 'NONFOOD_IMAGES_MISSING'
  | 'CALIBRATION_INVALID'
  | 'MODEL_CARD_STALE'
  | 'IMPORT_FAILED'
  | 'IMPORT_PYTHON_MISSING';

/** Error with a stable {@link FoodModelErrorCode}, thrown by the converter, the dataset loader and the build. */
export class FoodModelError extends Error {
  /** Stable machine-readable code. */
  readonly code: FoodModelErrorCode;

  constructor(code: FoodModelErrorCode, message: string, options?: { cause?: unknown }) {
    super(`${code}: ${message}`, options);
    this.name = 'FoodModelError';
    this.code = code;
  }
}
