/**
 * `@gourmetgram/food-model`: builds the demo Food-11 ONNX model offline (nsfwjs MobileNetV2 converted
 * from TF.js to ONNX, plus a softmax-regression head trained on real food photos).
 *
 * @packageDocumentation
 */
export * from './contract.js';
export * from './errors.js';
export * from './preprocessing.js';
export * from './pbtxt.js';
export * from './packages.js';
export * from './graph.js';
export * from './dataset.js';
export * from './convert/tfjs-artifacts.js';
export * from './convert/keras-to-onnx.js';
export * from './features.js';
export * from './build.js';
export * from './ensure.js';
export * from './paths.js';
export * from './train/softmax.js';
export * from './train/splits.js';
export * from './train/evaluate.js';
export * from './ood/score.js';
export * from './ood/nonfood.js';
export * from './ood/logits.js';
export * from './ood/calibrate.js';
export * from './model-card.js';
export * from './import/provenance.js';
export * from './import/configs.js';
export * from './import/python.js';
export * from './import/import-model.js';
