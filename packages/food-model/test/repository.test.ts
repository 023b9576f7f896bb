import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  FOOD11_CLASSES,
  INPUT_NAME,
  MAX_BATCH_SIZE,
  MODEL_NAME,
  OOD_OUTPUT_NAME,
  OUTPUT_NAME,
} from '../src/contract.js';
import { MODEL_DIR, MODEL_FILE } from '../src/paths.js';
import type { PbMessage } from '../src/pbtxt.js';
import { one, parameterMap, parsePbtxt, str } from '../src/pbtxt.js';

const read = (rel: string): string => readFileSync(join(MODEL_DIR, rel), 'utf8');

/**
 * The seed model's preprocessing (torchvision `Resize((224, 224))` on PIL, ImageNet mean/std, RGB,
 * CHW): the contract config.pbtxt must declare. The build reads config.pbtxt, not this list.
 */
const SEED_CONTRACT_PARAMETERS = {
  preprocess_resize: 'squash',
  preprocess_size: '224',
  preprocess_mean: '0.485,0.456,0.406',
  preprocess_std: '0.229,0.224,0.225',
  preprocess_layout: 'CHW',
  preprocess_color: 'RGB',
  preprocess_kernel: 'linear',
};

describe('models_staging/food_classifier_onnx', () => {
  let session: ort.InferenceSession;
  const config = parsePbtxt(read('config.pbtxt'));
  const gpu = parsePbtxt(read('configs/gpu.pbtxt'));

  beforeAll(async () => {
    session = await ort.InferenceSession.create(MODEL_FILE);
  });

  it('labels.txt has the 11 classes in contract order', () => {
    expect(read('labels.txt').split('\n')).toEqual([...FOOD11_CLASSES, '']);
  });

  for (const [name, cfg] of [
    ['config.pbtxt', config],
    ['configs/gpu.pbtxt', gpu],
  ] as const) {
    it(`${name} declares the contract of model.onnx (dims without the batch dimension)`, () => {
      expect(one(cfg, 'name')).toBe(MODEL_NAME);
      expect(one(cfg, 'backend')).toBe('onnxruntime');
      expect(one(cfg, 'max_batch_size')).toBe(MAX_BATCH_SIZE);
      const input = one(cfg, 'input') as PbMessage;
      const [output, ood, ...more] = (cfg.output ?? []) as PbMessage[];
      if (!output || !ood) throw new Error('expected the outputs output and ood_score');
      expect(more).toEqual([]);
      expect(one(input, 'name')).toBe(INPUT_NAME);
      expect(one(input, 'data_type')).toBe('TYPE_FP32');
      expect(one(output, 'name')).toBe(OUTPUT_NAME);
      expect(one(output, 'data_type')).toBe('TYPE_FP32');
      expect(one(output, 'label_filename')).toBe('labels.txt');

      const meta = (list: readonly ort.InferenceSession.ValueMetadata[]) => {
        const m = list[0];
        if (!m?.isTensor) throw new Error('not a tensor');
        return m;
      };
      const inMeta = meta(session.inputMetadata);
      const outMeta = meta(session.outputMetadata);
      expect(inMeta.name).toBe(one(input, 'name'));
      expect(outMeta.name).toBe(one(output, 'name'));
      expect(typeof inMeta.shape[0]).toBe('string'); // dynamic batch
      expect(inMeta.shape.slice(1)).toEqual(input.dims);
      expect(outMeta.shape.slice(1)).toEqual(output.dims);
      // Beyond the seed's contract: the out-of-distribution score, second in the model and the config.
      expect(one(ood, 'name')).toBe(OOD_OUTPUT_NAME);
      expect(one(ood, 'data_type')).toBe('TYPE_FP32');
      expect(ood.dims).toEqual([1]);
      const oodMeta = session.outputMetadata[1];
      if (!oodMeta?.isTensor) throw new Error('model.onnx has no second output');
      expect(oodMeta.name).toBe(OOD_OUTPUT_NAME);
      expect(oodMeta.shape.slice(1)).toEqual(ood.dims);
      expect(one(cfg, 'dynamic_batching')).toBeTypeOf('object');
      expect(parameterMap(cfg)).toEqual(SEED_CONTRACT_PARAMETERS);
    });
  }

  it('the default config loads on CPU-only hosts; the GPU variant uses TensorRT FP16 on GPU instances', () => {
    const cpuGroup = one(config, 'instance_group') as PbMessage;
    expect(one(cpuGroup, 'kind')).toBe('KIND_CPU');
    expect(one(cpuGroup, 'count')).toBe(1);
    expect(config.optimization).toBeUndefined();

    const gpuGroup = one(gpu, 'instance_group') as PbMessage;
    expect(one(gpuGroup, 'kind')).toBe('KIND_GPU');
    const accelerators = one(one(gpu, 'optimization') as PbMessage, 'execution_accelerators') as PbMessage;
    const trt = one(accelerators, 'gpu_execution_accelerator') as PbMessage;
    expect(one(trt, 'name')).toBe('tensorrt');
    // Accelerator parameters are a map<string, string>: entries { key: "..." value: "..." }.
    const params: Record<string, string> = Object.fromEntries(
      (trt.parameters ?? []).map((p) => [str(p as PbMessage, 'key'), str(p as PbMessage, 'value')]),
    );
    expect(params.precision_mode).toBe('FP16');
  });

  it('the GPU variant differs from config.pbtxt only in instance_group and optimization', () => {
    const strip = (m: PbMessage): PbMessage => {
      const { instance_group: _i, optimization: _o, ...rest } = m;
      return rest;
    };
    expect(strip(gpu)).toEqual(strip(config));
  });
});
