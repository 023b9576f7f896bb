import { describe, expect, it } from 'vitest';

import { ModelConfigError, createModelConfig } from '../../../src/repository/index.js';
import { autoCompleteFromSignature } from '../../../src/runtime/onnxruntime/auto-complete.js';

const batchable = {
  inputs: [{ name: 'x', dataType: 'TYPE_FP32' as const, dims: [-1, 3] }],
  outputs: [{ name: 'y', dataType: 'TYPE_INT64' as const, dims: [-1] }],
};

describe('auto-complete rules (Triton onnxruntime backend)', () => {
  it('fills max_batch_size with the default and adds dynamic batching when the model can batch', () => {
    const c = createModelConfig({ name: 'm' });
    autoCompleteFromSignature(c, batchable, 4);
    expect(c.max_batch_size).toBe(4);
    expect(c.dynamic_batching).toBeDefined();
    expect(c.input.map((i) => [i.name, i.data_type, i.dims, i.reshape])).toEqual([
      ['x', 'TYPE_FP32', [3], undefined],
    ]);
    // An output left without dims gets dims [1] and an empty reshape.
    expect(c.output.map((o) => [o.name, o.data_type, o.dims, o.reshape])).toEqual([
      ['y', 'TYPE_INT64', [1], { shape: [] }],
    ]);
  });

  it('keeps a given max_batch_size and scheduler, and adds no batcher for max_batch_size 1', () => {
    const c = createModelConfig({ name: 'm', max_batch_size: 1 });
    autoCompleteFromSignature(c, batchable);
    expect(c.max_batch_size).toBe(1);
    expect(c.dynamic_batching).toBeUndefined();
    const s = createModelConfig({ name: 'm', sequence_batching: {} });
    autoCompleteFromSignature(s, batchable);
    expect(s.dynamic_batching).toBeUndefined();
  });

  it('leaves max_batch_size 0 for a model with a fixed first dim, and keeps all dims', () => {
    const c = createModelConfig({ name: 'm' });
    autoCompleteFromSignature(c, {
      inputs: [{ name: 'x', dataType: 'TYPE_BOOL', dims: [2, -1] }],
      outputs: [{ name: 'y', dataType: 'TYPE_BOOL', dims: [] }],
    });
    expect(c.max_batch_size).toBe(0);
    expect(c.input[0]?.dims).toEqual([2, -1]);
    expect(c.output[0]?.dims).toEqual([1]);
    expect(c.output[0]?.reshape).toBeUndefined();
  });

  it('fails when the model cannot batch but max_batch_size is set', () => {
    const c = createModelConfig({ name: 'm', max_batch_size: 8 });
    const run = () =>
      autoCompleteFromSignature(c, {
        inputs: [{ name: 'x', dataType: 'TYPE_FP32', dims: [3] }],
        outputs: [],
      });
    expect(run).toThrow(ModelConfigError);
    expect(run).toThrow(
      "autofill failed for model 'm': model does not support batching while non-zero max_batch_size is specified",
    );
  });

  it('does nothing when inputs and outputs are both given', () => {
    const c = createModelConfig({ name: 'm', input: [{ name: 'a' }], output: [{ name: 'b' }] });
    autoCompleteFromSignature(c, batchable);
    expect(c.max_batch_size).toBe(0);
    expect(c.input.map((i) => i.name)).toEqual(['a']);
  });
});
