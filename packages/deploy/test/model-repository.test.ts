// models_staging/food_classifier against the model it calls by BLS (food_classifier_onnx): the same
// preprocessing, the same labels, that model's real tensor names, a batch that fits.
// Then food_preprocess and food_classifier_ensemble against the same model.
import { join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exists, pbtxtField, pbtxtParameters, read, trackedFiles } from '../src/repo.js';

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

/** The tensors of a config's top-level `input [ … ]` or `output [ … ]` list: name → dims. */
function tensors(config: string, list: 'input' | 'output'): Map<string, number[]> {
  const text = config.replace(/#[^\n]*/g, '');
  const start = new RegExp(`^${list}\\s*\\[`, 'm').exec(text);
  if (!start) return new Map();
  let depth = 0;
  let end = start.index;
  for (let i = start.index + start[0].length - 1; i < text.length; i++) {
    if (text[i] === '[') depth++;
    if (text[i] === ']' && --depth === 0) {
      end = i;
      break;
    }
  }
  const body = text.slice(start.index, end);
  const out = new Map<string, number[]>();
  for (const m of body.matchAll(/name\s*:\s*"([^"]+)"[^}]*?dims\s*:\s*\[([^\]]*)\]/g)) {
    out.set(
      m[1] ?? '',
      (m[2] ?? '').split(',').map((d) => Number(d.trim())),
    );
  }
  return out;
}

