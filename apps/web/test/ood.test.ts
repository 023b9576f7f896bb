import { copyFileSync, mkdtempSync, readFileSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import calibration from '@gourmetgram/food-model/ood-calibration.json';
import type { RunningServer } from '@tritonserver-ts/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POST } from '../src/app/api/predict/route';
import type { Prediction } from '../src/lib/types';
import { OOD_CALIBRATION, oodApplies } from '../src/server/ood';
import { json, MODELS, photo, startEmbedded, uploadRequest, useEnv } from './helpers';

// The out-of-distribution field through the real gateway, the embedded server and the built model:
// the scores the calibration recorded (food-model, onnxruntime directly) come back from
// POST /api/predict for the same files, and the threshold splits them as calibrated.
// The non-food images come from Debian's opencv-doc and python3-skimage (scripts/test.mjs installs them).

/** A street scene (opencv-doc) and a cat (python3-skimage): clearly not food. */
const STREET = '/usr/share/doc/opencv-doc/examples/data/leuvenA.jpg';
const CAT = '/usr/lib/python3/dist-packages/skimage/data/chelsea.png';
/** A held-out food photo (never trained on): a fish. */
const HELD_OUT_FOOD = 'P023';

let server: RunningServer;

async function predict(bytes: Uint8Array, name: string): Promise<Prediction> {
  const res = await POST(
    uploadRequest(bytes, { name, type: name.endsWith('.png') ? 'image/png' : 'image/jpeg' }),
  );
  expect(res.status).toBe(200);
  return json<Prediction>(res);
}

describe('outOfDistribution in POST /api/predict (tensor path, the built model)', () => {
  beforeAll(async () => {
    server = await startEmbedded();
    useEnv({
      TRITON_SERVER_URL: server.url.replace(/^http:\/\//, ''),
      FOOD11_MODEL_NAME: undefined,
      FEEDBACK_STORAGE: 'none',
      GATEWAY_LOG: 'false',
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('flags a street scene and a cat, not a held-out food photo; the prediction is still there', async () => {
    const street = await predict(readFileSync(STREET), 'leuvenA.jpg');
    expect(street.outOfDistribution).toMatchObject({
      threshold: calibration.threshold,
      flagged: true,
      method: calibration.method,
    });
    expect(street.label).toBe(street.top[0]!.label);
    expect(street.top).toHaveLength(11);
    const cat = await predict(readFileSync(CAT), 'chelsea.png');
    expect(cat.outOfDistribution?.flagged).toBe(true);
    const food = await predict(photo(HELD_OUT_FOOD), `${HELD_OUT_FOOD}.jpeg`);
    expect(food.outOfDistribution?.flagged).toBe(false);
    expect(food.outOfDistribution!.score).toBeLessThan(food.outOfDistribution!.threshold);
  });

  it('answers the calibrated score of every held-out food photo and non-food image, flagging as calibrated', async () => {
    const check = async (
      scores: Record<string, number>,
      read: (key: string) => Buffer,
      name: (k: string) => string,
    ) => {
      let flagged = 0;
      for (const [key, expected] of Object.entries(scores)) {
        const p = await predict(read(key), name(key));
        const ood = p.outOfDistribution!;
        // Same model and preprocessing; only the batch size differs from the calibration run.
        expect(Math.abs(ood.score - expected), key).toBeLessThan(1e-4);
        expect(ood.flagged).toBe(ood.score > calibration.threshold);
        if (ood.flagged) flagged++;
      }
      return flagged;
    };
    const foodFlagged = await check(calibration.scores.heldOutFood, photo, (code) => `${code}.jpeg`);
    expect(foodFlagged).toBe(calibration.figures.falsePositive.count);
    const nonFood = calibration.scores.nonFood as Record<string, number>;
    const nonFoodFlagged = await check(
      nonFood,
      (path) => readFileSync(path),
      (path) => path.slice(path.lastIndexOf('/') + 1),
    );
    expect(Object.keys(nonFood).length - nonFoodFlagged).toBe(calibration.figures.falseNegative.all.count);
  });
});

describe('outOfDistribution is null when the calibration does not apply', () => {
  let repo: string;
  let plain: RunningServer;

  beforeAll(async () => {
    // The same model served with a config that does not declare ood_score (as for a drop-in model).
    repo = mkdtempSync(join(tmpdir(), 'gg-ood-repo-'));
    const dir = join(repo, 'food_classifier_onnx');
    mkdirSync(join(dir, '1'), { recursive: true });
    copyFileSync(join(MODELS, 'food_classifier_onnx', '1', 'model.onnx'), join(dir, '1', 'model.onnx'));
    copyFileSync(join(MODELS, 'food_classifier_onnx', 'labels.txt'), join(dir, 'labels.txt'));
    const config = readFileSync(join(MODELS, 'food_classifier_onnx', 'config.pbtxt'), 'utf8');
    const withoutOod = config.replace(/,\s*\{[^{}]*name: "ood_score"[^{}]*\}/, '');
    expect(withoutOod).not.toContain('name: "ood_score"');
    writeFileSync(join(dir, 'config.pbtxt'), withoutOod);
    plain = await startEmbedded(repo);
    useEnv({
      TRITON_SERVER_URL: plain.url.replace(/^http:\/\//, ''),
      FEEDBACK_STORAGE: 'none',
      GATEWAY_LOG: 'false',
    });
  });
  afterAll(async () => {
    await plain?.close();
    rmSync(repo, { recursive: true, force: true });
  });

  it('a model without the ood_score output: null, and the prediction as before', async () => {
    const p = await predict(readFileSync(STREET), 'leuvenA.jpg');
    expect(p.outOfDistribution).toBeNull();
    expect(p.top).toHaveLength(11);
  });

  it('another model than the calibrated one (its blank-image logits differ): not applied', () => {
    const logits = [...OOD_CALIBRATION.zeroInputLogits];
    const model = { oodOutput: 'ood_score', fingerprint: { input: 'zero-tensor' as const, logits } };
    expect(oodApplies(model)).toBe(true);
    logits[3] = logits[3]! + 0.04;
    expect(oodApplies(model)).toBe(true);
    logits[3] = logits[3] + 0.5;
    expect(oodApplies(model)).toBe(false);
    expect(oodApplies({ oodOutput: 'ood_score' })).toBe(false);
    expect(oodApplies({})).toBe(false);
    // Compared up to a constant (softmax ignores it): the log-probabilities of the Python path.
    const shifted = OOD_CALIBRATION.zeroInputLogits.map((v) => v - 7.5);
    expect(
      oodApplies({ oodOutput: 'OOD_SCORE', fingerprint: { input: 'mean-colour-photo', logits: shifted } }),
    ).toBe(true);
    // The mean-colour photo's margin (0.09) is wider than the zero tensor's (0.05).
    const off = [...OOD_CALIBRATION.zeroInputLogits];
    off[0] = off[0]! + 0.07;
    expect(oodApplies({ oodOutput: 'ood_score', fingerprint: { input: 'zero-tensor', logits: off } })).toBe(
      false,
    );
    expect(
      oodApplies({ oodOutput: 'ood_score', fingerprint: { input: 'mean-colour-photo', logits: off } }),
    ).toBe(true);
  });
});
