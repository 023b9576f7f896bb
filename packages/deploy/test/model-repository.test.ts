// models_staging/food_classifier against the model it wraps (food_classifier_onnx): the same
// preprocessing, the same labels, a path to the same model.onnx.
import { join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exists, pbtxtField, pbtxtParameters, read } from '../src/repo.js';

const LABELS = [
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
];

const python = read('models_staging/food_classifier/config.pbtxt');
const pythonParams = pbtxtParameters(python);
const resolveFromModel = (path: string | undefined): string =>
  normalize(join('models_staging/food_classifier', path ?? 'missing'));

describe('models_staging/food_classifier', () => {
  it('is a Python-backend model with batching on, so requests are [N, 1]', () => {
    expect(pbtxtField(python, 'backend')).toBe('python');
    expect(Number(pbtxtField(python, 'max_batch_size'))).toBeGreaterThan(0);
    expect(exists('models_staging/food_classifier/1/model.py')).toBe(true);
  });

  for (const config of ['config.pbtxt', 'configs/gpu.pbtxt']) {
    it(`${config}: preprocesses with the same parameters as food_classifier_onnx/${config}`, () => {
      const pythonParams = pbtxtParameters(read(`models_staging/food_classifier/${config}`));
      const onnx = pbtxtParameters(read(`models_staging/food_classifier_onnx/${config}`));
      const preprocessing = (params: Record<string, string>): Record<string, string> =>
        Object.fromEntries(Object.entries(params).filter(([key]) => key.startsWith('preprocess_')));
      expect(Object.keys(preprocessing(onnx)).length).toBeGreaterThanOrEqual(6);
      expect(preprocessing(pythonParams)).toEqual(preprocessing(onnx));
    });
  }

  it("runs food_classifier_onnx's model.onnx and reads its labels, in the Food-11 class order", () => {
    const onnx = read('models_staging/food_classifier_onnx/config.pbtxt');
    expect(pbtxtField(onnx, 'backend')).toBe('onnxruntime');
    // Triton's onnxruntime backend loads <version>/model.onnx unless default_model_filename says otherwise.
    expect(pbtxtField(onnx, 'default_model_filename')).toBeUndefined();
    expect(resolveFromModel(pythonParams.onnx_model_path)).toBe(
      'models_staging/food_classifier_onnx/1/model.onnx',
    );
    expect(onnx).toMatch(/label_filename:\s*"labels.txt"/);
    expect(resolveFromModel(pythonParams.labels_path)).toBe('models_staging/food_classifier_onnx/labels.txt');
    const labels = read('models_staging/food_classifier_onnx/labels.txt').split('\n').filter(Boolean);
    expect(labels).toEqual(LABELS);
  });

  it('documents the softmax change and the model file location', () => {
    const readme = read('models_staging/food_classifier/README.md');
    expect(readme).toMatch(/sigmoid/);
    expect(readme).toMatch(/softmax/);
    expect(readme).toContain('onnx_model_path');
  });
});
