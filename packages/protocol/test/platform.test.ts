/** The one platform → backend map (`src/platform.ts`), as Triton names them. */
import { describe, expect, it } from 'vitest';
import { PLATFORM_BACKENDS, backendOfPlatform, modelBackend } from '../src/index.js';

describe('platform → backend', () => {
  it("maps Triton's platforms to their backends", () => {
    expect({ ...PLATFORM_BACKENDS }).toEqual({
      onnxruntime_onnx: 'onnxruntime',
      tensorrt_plan: 'tensorrt',
      tensorflow_graphdef: 'tensorflow',
      tensorflow_savedmodel: 'tensorflow',
      pytorch_libtorch: 'pytorch',
      torch_aoti: 'pytorch',
    });
    expect(backendOfPlatform('onnxruntime_onnx')).toBe('onnxruntime');
    expect(backendOfPlatform('torch_aoti')).toBe('pytorch');
  });

  it('knows no backend of an ensemble, an unknown platform or an Object.prototype name', () => {
    for (const platform of ['ensemble', '', 'caffe2_netdef', 'constructor', 'toString', '__proto__']) {
      expect(backendOfPlatform(platform), platform).toBeUndefined();
    }
  });

  it('cannot be changed', () => {
    expect(Object.isFrozen(PLATFORM_BACKENDS)).toBe(true);
    expect(() => {
      (PLATFORM_BACKENDS as Record<string, string>).onnxruntime_onnx = 'other';
    }).toThrow(TypeError);
  });

  it("reads a model config's backend: the backend field first, else its platform's", () => {
    expect(modelBackend({ backend: 'python', platform: '' })).toBe('python');
    expect(modelBackend({ backend: '', platform: 'onnxruntime_onnx' })).toBe('onnxruntime');
    expect(modelBackend({ platform: 'tensorrt_plan' })).toBe('tensorrt');
    expect(modelBackend({ backend: 'onnxruntime', platform: 'onnxruntime_onnx' })).toBe('onnxruntime');
    expect(modelBackend({ backend: '', platform: 'ensemble' })).toBeUndefined();
    expect(modelBackend({})).toBeUndefined();
  });
});
