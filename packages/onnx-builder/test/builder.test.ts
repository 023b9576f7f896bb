import { describe, expect, it } from 'vitest';
import * as ort from 'onnxruntime-node';
import { OnnxBuildError, OnnxGraphBuilder } from '../src/index.js';

function addSub(): OnnxGraphBuilder {
  const g = new OnnxGraphBuilder({ name: 'add_sub' });
  g.addInput('INPUT0', 'INT32', ['batch', 4]);
  g.addInput('INPUT1', 'INT32', ['batch', 4]);
  g.addNode('Add', ['INPUT0', 'INPUT1'], ['OUTPUT0']);
  g.addNode('Sub', ['INPUT0', 'INPUT1'], ['OUTPUT1']);
  g.addOutput('OUTPUT0', 'INT32', ['batch', 4]);
  g.addOutput('OUTPUT1', 'INT32', ['batch', 4]);
  return g;
}

describe('OnnxGraphBuilder', () => {
  it('writes a model that onnxruntime loads and runs', async () => {
    const session = await ort.InferenceSession.create(addSub().toBytes());
    expect(session.inputNames).toEqual(['INPUT0', 'INPUT1']);
    const a = new ort.Tensor('int32', Int32Array.from([1, 2, 3, 4]), [1, 4]);
    const b = new ort.Tensor('int32', Int32Array.from([10, 10, 10, 10]), [1, 4]);
    const out = await session.run({ INPUT0: a, INPUT1: b });
    expect(Array.from(out.OUTPUT0!.data as Int32Array)).toEqual([11, 12, 13, 14]);
    expect(Array.from(out.OUTPUT1!.data as Int32Array)).toEqual([-9, -8, -7, -6]);
  });

  it('is deterministic: the same graph gives the same bytes', () => {
    expect(Buffer.from(addSub().toBytes()).equals(Buffer.from(addSub().toBytes()))).toBe(true);
  });

  it('stores initializers and attributes', async () => {
    const g = new OnnxGraphBuilder({ name: 'gemm' });
    g.addInput('x', 'FLOAT', [1, 2]);
    g.addInitializer('w', { type: 'FLOAT', dims: [3, 2], data: Float32Array.from([1, 0, 0, 1, 1, 1]) });
    g.addInitializer('b', { type: 'FLOAT', dims: [3], data: Float32Array.from([0.5, 0, 0]) });
    g.addNode('Gemm', ['x', 'w', 'b'], ['y'], { transB: { kind: 'int', value: 1 } });
    g.addOutput('y', 'FLOAT', [1, 3]);
    const session = await ort.InferenceSession.create(g.toBytes());
    const out = await session.run({ x: new ort.Tensor('float32', Float32Array.from([2, 3]), [1, 2]) });
    expect(Array.from(out.y!.data as Float32Array)).toEqual([2.5, 3, 5]);
  });

  it('refuses duplicate names and dangling outputs', () => {
    const g = new OnnxGraphBuilder({ name: 'bad' });
    g.addInput('x', 'FLOAT', [1]);
    expect(() => g.addInput('x', 'FLOAT', [1])).toThrow(OnnxBuildError);
    g.addOutput('nope', 'FLOAT', [1]);
    expect(() => g.toBytes()).toThrow(/not produced/);
  });
});
