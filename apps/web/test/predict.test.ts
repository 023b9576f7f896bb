import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningServer } from '@tritonserver-ts/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POST } from '../src/app/api/predict/route';
import { feedbackStore } from '../src/server/feedback-store';
import { GET as testGET } from '../src/app/api/test/route';
import card from '@gourmetgram/food-model/model-card.json';
import { EXAMPLES } from '../src/server/gallery';
import type { Prediction } from '../src/lib/types';
import { json, photo, startEmbedded, uploadRequest, useEnv } from './helpers';

let server: RunningServer;
let feedbackDir: string;

beforeAll(async () => {
  server = await startEmbedded();
  feedbackDir = mkdtempSync(join(tmpdir(), 'gg-feedback-'));
  useEnv({
    TRITON_SERVER_URL: server.url.replace(/^http:\/\//, ''),
    FEEDBACK_DIR: feedbackDir,
    GATEWAY_LOG: 'false',
  });
});
afterAll(async () => {
  await feedbackStore()?.flush();
  await server?.close();
  rmSync(feedbackDir, { recursive: true, force: true });
});

describe('POST /api/predict on the embedded server (tensor path)', () => {
  it('classifies a real photo: label, probability, every class sorted, model, timings, requestId', async () => {
    const res = await POST(uploadRequest(photo('P005')));
    expect(res.status).toBe(200);
    const p = await json<Prediction>(res);
    expect(p.top).toHaveLength(11);
    expect(p.top.map((t) => t.label).sort()).toEqual(
      [
        'Bread',
        'Dairy product',
        'Dessert',
        'Egg',
        'Fried food',
        'Meat',
        'Noodles/Pasta',
        'Rice',
        'Seafood',
        'Soup',
        'Vegetable/Fruit',
      ].sort(),
    );
    for (let i = 1; i < p.top.length; i++)
      expect(p.top[i - 1]!.probability).toBeGreaterThanOrEqual(p.top[i]!.probability);
    expect(p.top.reduce((s, t) => s + t.probability, 0)).toBeCloseTo(1, 6);
    expect(p.label).toBe(p.top[0]!.label);
    expect(p.probability).toBe(p.top[0]!.probability);
    expect(p.model).toEqual({
      name: 'food_classifier_onnx',
      version: '1',
      backend: 'onnxruntime',
      path: 'tensor',
    });
    expect(p.image).toMatchObject({ format: 'jpeg', width: 307 });
    for (const k of ['decode', 'preprocess', 'infer', 'postprocess', 'total'] as const)
      expect(p.timings[k]).toBeGreaterThanOrEqual(0);
    expect(p.timings.total).toBeGreaterThanOrEqual(p.timings.infer);
    expect(p.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('x-request-id')).toBe(p.requestId);
  });

  it('the gallery holds held-out photos only, and the served model answers them as the build did', async () => {
    const heldOut = new Set(card.heldOut.map((h) => h.code));
    expect(EXAMPLES.length).toBe(8);
    expect(EXAMPLES.filter((ex) => !heldOut.has(ex.code))).toEqual([]);
    const results: string[] = [];
    for (const ex of EXAMPLES) {
      const p = await json<Prediction>(await POST(uploadRequest(photo(ex.code))));
      results.push(
        `${ex.code} ${ex.expected} → ${p.label} ${(p.probability * 100).toFixed(1)}% ${p.verdict.kind}`,
      );
      expect(p.label, ex.code).toBe(ex.modelSays);
      expect(p.verdict.kind, ex.code).toBe(ex.verdict);
      expect(ex.right).toBe(ex.modelSays === ex.expected);
    }
    console.log(results.join('\n'));
    // Right and wrong answers alike: at least one the model gets wrong with a confident verdict.
    expect(EXAMPLES.filter((ex) => ex.right && ex.verdict === 'likely').length).toBeGreaterThanOrEqual(4);
    expect(EXAMPLES.some((ex) => !ex.right && ex.verdict === 'likely')).toBe(true);
    expect(EXAMPLES.some((ex) => ex.verdict === 'unsure')).toBe(true);
  });

  it('generates prediction ids itself (a caller cannot pick one and overwrite a stored prediction)', async () => {
    const req = uploadRequest(photo('A001'));
    req.headers.set('x-request-id', 'my-trace-42');
    const p = await json<Prediction>(await POST(req));
    expect(p.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const again = await json<Prediction>(await POST(uploadRequest(photo('A001'))));
    expect(again.requestId).not.toBe(p.requestId);
  });

  it('GET /api/test classifies the bundled photo', async () => {
    const res = await testGET(new Request('http://localhost/api/test'));
    expect(res.status).toBe(200);
    const p = await json<Prediction>(res);
    expect(p.top).toHaveLength(11);
    expect(p.label).toBe('Rice');
  });

  it('serves concurrent uploads correctly (same photo, same answer)', async () => {
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        POST(uploadRequest(photo(i % 2 ? 'L001' : 'P005'))).then((r) => json<Prediction>(r)),
      ),
    );
    const byPhoto = [results.filter((_, i) => i % 2), results.filter((_, i) => !(i % 2))];
    for (const group of byPhoto) {
      for (const p of group)
        expect(p.top.map((t) => t.probability)).toEqual(group[0]!.top.map((t) => t.probability));
    }
  });
});
