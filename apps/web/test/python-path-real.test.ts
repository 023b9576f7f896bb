/**
 * The web app's Python path end to end on the REAL embedded server: real IFCT photos go through
 * `POST /api/predict` to `food_classifier` (models_staging/food_classifier/1/model.py in a Python
 * backend stub under /usr/bin/python3), whose BLS request runs the real `food_classifier_onnx`. The
 * same photos through the tensor path (the gateway's sharp preprocessing, FP32 tensor to
 * `food_classifier_onnx`) must give the same top label; bad uploads get the gateway's error statuses
 * before any model sees them; a photo the gateway accepts but the model cannot decode is the model's
 * own error. Faults the real server cannot be made to show (a model that hangs, a cancelled call in
 * flight) stay in python-path.test.ts, against the labelled stand-in.
 */
import sharp from 'sharp';
import type { RunningServer } from '@tritonserver-ts/server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { POST } from '../src/app/api/predict/route';
import { GET as version } from '../src/app/api/version/route';
import type { ApiError, Prediction } from '../src/lib/types';
import { json, photo, pngClaiming, serverEnv, startEmbedded, uploadRequest, useEnv } from './helpers';

/** Real photos of several classes (IFCT 2017 codes: fish, cereal, vegetable, milk, egg, meat). */
const PHOTOS = ['P005', 'A012', 'D010', 'L002', 'M003', 'O001'];

let server: RunningServer;

beforeAll(async () => {
  server = await startEmbedded();
});
afterAll(() => server?.close());

async function predict(model: string, bytes: Uint8Array, name = 'photo.jpg'): Promise<Response> {
  useEnv({ FOOD11_MODEL_NAME: model });
  return POST(uploadRequest(bytes, { name }));
}

/** An upload with `model` fields (the picker's choice), to the gateway's default model otherwise. */
function pickRequest(bytes: Uint8Array, ...models: string[]): Request {
  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(bytes)], { type: 'image/jpeg' }), 'photo.jpg');
  for (const m of models) form.append('model', m);
  return new Request('http://localhost/api/predict', { method: 'POST', body: form });
}

