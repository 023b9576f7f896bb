import { describe, expect, it } from 'vitest';
import { predictLogits, softmaxRows, toRawLinearHead, trainSoftmax } from '../src/train/softmax.js';

/** Three well-separated 2-D clusters in 4-D (two noise dims), a fourth class without samples. */
function data(): { x: { n: number; dim: number; data: Float64Array }; labels: number[] } {
  const centers = [
    [3, 0],
    [0, 3],
    [-3, -3],
  ];
  const rows: number[] = [];
  const labels: number[] = [];
  for (let i = 0; i < 60; i++) {
    const c = i % 3;
    const [cx, cy] = centers[c] as [number, number];
    const t = i / 60;
    rows.push(cx + Math.sin(7 * i) * 0.8, cy + Math.cos(5 * i) * 0.8, t, 1 - t);
    labels.push(c);
  }
  return { x: { n: 60, dim: 4, data: Float64Array.from(rows) }, labels };
}

describe('softmax regression', () => {
  const options = { classes: 4, l2: 0.01, iterations: 200, priorPseudoCount: 0.01 };

  it('separates clusters, is deterministic and starves the class without samples', () => {
    const { x, labels } = data();
    const model = trainSoftmax(x, labels, options);
    const again = trainSoftmax(x, labels, options);
    expect(Buffer.from(again.weights.buffer).equals(Buffer.from(model.weights.buffer))).toBe(true);
    const probs = predictLogits(model, x);
    softmaxRows(probs, 4);
    for (let i = 0; i < x.n; i++) {
      const row = Array.from(probs.subarray(i * 4, i * 4 + 4));
      expect(row.indexOf(Math.max(...row))).toBe(labels[i]);
      expect(row[3]).toBeLessThan(1e-3);
    }
    expect(model.loss).toBeLessThan(0.2);
  });

  it('folds the standardisation into a raw linear head with the same logits', () => {
    const { x, labels } = data();
    const model = trainSoftmax(x, labels, options);
    const head = toRawLinearHead(model);
    const logits = predictLogits(model, x);
    for (let i = 0; i < x.n; i++) {
      for (let c = 0; c < 4; c++) {
        let v = head.bias[c] as number;
        for (let j = 0; j < 4; j++) v += (x.data[i * 4 + j] as number) * (head.weights[j * 4 + c] as number);
        expect(v).toBeCloseTo(logits[i * 4 + c] as number, 4);
      }
    }
  });

  it('rejects labels out of range', () => {
    const { x, labels } = data();
    expect(() =>
      trainSoftmax(
        x,
        labels.map(() => 7),
        options,
      ),
    ).toThrow(/TRAINING_FAILED/);
  });
});
