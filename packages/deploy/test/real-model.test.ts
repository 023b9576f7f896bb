// models_staging/food_classifier as it is in the repository, on the real food model: the Python
// model (Debian python3 + PIL, the Triton stand-in, its BLS calls to food_classifier_onnx answered by
// the real model.onnx run by onnxruntime-node through the NodeBridgeModel stand-in) against the web
// app's path (sharp preprocessing with food_classifier_onnx's parameters + onnxruntime-node) on the
// held-out photos. (Against the embedded server's real Python backend: an end-to-end test to come.)
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { datasetSplit, MODEL_FILE, REPORT_FILE } from '@gourmetgram/food-model';
import { preprocessConfigFromParameters, preprocessImage } from '@gourmetgram/image-preprocess';
import * as ort from 'onnxruntime-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { pbtxtParameters, read } from '../src/repo.js';

type Row = { path: string } | { text: string };
type Answer =
  | { labels: string[]; probabilities: number[]; shape: number[]; every: number[][]; ood: number[] }
  | { error: string };
interface PythonOutput {
  runs: number[];
  calls: { model: string; input: string[]; requested: string[] }[];
  executes: Answer[][];
  onnx: string;
}

const LABELS = read('models_staging/food_classifier_onnx/labels.txt').split('\n').filter(Boolean);
const driver = fileURLToPath(new URL('../python_tests/classify_real.py', import.meta.url));
const python = process.env.DEPLOY_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');

function runPython(executes: Row[][][]): PythonOutput {
  const done = spawnSync(python, [driver], {
    input: JSON.stringify({ executes }),
    encoding: 'utf8',
    timeout: 240_000,
    maxBuffer: 1 << 26,
  });
  if (done.status !== 0) throw new Error(`classify_real.py failed (${done.status}):\n${done.stderr}`);
  return JSON.parse(done.stdout) as PythonOutput;
}

