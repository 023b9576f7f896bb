/**
 * The model picker's logic and the two paths' comparison (src/lib/compare.ts), and the comparison
 * table as rendered (static HTML of PathComparison).
 */
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { PathComparison } from '@/components/path-comparison';
import {
  choiceLabel,
  compare,
  COMPARE,
  modelsToRun,
  readyChoices,
  selectionOf,
  type Measured,
  type ModelChoice,
} from '@/lib/compare';
import type { InferencePath, Prediction } from '@/lib/types';

const CHOICES: ModelChoice[] = [
  { name: 'food_classifier_onnx', default: true, version: '1', backend: 'onnxruntime', path: 'tensor' },
  { name: 'food_classifier', default: false, version: '1', backend: 'python', path: 'python' },
  { name: 'food_classifier_ensemble', default: false, version: '1', backend: 'ensemble', path: 'ensemble' },
];

function measured(
  name: string,
  path: InferencePath,
  label: string,
  roundTripMs: number,
  total = roundTripMs - 5,
): Measured {
  const prediction: Prediction = {
    requestId: `${name}-id`,
    label,
    probability: 0.9,
    top: [{ index: -1, label, probability: 0.9 }],
    verdict: {
      kind: 'likely',
      reason: 'confident',
      label,
      candidates: [{ index: -1, label, probability: 0.9 }],
      headline: `Likely ${label}`,
      explanation: '',
    },
    model: { name, version: '1', backend: path === 'tensor' ? 'onnxruntime' : 'python', path },
    image: { format: 'jpeg', width: 10, height: 10 },
    timings: { decode: 1, preprocess: 2, infer: total - 4, postprocess: 1, total },
    outOfDistribution: null,
    createdAt: '2026-01-01T00:00:00.000Z',
  };
  return { prediction, roundTripMs };
}

describe('picking a model', () => {
  it('names each way in plain words, not by its model or path', () => {
    expect(CHOICES.map(choiceLabel)).toEqual(['Standard', 'Python model', 'Server pipeline']);
    expect(choiceLabel({ name: 'x', default: false, error: 'not ready' })).toBe('Not available (x)');
  });

  it('offers only the models the server could describe (READY)', () => {
    const withGone = [...CHOICES, { name: 'gone', default: false, error: 'not ready' }];
    expect(readyChoices(withGone).map((c) => c.name)).toEqual(CHOICES.map((c) => c.name));
    expect(modelsToRun(selectionOf(COMPARE, withGone), withGone)).not.toContain('gone');
  });

  it('runs the picked model, or every model with the default first when comparing', () => {
    expect(modelsToRun(selectionOf('food_classifier', CHOICES), CHOICES)).toEqual(['food_classifier']);
    expect(modelsToRun(selectionOf(COMPARE, CHOICES), CHOICES)).toEqual([
      'food_classifier_onnx',
      'food_classifier',
      'food_classifier_ensemble',
    ]);
    const pythonDefault = CHOICES.map((c) => ({ ...c, default: c.name === 'food_classifier' }));
    expect(modelsToRun(selectionOf(COMPARE, pythonDefault), pythonDefault)).toEqual([
      'food_classifier',
      'food_classifier_onnx',
      'food_classifier_ensemble',
    ]);
  });

  it('falls back to the default model for an unknown value, and cannot compare one model', () => {
    expect(selectionOf('', CHOICES)).toEqual({ kind: 'model', name: 'food_classifier_onnx' });
    expect(selectionOf('gone', CHOICES)).toEqual({ kind: 'model', name: 'food_classifier_onnx' });
    const one = CHOICES.slice(0, 1);
    expect(selectionOf(COMPARE, one)).toEqual({ kind: 'model', name: 'food_classifier_onnx' });
  });
});

describe('comparing the paths', () => {
  it('puts label, probability and latencies side by side, relative to the fastest', () => {
    const c = compare([
      measured('food_classifier_onnx', 'tensor', 'Rice', 40),
      measured('food_classifier', 'python', 'Rice', 100),
    ]);
    expect(c.agree).toBe(true);
    expect(c.fastest).toBe('food_classifier_onnx');
    expect(c.rows.map((r) => [r.model, r.path, r.roundTripMs, r.serverMs, r.inferMs, r.relative])).toEqual([
      ['food_classifier_onnx', 'tensor', 40, 35, 31, 1],
      ['food_classifier', 'python', 100, 95, 91, 2.5],
    ]);
  });

  it('tells when the paths disagree, and which is faster whichever comes first', () => {
    const c = compare([
      measured('food_classifier_onnx', 'tensor', 'Rice', 90),
      measured('food_classifier', 'python', 'Egg', 30),
    ]);
    expect(c.agree).toBe(false);
    expect(c.fastest).toBe('food_classifier');
    expect(c.rows[0]!.relative).toBe(3);
  });

  it('renders one row per path, the fastest marked, and the verdict', () => {
    const html = renderToStaticMarkup(
      createElement(PathComparison, {
        results: [
          measured('food_classifier_onnx', 'tensor', 'Rice', 40),
          measured('food_classifier', 'python', 'Rice', 100),
        ],
      }),
    );
    expect(html).toContain('data-path="tensor"');
    expect(html).toContain('data-path="python"');
    expect(html).toMatch(
      /Standard.*tensor path.*Likely Rice.*Rice.*90\.0%.*40 ms.*fastest.*35\.0 ms.*31\.0 ms/,
    );
    expect(html).toMatch(
      /Python model.*python path.*Likely Rice.*100 ms.*2\.5× the fastest.*95\.0 ms.*91\.0 ms/,
    );
    expect(html).toContain('Every way gives the same verdict.');
  });
});
