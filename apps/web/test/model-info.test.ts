/**
 * The backend the gateway reports for a model (`modelInfoFromConfig` in src/server/triton.ts): the
 * config's `backend`, else its platform's through the protocol package's one platform → backend
 * map, the same map the embedded server completes configs with.
 */
import type { ModelConfig } from '@tritonserver-ts/client';
import { describe, expect, it } from 'vitest';
import { modelInfoFromConfig } from '../src/server/triton';

const tensorModel = (fields: { backend?: string; platform?: string }): ModelConfig => ({
  name: 'm',
  ...fields,
  max_batch_size: 16,
  input: [{ name: 'input', data_type: 'TYPE_FP32', dims: [3, 224, 224] }],
  output: [{ name: 'output', data_type: 'TYPE_FP32', dims: [11] }],
});

const bytesModel = (fields: { backend?: string; platform?: string }): ModelConfig => ({
  name: 'm',
  ...fields,
  max_batch_size: 16,
  input: [{ name: 'IMAGE', data_type: 'TYPE_STRING', dims: [1] }],
  output: [{ name: 'output', data_type: 'TYPE_FP32', dims: [11] }],
});

describe('the backend of a model', () => {
  it("is the config's backend when it names one", () => {
    expect(modelInfoFromConfig(tensorModel({ backend: 'onnxruntime', platform: '' }), '1').backend).toBe(
      'onnxruntime',
    );
    expect(modelInfoFromConfig(bytesModel({ backend: 'python' }), '1')).toMatchObject({
      backend: 'python',
      path: 'ensemble',
    });
  });

  it("is the platform's backend otherwise (as Triton names it)", () => {
    expect(modelInfoFromConfig(tensorModel({ platform: 'onnxruntime_onnx' }), '1').backend).toBe(
      'onnxruntime',
    );
    expect(modelInfoFromConfig(tensorModel({ backend: '', platform: 'tensorrt_plan' }), '1').backend).toBe(
      'tensorrt',
    );
    expect(modelInfoFromConfig(tensorModel({ platform: 'pytorch_libtorch' }), '1').backend).toBe('pytorch');
  });

  it('is "ensemble" for an ensemble, and onnxruntime for a tensor model that names none', () => {
    expect(modelInfoFromConfig(bytesModel({ platform: 'ensemble', backend: '' }), '1')).toMatchObject({
      backend: 'ensemble',
      path: 'ensemble',
    });
    expect(modelInfoFromConfig(tensorModel({}), '1')).toMatchObject({
      backend: 'onnxruntime',
      path: 'tensor',
    });
  });
});