function softmaxTop(
  logits: Float32Array,
  row: number,
  classes: number,
): { label: string; probability: number; every: number[] } {
  const values = Array.from(logits.subarray(row * classes, (row + 1) * classes));
  const max = Math.max(...values);
  const exps = values.map((v) => Math.exp(v - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  const top = exps.indexOf(Math.max(...exps));
  return { label: LABELS[top] ?? '?', probability: (exps[top] ?? 0) / sum, every: exps.map((e) => e / sum) };
}

const heldOut = (() => {
  const { labelled, heldOut: mask } = datasetSplit();
  return labelled.filter((_, i) => mask[i]);
})();

let pythonRows: { label: string; probability: number; every: number[]; ood: number }[] = [];
let reference: { label: string; probability: number; every: number[]; ood: number }[] = [];
let output: PythonOutput;
let isolation: Answer[];

beforeAll(async () => {
  if (!existsSync(MODEL_FILE))
    throw new Error(`${MODEL_FILE} is missing: npm run model:ensure -w @gourmetgram/food-model`);

  // Triton-like traffic: executes of up to 16 single-photo requests (max_batch_size 16), the last
  // one a multi-row request; then one execute mixing good requests with a bad one.
  const executes: Row[][][] = [];
  for (let i = 0; i < heldOut.length; i += 16) {
    const chunk = heldOut.slice(i, i + 16);
    executes.push(chunk.map((p) => [{ path: p.path }]));
  }
  const tail = heldOut.slice(0, 3).map((p) => ({ path: p.path }));
  executes.push([[tail[0] as Row], [{ text: 'not base64 at all!' }], [tail[1] as Row, tail[2] as Row]]);
  output = runPython(executes);
  isolation = output.executes.at(-1) ?? [];
  pythonRows = output.executes.slice(0, -1).flatMap((answers) =>
    answers.flatMap((a) =>
      'error' in a
        ? []
        : a.labels.map((label, k) => ({
            label,
            probability: a.probabilities[k] ?? NaN,
            every: a.every[k] ?? [],
            ood: a.ood[k] ?? NaN,
          })),
    ),
  );

  // The web app's path for food_classifier_onnx.
  const config = preprocessConfigFromParameters(
    pbtxtParameters(read('models_staging/food_classifier_onnx/config.pbtxt')),
  );
  const session = await ort.InferenceSession.create(MODEL_FILE);
  const batch = new Float32Array(heldOut.length * 3 * 224 * 224);
  for (const [i, photo] of heldOut.entries()) {
    const { tensor } = await preprocessImage(new Uint8Array(readFileSync(photo.path)), config);
    batch.set(tensor, i * tensor.length);
  }
  const inputName = session.inputNames[0] ?? 'input';
  const outputName = session.outputNames[0] ?? 'output';
  const result = await session.run({
    [inputName]: new ort.Tensor('float32', batch, [heldOut.length, 3, 224, 224]),
  });
  const logits = result[outputName]?.data as Float32Array;
  const ood = result.ood_score?.data as Float32Array;
  reference = heldOut.map((_, i) => ({ ...softmaxTop(logits, i, LABELS.length), ood: ood[i] ?? NaN }));
  await session.release();
}, 300_000);

describe('food_classifier (Python backend) on the real food model', () => {
  it("calls food_classifier_onnx (answered by its real model.onnx) by its config's model and tensor names", () => {
    expect(output.onnx).toBe(MODEL_FILE);
    expect(heldOut.length).toBeGreaterThan(50);
    const params = pbtxtParameters(read('models_staging/food_classifier/config.pbtxt'));
    expect(params.onnx_model_name).toBe('food_classifier_onnx');
    expect(output.calls.length).toBeGreaterThan(0);
    for (const call of output.calls) {
      // The logits and, as the config declares OOD_SCORE, the out-of-distribution score.
      expect(call).toEqual({
        model: 'food_classifier_onnx',
        input: ['input'],
        requested: ['output', 'ood_score'],
      });
    }
  });

  it('makes one BLS call per execute(), with every row of every request in it', () => {
    const expected = output.executes.map((_, e) =>
      e < output.executes.length - 1 ? Math.min(16, heldOut.length - e * 16) : 3,
    );
    expect(output.runs).toEqual(expected);
    expect(pythonRows).toHaveLength(heldOut.length);
  });

  it('agrees with the web app path (sharp preprocessing + the same model) on every held-out photo', () => {
    const mismatches = heldOut.filter((_, i) => pythonRows[i]?.label !== reference[i]?.label);
    expect(mismatches.map((p) => p.code)).toEqual([]);
    const worst = Math.max(
      ...pythonRows.map((r, i) => Math.abs(r.probability - (reference[i]?.probability ?? 0))),
    );
    // Both paths decode with libjpeg and resize with Pillow's bilinear filter (the app through its
    // bit-exact port), so the tensors agree up to float32 rounding; measured worst case 4.6e-6.
    expect(worst).toBeLessThan(1e-4);
  });

  it("answers every class's probability and the out-of-distribution score the web app's path gets", () => {
    expect(pythonRows).toHaveLength(reference.length);
    let worstEvery = 0;
    let worstOod = 0;
    for (const [i, row] of pythonRows.entries()) {
      const ref = reference[i]!;
      expect(row.every).toHaveLength(LABELS.length);
      row.every.forEach((p, k) => (worstEvery = Math.max(worstEvery, Math.abs(p - (ref.every[k] ?? NaN)))));
      worstOod = Math.max(worstOod, Math.abs(row.ood - ref.ood));
      expect(Math.max(...row.every)).toBeCloseTo(row.probability, 6);
    }
    // Same tolerance as the top probability above (float32 rounding of two decoders' tensors).
    expect(worstEvery).toBeLessThan(1e-4);
    expect(worstOod).toBeLessThan(1e-4);
  });

  it('classifies the held-out photos as well as the model build reported (goal >= 80%)', () => {
    const correct = heldOut.filter((p, i) => pythonRows[i]?.label === p.label).length;
    const accuracy = correct / heldOut.length;
    // The build's report (packages/food-model/artifacts, not committed) when this checkout has one.
    const report = (existsSync(REPORT_FILE) ? JSON.parse(readFileSync(REPORT_FILE, 'utf8')) : {}) as {
      accuracy?: { heldOut?: number };
    };
    expect(accuracy).toBeGreaterThanOrEqual(0.8);
    // The build preprocesses with @gourmetgram/image-preprocess (Pillow-exact resize from the same
    // config parameters), so training and serving agree; only the JPEG decoder differs (libvips vs
    // Pillow), which may move at most one borderline photo.
    if (report.accuracy?.heldOut !== undefined) {
      expect(Math.abs(correct - report.accuracy.heldOut * heldOut.length)).toBeLessThanOrEqual(1);
    }
  });

  it('fails only the bad request of a batch, with a message naming the row', () => {
    expect(output.runs.at(-1)).toBe(3);
    const [first, bad, multi] = isolation;
    expect(first && 'labels' in first ? first.labels : []).toEqual([reference[0]?.label]);
    expect(bad && 'error' in bad ? bad.error : '').toMatch(
      /^food_classifier: INPUT_IMAGE row 0 is not valid base64/,
    );
    expect(multi && 'labels' in multi ? multi.shape : []).toEqual([2, 1]);
    expect(multi && 'labels' in multi ? multi.labels : []).toEqual([
      reference[1]?.label,
      reference[2]?.label,
    ]);
  });
});
