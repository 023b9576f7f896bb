import { readFileSync } from 'node:fs';
import { decodeImage, resizeRgb } from '@gourmetgram/image-preprocess';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import * as tfl from '@tensorflow/tfjs-layers';
import { OnnxGraphBuilder } from '@tritonserver-ts/onnx-builder';
import * as ort from 'onnxruntime-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { convertLayersModel } from '../src/convert/keras-to-onnx.js';
import type { TfjsLayersModelArtifacts } from '../src/convert/tfjs-artifacts.js';
import { loadNsfwjsMobileNetV2 } from '../src/convert/tfjs-artifacts.js';
import { FEATURE_LAYER } from '../src/graph.js';
import { servingPreprocessConfig } from '../src/preprocessing.js';
import { samplePhotos } from './fixtures.js';

/** The whole nsfwjs model as ONNX: `rgb` (NCHW, 0..1) → pooled features and the 5 NSFW probabilities. */
function buildParityModel(model: TfjsLayersModelArtifacts): Uint8Array {
  const g = new OnnxGraphBuilder({ name: 'nsfwjs_parity' });
  g.addInput('rgb', 'FLOAT', ['batch', 3, 224, 224]);
  const out = convertLayersModel(g, model, { inputTensor: 'rgb', outputLayers: [FEATURE_LAYER, 'dense_3'] });
  g.addNode('Identity', [out.get(FEATURE_LAYER)?.name ?? ''], ['features']);
  g.addNode('Identity', [out.get('dense_3')?.name ?? ''], ['probs']);
  g.addOutput('features', 'FLOAT', ['batch', 1280]);
  g.addOutput('probs', 'FLOAT', ['batch', 5]);
  return g.toBytes();
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs((a[i] ?? NaN) - (b[i] ?? NaN)));
  return m;
}

describe('converter parity with TF.js (CPU backend) on real photos', () => {
  const photos = samplePhotos(3);
  let model: TfjsLayersModelArtifacts;
  let nhwc: Float32Array;
  let nchw: Float32Array;

  beforeAll(async () => {
    await tf.setBackend('cpu');
    model = loadNsfwjsMobileNetV2();
    const n = photos.length;
    const px = 224 * 224;
    nhwc = new Float32Array(n * px * 3);
    nchw = new Float32Array(n * px * 3);
    const preprocess = servingPreprocessConfig();
    for (let b = 0; b < n; b++) {
      // The serving resize (RGB bytes before normalisation): the backbone's own input is RGB/255.
      const rgb = await resizeRgb(await decodeImage(readFileSync(photos[b] as string)), preprocess);
      for (let i = 0; i < px; i++) {
        for (let c = 0; c < 3; c++) {
          const v = (rgb[i * 3 + c] ?? 0) / 255;
          nhwc[b * px * 3 + i * 3 + c] = v;
          nchw[b * px * 3 + c * px + i] = v;
        }
      }
    }
  });

  it('matches features and NSFW probabilities within 1e-4', async () => {
    // TF.js loads the same topology and (quantised) weights through its own loader and dequantiser.
    const tfModel = await tfl.loadLayersModel({
      load: () =>
        Promise.resolve({
          modelTopology: model.modelTopology,
          weightSpecs: model.weightSpecs as tf.io.WeightsManifestEntry[],
          weightData: model.weightData.slice().buffer,
        }),
    });
    const featureModel = tfl.model({
      inputs: tfModel.inputs,
      outputs: [
        tfModel.getLayer(FEATURE_LAYER).output as tfl.SymbolicTensor,
        tfModel.outputs[0] as tfl.SymbolicTensor,
      ],
    });
    const x = tf.tensor4d(nhwc, [photos.length, 224, 224, 3]);
    const [tfFeatures, tfProbs] = featureModel.predict(x) as tf.Tensor[];
    const expectedFeatures = await (tfFeatures as tf.Tensor).data();
    const expectedProbs = await (tfProbs as tf.Tensor).data();

    const session = await ort.InferenceSession.create(buildParityModel(model));
    const result = await session.run({ rgb: new ort.Tensor('float32', nchw, [photos.length, 3, 224, 224]) });
    const features = result.features?.data as Float32Array;
    const probs = result.probs?.data as Float32Array;

    const featureDiff = maxAbsDiff(features, expectedFeatures);
    const probDiff = maxAbsDiff(probs, expectedProbs);
    console.log(
      `parity: max |Δ| features ${featureDiff.toExponential(2)}, probabilities ${probDiff.toExponential(2)}`,
    );
    // Sanity: the features are real activations, not all zeros.
    expect(Math.max(...expectedFeatures)).toBeGreaterThan(0.5);
    expect(featureDiff).toBeLessThanOrEqual(1e-4);
    expect(probDiff).toBeLessThanOrEqual(1e-4);
  }, 120_000);
});