describe.each(['http', 'grpc'] as const)(
  'the Python path on the real embedded server over %s',
  (protocol) => {
    beforeEach(() => {
      useEnv({
        ...serverEnv(server, protocol),
        FOOD11_MODEL_VERSION: '',
        INFERENCE_TIMEOUT_MS: '20000',
        FEEDBACK_STORAGE: 'none',
        GATEWAY_LOG: 'false',
      });
    });

    it('both GourmetGram models are READY on the embedded server', async () => {
      for (const model of ['food_classifier', 'food_classifier_onnx']) {
        const res = await fetch(`${server.url}/v2/models/${model}/ready`);
        expect(res.status, model).toBe(200);
      }
    });

    it('agrees with the tensor path on the top label of real photos', async () => {
      const photos = protocol === 'http' ? PHOTOS : PHOTOS.slice(0, 2);
      const labels = new Set<string>();
      for (const code of photos) {
        const bytes = photo(code);
        const tensorRes = await predict('food_classifier_onnx', bytes);
        expect(tensorRes.status, code).toBe(200);
        const tensor = await json<Prediction>(tensorRes);
        const pythonRes = await predict('food_classifier', bytes);
        expect(pythonRes.status, code).toBe(200);
        const python = await json<Prediction>(pythonRes);
        expect(tensor.model).toMatchObject({ name: 'food_classifier_onnx', path: 'tensor' });
        expect(python.model).toEqual({
          name: 'food_classifier',
          version: '1',
          backend: 'python',
          path: 'python',
        });
        expect(python.label, code).toBe(tensor.label);
        // model.py (Pillow) preprocesses as the gateway (sharp) does, and the same ONNX model runs: the
        // probabilities differ only by model.py's float32 softmax (measured: below 1e-7).
        expect(Math.abs(python.probability - tensor.probability), code).toBeLessThan(1e-5);
        // Every class (PROBABILITIES), in the same order, and the out-of-distribution score (OOD_SCORE).
        expect(python.top.map((t) => [t.index, t.label])).toEqual(tensor.top.map((t) => [t.index, t.label]));
        python.top.forEach((t, i) =>
          expect(Math.abs(t.probability - tensor.top[i]!.probability), code).toBeLessThan(1e-5),
        );
        expect(python.outOfDistribution, code).not.toBeNull();
        expect(Math.abs(python.outOfDistribution!.score - tensor.outOfDistribution!.score)).toBeLessThan(
          1e-4,
        );
        expect(python.outOfDistribution!.flagged).toBe(tensor.outOfDistribution!.flagged);
        expect(python.verdict, code).toMatchObject({
          kind: tensor.verdict.kind,
          reason: tensor.verdict.reason,
          label: tensor.verdict.label,
        });
        expect(python.image).toEqual(tensor.image);
        expect(python.timings.infer).toBeGreaterThan(0);
        labels.add(python.label);
      }
      // Photos of different classes, so agreeing is not one label repeated.
      expect(labels.size).toBeGreaterThanOrEqual(Math.min(photos.length, 4));
    });

    it('refuses bad uploads with the gateway statuses before the model is called', async () => {
      const inferred = async () => {
        const stats = (await (await fetch(`${server.url}/v2/models/food_classifier/stats`)).json()) as {
          model_stats: { inference_stats: { success: { count: number }; fail: { count: number } } }[];
        };
        const s = stats.model_stats[0]!.inference_stats;
        return s.success.count + s.fail.count;
      };
      // The model's info is read once (its warm-up calls count in the statistics), then the uploads.
      useEnv({ FOOD11_MODEL_NAME: 'food_classifier' });
      expect((await POST(uploadRequest(photo('P005')))).status).toBe(200);
      const before = await inferred();
      const tiny = await sharp(photo('P005')).resize(16, 12).png().toBuffer();
      const flat = await sharp({
        create: { width: 200, height: 120, channels: 3, background: { r: 200, g: 40, b: 40 } },
      })
        .jpeg()
        .toBuffer();
      const cases: [string, Uint8Array, number, string][] = [
        ['text', Buffer.from('not an image at all'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
        ['svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
        ['empty', new Uint8Array(0), 400, 'EMPTY_FILE'],
        ['truncated', photo('P005').subarray(0, 2000), 400, 'CORRUPT_IMAGE'],
        ['pixel bomb', pngClaiming(60_000, 60_000), 400, 'TOO_MANY_PIXELS'],
        ['16×12 photo', tiny, 422, 'IMAGE_TOO_SMALL'],
        ['one flat colour', flat, 422, 'IMAGE_UNIFORM'],
      ];
      for (const [what, bytes, status, code] of cases) {
        const res = await POST(uploadRequest(bytes));
        const body = await json<ApiError>(res);
        expect([res.status, body.error.code], what).toEqual([status, code]);
      }
      expect(await inferred()).toBe(before);
    });

    it('answers the model’s own error (502) for a photo the gateway reads but model.py cannot', async () => {
      // AVIF: sharp (the gateway) decodes it; Pillow 9 in /usr/bin/python3 cannot, so model.py answers
      // an error response for that request, which Triton sends as the infer call's error.
      const avif = await sharp(photo('P005')).resize(64, 64).avif().toBuffer();
      expect((await predict('food_classifier_onnx', avif)).status).toBe(200);
      const res = await predict('food_classifier', avif);
      const body = await json<ApiError>(res);
      expect(res.status, JSON.stringify(body)).toBe(502);
      expect(body.error.code).toBe('INFERENCE_FAILED');
      expect(body.error.message).toMatch(/row 0|cannot|identify|decode/i);
      // The model is still READY and serves the next photo.
      expect((await predict('food_classifier', photo('S005'))).status).toBe(200);
    });

    it('runs the model a request picks (the `model` field), among FOOD11_MODEL_CHOICES only', async () => {
      useEnv({ FOOD11_MODEL_NAME: 'food_classifier_onnx', FOOD11_MODEL_CHOICES: undefined });
      const bytes = photo('A012');
      const byDefault = await json<Prediction>(await POST(pickRequest(bytes)));
      expect(byDefault.model).toMatchObject({ name: 'food_classifier_onnx', path: 'tensor' });
      const python = await json<Prediction>(await POST(pickRequest(bytes, 'food_classifier')));
      expect(python.model).toMatchObject({ name: 'food_classifier', path: 'python' });
      expect(python.label).toBe(byDefault.label);
      const tensor = await json<Prediction>(await POST(pickRequest(bytes, 'food_classifier_onnx')));
      expect(tensor.model.path).toBe('tensor');
      // Any other model of the server (the ensemble's preprocessing step, say) is not the gateway's
      // to call; nor are two choices at once.
      for (const models of [['food_preprocess'], ['food_classifier', 'food_classifier_onnx']]) {
        const res = await POST(pickRequest(bytes, ...models));
        const body = await json<ApiError>(res);
        expect([res.status, body.error.code], models.join()).toEqual([400, 'INVALID_REQUEST']);
      }
      // FOOD11_MODEL_CHOICES narrows the list; the default model is always allowed.
      useEnv({ FOOD11_MODEL_CHOICES: 'food_classifier_onnx' });
      expect((await POST(pickRequest(bytes, 'food_classifier'))).status).toBe(400);
      expect((await POST(pickRequest(bytes, 'food_classifier_onnx'))).status).toBe(200);
      useEnv({ FOOD11_MODEL_CHOICES: undefined });
    });

    it('GET /api/version lists the models a request may pick, with their paths', async () => {
      useEnv({ FOOD11_MODEL_NAME: 'food_classifier_onnx' });
      const v = await json<{ models: unknown[] }>(await version());
      // Every path carries the calibrated out-of-distribution signal (the demo model behind each).
      expect(v.models).toEqual([
        {
          name: 'food_classifier_onnx',
          default: true,
          version: '1',
          backend: 'onnxruntime',
          path: 'tensor',
          outOfDistribution: true,
        },
        {
          name: 'food_classifier',
          default: false,
          version: '1',
          backend: 'python',
          path: 'python',
          outOfDistribution: true,
        },
        {
          name: 'food_classifier_ensemble',
          default: false,
          version: '1',
          backend: 'ensemble',
          path: 'ensemble',
          outOfDistribution: true,
        },
      ]);
    });
  },
);
