import { OnnxGraphBuilder } from '@tritonserver-ts/onnx-builder';
import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { convertLayersModel, samePadding } from '../src/convert/keras-to-onnx.js';
import { dequantizeWeights, loadNsfwjsMobileNetV2, parseLayersModel } from '../src/convert/tfjs-artifacts.js';
import { FoodModelError } from '../src/errors.js';

/** A tiny hand-written Keras-layers model: input [2,2,1] → Dense after Flatten, float32 weights. */
function tinyModel(extraLayer?: { class_name: string; config: Record<string, unknown> }) {
  const layers: unknown[] = [
    {
      name: 'in',
      class_name: 'InputLayer',
      config: { batch_input_shape: [null, 2, 2, 1] },
      inbound_nodes: [],
    },
    {
      name: 'flat',
      class_name: 'Flatten',
      config: { data_format: 'channels_last' },
      inbound_nodes: [[['in', 0, 0, {}]]],
    },
  ];
  let last = 'flat';
  if (extraLayer) {
    layers.push({ name: 'extra', ...extraLayer, inbound_nodes: [[['flat', 0, 0, {}]]] });
    last = 'extra';
  }
  layers.push({
    name: 'dense',
    class_name: 'Dense',
    config: { units: 1, activation: 'linear', use_bias: true },
    inbound_nodes: [[[last, 0, 0, {}]]],
  });
  const kernel = Float32Array.from([1, 10, 100, 1000]);
  const bias = Float32Array.from([0.5]);
  const data = new Uint8Array(20);
  data.set(new Uint8Array(kernel.buffer), 0);
  data.set(new Uint8Array(bias.buffer), 16);
  return parseLayersModel(
    {
      modelTopology: {
        model_config: { class_name: 'Model', config: { layers, output_layers: [['dense', 0, 0]] } },
      },
      weightsManifest: [
        {
          paths: ['x'],
          weights: [
            { name: 'dense/kernel', shape: [4, 1], dtype: 'float32' },
            { name: 'dense/bias', shape: [1], dtype: 'float32' },
          ],
        },
      ],
    },
    data,
  );
}

describe('Keras-layers → ONNX converter', () => {
  it('dequantises uint8 weights like TF.js (q * scale + min)', () => {
    const model = loadNsfwjsMobileNetV2();
    const spec = model.weightSpecs[0];
    expect(spec?.quantization?.dtype).toBe('uint8');
    const w = dequantizeWeights(model).get(spec?.name ?? '');
    const q0 = model.weightData[0] ?? 0;
    expect(w?.data[0]).toBe(
      Math.fround(q0 * (spec?.quantization?.scale ?? 0) + (spec?.quantization?.min ?? 0)),
    );
    expect(w?.shape).toEqual(spec?.shape);
  });

  it('keeps Keras (NHWC) flatten order when the spatial size is not 1x1', async () => {
    const g = new OnnxGraphBuilder({ name: 'tiny' });
    g.addInput('x', 'FLOAT', [1, 1, 2, 2]);
    const out = convertLayersModel(g, tinyModel(), { inputTensor: 'x' });
    g.addOutput(out.get('dense')?.name ?? '', 'FLOAT', [1, 1]);
    const session = await ort.InferenceSession.create(g.toBytes());
    const r = await session.run({
      x: new ort.Tensor('float32', Float32Array.from([1, 2, 3, 4]), [1, 1, 2, 2]),
    });
    expect(Array.from(r.dense?.data as Float32Array)).toEqual([4321.5]);
  });

  it('fails loudly on an unknown layer class', () => {
    const g = new OnnxGraphBuilder({ name: 'tiny' });
    g.addInput('x', 'FLOAT', [1, 1, 2, 2]);
    const model = tinyModel({ class_name: 'LSTM', config: {} });
    expect(() => convertLayersModel(g, model, { inputTensor: 'x' })).toThrow(FoodModelError);
    expect(() => convertLayersModel(g, model, { inputTensor: 'x' })).toThrow(/UNSUPPORTED_LAYER.*LSTM/);
  });

  it('fails loudly on an unsupported activation', () => {
    const model = tinyModel();
    const dense = model.layers.find((l) => l.name === 'dense');
    if (dense) dense.config.activation = 'selu';
    const g = new OnnxGraphBuilder({ name: 'tiny' });
    g.addInput('x', 'FLOAT', [1, 1, 2, 2]);
    try {
      convertLayersModel(g, model, { inputTensor: 'x' });
      expect.unreachable();
    } catch (e) {
      expect((e as FoodModelError).code).toBe('UNSUPPORTED_CONFIG');
    }
  });

  it('computes TF "same" padding with the extra pixel at the end', () => {
    expect(samePadding(112, 3, 1, 1)).toEqual([1, 1]);
    expect(samePadding(112, 3, 2, 1)).toEqual([0, 1]);
    expect(samePadding(7, 1, 1, 1)).toEqual([0, 0]);
  });

  it('converts every layer class of nsfwjs MobileNetV2', () => {
    const model = loadNsfwjsMobileNetV2();
    const classes = new Set(model.layers.map((l) => l.class_name));
    expect([...classes].sort()).toEqual(
      [
        'Add',
        'AveragePooling2D',
        'BatchNormalization',
        'Conv2D',
        'DepthwiseConv2D',
        'Dense',
        'Dropout',
        'Flatten',
        'InputLayer',
        'ReLU',
        'ZeroPadding2D',
      ].sort(),
    );
    const g = new OnnxGraphBuilder({ name: 'full' });
    g.addInput('rgb', 'FLOAT', ['batch', 3, 224, 224]);
    const out = convertLayersModel(g, model, { inputTensor: 'rgb' });
    expect(out.get('dense_3')?.shape).toEqual([5]);
  });
});
