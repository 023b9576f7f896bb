/**
 * Picking the model and comparing the inference paths (isomorphic: no server imports). The Triton
 * labs' central comparison: the same photo through the ONNX model (tensor path: the gateway
 * preprocesses), the Python-backend model (its model.py preprocesses and calls the ONNX model by
 * BLS) and the ensemble (the server preprocesses, then runs the ONNX model, in one call): verdict,
 * label, probability and latency side by side.
 */
import type { InferencePath, Prediction, VerdictKind } from './types';

/** A model a prediction may pick, as `GET /api/version` lists it (`models`). */
export interface ModelChoice {
  name: string;
  /** `FOOD11_MODEL_NAME`: what a prediction without `model` runs. */
  default: boolean;
  version?: string;
  backend?: string;
  path?: InferencePath;
  /** Whether its answers carry the calibrated out-of-distribution signal. */
  outOfDistribution?: boolean;
  /** Why the server could not describe it (not ready, unknown). */
  error?: string;
}

/** What the picker selects: one model by name, or every model in turn. */
export type Selection = { kind: 'model'; name: string } | { kind: 'compare' };

/** The value of the "compare" option (not a valid Triton model name: it holds a space). */
export const COMPARE = 'compare all';

/** What each path is, in plain words: a title and one line saying who prepares the photo. */
export const PATH_TEXT: Readonly<Record<InferencePath, { title: string; hint: string }>> = {
  tensor: {
    title: 'Standard',
    hint: 'This app prepares the photo; the server runs the model.',
  },
  python: {
    title: 'Python model',
    hint: 'The server’s Python model prepares the photo itself (the original GourmetGram way).',
  },
  ensemble: {
    title: 'Server pipeline',
    hint: 'The server prepares the photo and runs the model in one step.',
  },
};

/** A person's name for a model: what it is in plain words (the model's own name is for the details). */
export function choiceLabel(choice: ModelChoice): string {
  return choice.path ? PATH_TEXT[choice.path].title : `Not available (${choice.name})`;
}

/** The models the server can run now (described, so READY). */
export function readyChoices(choices: readonly ModelChoice[]): ModelChoice[] {
  return choices.filter((c) => c.error === undefined && c.path !== undefined);
}

/** The selection a picker value stands for; an unknown value falls back to the default model. */
export function selectionOf(value: string, choices: readonly ModelChoice[]): Selection {
  if (value === COMPARE && readyChoices(choices).length > 1) return { kind: 'compare' };
  const found = choices.find((c) => c.name === value) ?? choices.find((c) => c.default) ?? choices[0];
  return { kind: 'model', name: found?.name ?? value };
}

/** The models a selection runs, in order: every ready one, the default first, when comparing. */
export function modelsToRun(selection: Selection, choices: readonly ModelChoice[]): string[] {
  if (selection.kind === 'model') return [selection.name];
  return readyChoices(choices)
    .sort((a, b) => Number(b.default) - Number(a.default))
    .map((c) => c.name);
}

/** One photo's prediction through one model, with the browser's round trip. */
export interface Measured {
  prediction: Prediction;
  /** Browser-measured round trip (upload + server + download), ms. */
  roundTripMs: number;
}

/** One row of the comparison table. */
export interface ComparisonRow {
  model: string;
  path: InferencePath;
  /** The verdict's kind and headline ("Likely Seafood", "Not sure", …). */
  verdict: VerdictKind;
  headline: string;
  label: string;
  probability: number;
  /** Browser round trip, ms. */
  roundTripMs: number;
  /** The gateway's total (decode to answer), ms. */
  serverMs: number;
  /** The inference call to Triton, ms (the python path's preprocessing happens inside it). */
  inferMs: number;
  /** `roundTripMs` over the fastest row's (1 for the fastest). */
  relative: number;
}

/** The comparison of one photo's predictions: rows, whether they agree, which path was fastest. */
export interface Comparison {
  rows: ComparisonRow[];
  /** Every path gave the same top label. */
  agree: boolean;
  /** Every path gave the same verdict (kind and label). */
  sameVerdict: boolean;
  /** The model with the shortest round trip. */
  fastest: string | undefined;
}

/** Builds the comparison table of one photo's predictions (in the order given). */
export function compare(results: readonly Measured[]): Comparison {
  const fastestMs = Math.min(...results.map((r) => r.roundTripMs));
  const rows = results.map(({ prediction: p, roundTripMs }) => ({
    model: p.model.name,
    path: p.model.path,
    verdict: p.verdict.kind,
    headline: p.verdict.headline,
    label: p.label,
    probability: p.probability,
    roundTripMs,
    serverMs: p.timings.total,
    inferMs: p.timings.infer,
    relative: fastestMs > 0 ? roundTripMs / fastestMs : 1,
  }));
  const fastest = rows.find((r) => r.roundTripMs === fastestMs)?.model;
  const verdicts = new Set(results.map(({ prediction: p }) => `${p.verdict.kind}|${p.verdict.label}`));
  return {
    rows,
    agree: new Set(rows.map((r) => r.label)).size <= 1,
    sameVerdict: verdicts.size <= 1,
    fastest,
  };
}
