/**
 * Every inference path gives the same kind of answer: a fixed set of held-back food photos (the
 * build's 69 held-out IFCT photos, never trained on) and clearly-not-food images (the calibration's
 * 66 from Debian's opencv-doc and python3-skimage) go through `POST /api/predict` on the tensor path
 * (`food_classifier_onnx`), the Python-backend path (`food_classifier`) and the ensemble path
 * (`food_classifier_ensemble`) of the real embedded server; each image must get the same verdict
 * (kind, rule and label) on all three, with all 11 probabilities and the out-of-distribution signal.
 * The verdict counts per set are printed (the figures in README.md), and a tiny and a flat image are
 * refused the same way on every path.
 */
import { readFileSync } from 'node:fs';
import { NONFOOD_IMAGES, nonFoodPath } from '@gourmetgram/food-model';
import card from '@gourmetgram/food-model/model-card.json';
import sharp from 'sharp';
import type { RunningServer } from '@tritonserver-ts/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POST } from '../src/app/api/predict/route';
import type { ApiError, Prediction, VerdictKind } from '../src/lib/types';
import { json, photo, startEmbedded, useEnv } from './helpers';

const PATHS = {
  tensor: 'food_classifier_onnx',
  python: 'food_classifier',
  ensemble: 'food_classifier_ensemble',
} as const;
type Path = keyof typeof PATHS;

interface Item {
  set: 'held-out food' | 'non-food photo' | 'non-food graphic';
  name: string;
  bytes: Buffer;
}

let server: RunningServer;

function upload(bytes: Uint8Array, name: string, model: string): Request {
  const form = new FormData();
  const type = name.endsWith('.png') ? 'image/png' : name.endsWith('.tif') ? 'image/tiff' : 'image/jpeg';
  form.set('file', new Blob([new Uint8Array(bytes)], { type }), name);
  form.set('model', model);
  return new Request('http://localhost/api/predict', { method: 'POST', body: form });
}

async function predict(item: Item, path: Path): Promise<Prediction> {
  const res = await POST(upload(item.bytes, item.name, PATHS[path]));
  const body = await json<Prediction | ApiError>(res);
  if ('error' in body)
    throw new Error(`${item.name} on ${path}: ${res.status} ${body.error.code} ${body.error.message}`);
  return body;
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

beforeAll(async () => {
  server = await startEmbedded();
  useEnv({
    TRITON_PROTOCOL: 'http',
    TRITON_SERVER_URL: server.url,
    TRITON_GRPC_URL: undefined,
    FOOD11_MODEL_NAME: 'food_classifier_onnx',
    FOOD11_MODEL_CHOICES: undefined,
    FOOD11_MODEL_VERSION: '',
    INFERENCE_TIMEOUT_MS: '30000',
    FEEDBACK_STORAGE: 'none',
    GATEWAY_LOG: 'false',
  });
});
afterAll(() => server?.close());

describe('the same verdict on every inference path (tensor, Python backend, ensemble)', () => {
  it('held-out food photos and non-food images: same verdict, 11 probabilities and the OOD signal on each path', async () => {
    const items: Item[] = [
      ...card.heldOut.map((h) => ({
        set: 'held-out food' as const,
        name: `${h.code}.jpeg`,
        bytes: photo(h.code),
      })),
      ...NONFOOD_IMAGES.map((image) => ({
        set: image.kind === 'photo' ? ('non-food photo' as const) : ('non-food graphic' as const),
        name: image.file,
        bytes: readFileSync(nonFoodPath(image)),
      })),
    ];
    expect(items.length).toBe(69 + 66);
    const answers = await mapLimit(items, 4, async (item) => {
      const [tensor, python, ensemble] = [
        await predict(item, 'tensor'),
        await predict(item, 'python'),
        await predict(item, 'ensemble'),
      ];
      return { item, byPath: { tensor, python, ensemble } };
    });
    const counts: Record<string, Record<VerdictKind, number>> = {};
    const disagreements: string[] = [];
    let worstScore = 0;
    for (const { item, byPath } of answers) {
      const t = byPath.tensor;
      for (const path of ['python', 'ensemble'] as const) {
        const p = byPath[path];
        expect(p.model.path, item.name).toBe(path);
        expect(p.top, `${item.name} ${path}`).toHaveLength(11);
        expect(p.outOfDistribution, `${item.name} ${path}`).not.toBeNull();
        // Same model behind every path; Pillow (server side) and the gateway's port preprocess alike,
        // except photos over 2 MP, which the tensor path reduces with libvips (see image-preprocess).
        worstScore = Math.max(worstScore, Math.abs(p.outOfDistribution!.score - t.outOfDistribution!.score));
        const same = (v: Prediction) => `${v.verdict.kind}/${v.verdict.reason}/${v.verdict.label}`;
        if (same(p) !== same(t)) disagreements.push(`${item.name}: tensor ${same(t)}, ${path} ${same(p)}`);
      }
      counts[item.set] ??= { likely: 0, unsure: 0, unfamiliar: 0 };
      counts[item.set]![t.verdict.kind]++;
    }
    console.log('verdicts per set (identical on every path):', JSON.stringify(counts, null, 1));
    console.log(`largest out-of-distribution score difference between paths: ${worstScore.toFixed(4)}`);
    const confident = answers.filter(
      (a) => a.item.set !== 'held-out food' && a.byPath.tensor.probability >= 0.8,
    );
    console.log(
      `non-food with a top probability >= 80 % (the old page: "The model is confident."): ${confident.length}, of which flagged: ${confident.filter((a) => a.byPath.tensor.outOfDistribution!.flagged).length}`,
    );
    const truth = new Map(card.heldOut.map((h) => [`${h.code}.jpeg`, h.label]));
    const likely = answers.filter((a) => a.byPath.tensor.verdict.kind === 'likely');
    const wrongFood = likely.filter(
      (a) => a.item.set === 'held-out food' && truth.get(a.item.name) !== a.byPath.tensor.verdict.label,
    );
    console.log(
      `"likely" on held-out food that names the wrong class: ${wrongFood.map((a) => `${a.item.name} (${a.byPath.tensor.verdict.label})`).join(', ')}`,
    );
    console.log(
      `"likely" on non-food: ${likely
        .filter((a) => a.item.set !== 'held-out food')
        .map((a) => `${a.item.name} (${a.byPath.tensor.verdict.label})`)
        .join(', ')}`,
    );
    expect(disagreements).toEqual([]);
    expect(worstScore).toBeLessThan(0.02);
    // Food the model knows mostly gets a label; non-food mostly none.
    const food = counts['held-out food']!;
    expect(food.likely).toBeGreaterThanOrEqual(40);
    const photos = counts['non-food photo']!;
    expect(photos.likely).toBeLessThanOrEqual(3);
  });

  it('a tiny image and a flat colour are refused (422) on every path, before any model runs', async () => {
    const tiny = await sharp(photo('P023')).resize(20, 12).png().toBuffer();
    const flat = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#4a8' } })
      .jpeg()
      .toBuffer();
    for (const path of Object.keys(PATHS) as Path[]) {
      for (const [bytes, name, code] of [
        [tiny, 'tiny.png', 'IMAGE_TOO_SMALL'],
        [flat, 'flat.jpg', 'IMAGE_UNIFORM'],
      ] as const) {
        const res = await POST(upload(bytes, name, PATHS[path]));
        expect([res.status, (await json<ApiError>(res)).error.code], `${name} on ${path}`).toEqual([
          422,
          code,
        ]);
      }
    }
  });
});