describe('models_staging/food_classifier', () => {
  it('is a Python-backend model with batching on, so requests are [N, 1]', () => {
    expect(pbtxtField(python, 'backend')).toBe('python');
    expect(Number(pbtxtField(python, 'max_batch_size'))).toBeGreaterThan(0);
    expect(exists('models_staging/food_classifier/1/model.py')).toBe(true);
  });

  for (const config of ['config.pbtxt', 'configs/gpu.pbtxt']) {
    it(`${config}: max_batch_size fits food_classifier_onnx/${config}'s (one execute() is one BLS request)`, () => {
      const pythonConfig = read(`models_staging/food_classifier/${config}`);
      const onnxConfig = read(`models_staging/food_classifier_onnx/${config}`);
      const pythonBatch = Number(pbtxtField(pythonConfig, 'max_batch_size'));
      const onnxBatch = Number(pbtxtField(onnxConfig, 'max_batch_size'));
      expect(pythonBatch).toBeGreaterThan(0);
      expect(pythonBatch).toBeLessThanOrEqual(onnxBatch);
      // And the Python model's instances are CPU ones: the GPU work is food_classifier_onnx's.
      const settings = pythonConfig.replace(/#[^\n]*/g, '');
      expect(settings).toMatch(/instance_group\s*\[\s*\{[^}]*kind:\s*KIND_CPU/);
      expect(settings).not.toMatch(/KIND_(GPU|AUTO)/);
    });

    it(`${config}: preprocesses with the same parameters as food_classifier_onnx/${config}`, () => {
      const pythonParams = pbtxtParameters(read(`models_staging/food_classifier/${config}`));
      const onnx = pbtxtParameters(read(`models_staging/food_classifier_onnx/${config}`));
      const preprocessing = (params: Record<string, string>): Record<string, string> =>
        Object.fromEntries(Object.entries(params).filter(([key]) => key.startsWith('preprocess_')));
      expect(Object.keys(preprocessing(onnx)).length).toBeGreaterThanOrEqual(6);
      expect(preprocessing(pythonParams)).toEqual(preprocessing(onnx));
    });
  }

  it('calls food_classifier_onnx by BLS with its real tensor names and reads its labels, in the Food-11 class order', () => {
    const onnx = read('models_staging/food_classifier_onnx/config.pbtxt');
    expect(pythonParams.onnx_model_path).toBeUndefined();
    expect(pythonParams.onnx_model_name).toBe('food_classifier_onnx');
    expect(pbtxtField(onnx, 'name')).toBe(pythonParams.onnx_model_name);
    expect(pbtxtField(onnx, 'backend')).toBe('onnxruntime');
    const size = Number(pythonParams.preprocess_size);
    expect(pythonParams.preprocess_layout).toBe('CHW');
    expect(tensors(onnx, 'input').get(pythonParams.onnx_input_name ?? '')).toEqual([3, size, size]);
    expect(tensors(onnx, 'output').get(pythonParams.onnx_output_name ?? '')).toEqual([LABELS.length]);
    expect(onnx).toMatch(/label_filename:\s*"labels.txt"/);
    expect(resolveFromModel(pythonParams.labels_path)).toBe('models_staging/food_classifier_onnx/labels.txt');
    const labels = read('models_staging/food_classifier_onnx/labels.txt').split('\n').filter(Boolean);
    expect(labels).toEqual(LABELS);
  });

  it("names its classes (PROBABILITIES) and the ensemble's (output) with copies of food_classifier_onnx's labels", () => {
    const onnxLabels = read('models_staging/food_classifier_onnx/labels.txt');
    for (const model of ['food_classifier', 'food_classifier_ensemble']) {
      const config = read(`models_staging/${model}/config.pbtxt`).replace(/#[^\n]*/g, '');
      const output = model === 'food_classifier' ? 'PROBABILITIES' : 'output';
      expect(config).toMatch(
        new RegExp(
          `name:\\s*"${output}"[^}]*dims:\\s*\\[\\s*${LABELS.length}\\s*\\][^}]*label_filename:\\s*"labels.txt"`,
        ),
      );
      expect(read(`models_staging/${model}/labels.txt`)).toBe(onnxLabels);
    }
    expect(read('models_staging/food_classifier/configs/gpu.pbtxt')).toMatch(
      /label_filename:\s*"labels.txt"/,
    );
  });

  it('documents the softmax change, the BLS call and that both models must be loaded', () => {
    const readme = read('models_staging/food_classifier/README.md');
    expect(readme).toMatch(/sigmoid/);
    expect(readme).toMatch(/softmax/);
    expect(readme).toContain('onnx_model_name');
    expect(readme).toMatch(/BLS/);
    expect(readme).toContain('--load-model=food_classifier_onnx');
    expect(read('models_staging/README.md')).toContain('--load-model=food_classifier_onnx');
  });
});

describe('models_staging/food_preprocess and food_classifier_ensemble', () => {
  const preprocess = read('models_staging/food_preprocess/config.pbtxt');
  const ensemble = read('models_staging/food_classifier_ensemble/config.pbtxt');
  const preprocessing = (params: Record<string, string>): Record<string, string> =>
    Object.fromEntries(Object.entries(params).filter(([key]) => key.startsWith('preprocess_')));

  for (const config of ['config.pbtxt', 'configs/gpu.pbtxt']) {
    it(`food_preprocess preprocesses with the parameters of food_classifier_onnx/${config}`, () => {
      const onnx = preprocessing(pbtxtParameters(read(`models_staging/food_classifier_onnx/${config}`)));
      expect(Object.keys(onnx).length).toBeGreaterThanOrEqual(6);
      expect(preprocessing(pbtxtParameters(preprocess))).toEqual(onnx);
    });
  }

  it("food_preprocess's decoding code is food_classifier's, character for character (Triton cannot share it by import)", () => {
    // From RESIZE_MODES to the end of class Preprocessor: the resize modes, filters, parameter
    // reading and the Preprocessor that both models run.
    const shared = (file: string): string => {
      const text = read(file);
      const start = text.indexOf('RESIZE_MODES = {');
      const end = text.search(/^(def decode_base64|# --- end of the code shared)/m);
      expect(start, file).toBeGreaterThan(0);
      expect(end, file).toBeGreaterThan(start);
      return text.slice(start, end).trimEnd();
    };
    const original = shared('models_staging/food_classifier/1/model.py');
    expect(original).toContain('class Preprocessor:');
    expect(shared('models_staging/food_preprocess/1/model.py')).toBe(original);
  });

  it("food_preprocess is a CPU Python model whose output is food_classifier_onnx's input", () => {
    expect(pbtxtField(preprocess, 'backend')).toBe('python');
    expect(preprocess.replace(/#[^\n]*/g, '')).toMatch(/kind:\s*KIND_CPU/);
    const onnx = read('models_staging/food_classifier_onnx/config.pbtxt');
    expect(tensors(preprocess, 'input').get('IMAGE')).toEqual([1]);
    expect(tensors(preprocess, 'output').get('PREPROCESSED')).toEqual(tensors(onnx, 'input').get('input'));
    expect(preprocess).toMatch(/name:\s*"IMAGE"\s*data_type:\s*TYPE_STRING/);
    expect(preprocess).toMatch(/name:\s*"PREPROCESSED"\s*data_type:\s*TYPE_FP32/);
  });

  it('the ensemble maps IMAGE → food_preprocess → food_classifier_onnx → output, ood_score, within both batch sizes', () => {
    const onnx = read('models_staging/food_classifier_onnx/config.pbtxt');
    expect(pbtxtField(ensemble, 'platform')).toBe('ensemble');
    expect(pbtxtField(ensemble, 'backend')).toBeUndefined();
    const batch = Number(pbtxtField(ensemble, 'max_batch_size'));
    expect(batch).toBeGreaterThan(0);
    expect(batch).toBeLessThanOrEqual(Number(pbtxtField(preprocess, 'max_batch_size')));
    expect(batch).toBeLessThanOrEqual(Number(pbtxtField(onnx, 'max_batch_size')));
    expect(tensors(ensemble, 'input')).toEqual(new Map([['IMAGE', [1]]]));
    expect(tensors(ensemble, 'output')).toEqual(tensors(onnx, 'output'));
    const maps = (body: string, kind: string): Record<string, string> => {
      const out: Record<string, string> = {};
      const pattern = new RegExp(`${kind}\\s*\\{\\s*key:\\s*"([^"]+)"\\s*value:\\s*"([^"]+)"`, 'g');
      for (const m of body.matchAll(pattern)) out[m[1] ?? ''] = m[2] ?? '';
      return out;
    };
    const steps = [
      ...ensemble.replace(/#[^\n]*/g, '').matchAll(/model_name:\s*"([^"]+)"([\s\S]*?)(?=model_name:|$)/g),
    ].map(([, model, body]) => ({
      model,
      inputs: maps(body ?? '', 'input_map'),
      outputs: maps(body ?? '', 'output_map'),
    }));
    expect(steps).toEqual([
      {
        model: 'food_preprocess',
        inputs: { IMAGE: 'IMAGE' },
        outputs: { PREPROCESSED: 'preprocessed_image' },
      },
      {
        model: 'food_classifier_onnx',
        inputs: { input: 'preprocessed_image' },
        outputs: { output: 'output', ood_score: 'ood_score' },
      },
    ]);
    // Triton needs a version directory for an ensemble too; git keeps it through a placeholder.
    expect(trackedFiles('models_staging/food_classifier_ensemble')).toContain(
      'models_staging/food_classifier_ensemble/1/.gitkeep',
    );
  });

  it('models_staging/README.md documents both models and the duplicated code', () => {
    const readme = read('models_staging/README.md');
    expect(readme).toContain('food_preprocess');
    expect(readme).toContain('food_classifier_ensemble');
    expect(readme).toMatch(/raw bytes/);
    expect(readme).toMatch(/identical/);
  });
});
