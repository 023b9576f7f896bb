import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningServer } from '@tritonserver-ts/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GET as feedbackGET } from '../src/app/api/feedback/[id]/route';
import { POST as feedbackPOST } from '../src/app/api/feedback/route';
import { POST } from '../src/app/api/predict/route';
import { FeedbackStore, LocalBlobStore, feedbackStore } from '../src/server/feedback-store';
import type { ApiError, FeedbackRecord, Prediction } from '../src/lib/types';
import { json, photo, startEmbedded, uploadRequest, useEnv } from './helpers';

let server: RunningServer;
let dir: string;

const post = (body: unknown) =>
  feedbackPOST(
    new Request('http://localhost/api/feedback', {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    }),
  );
const get = (id: string) =>
  feedbackGET(new Request(`http://localhost/api/feedback/${id}`), { params: Promise.resolve({ id }) });

beforeAll(async () => {
  server = await startEmbedded();
  dir = mkdtempSync(join(tmpdir(), 'gg-fb-'));
  useEnv({
    TRITON_SERVER_URL: server.url,
    FOOD11_MODEL_NAME: 'food_classifier_onnx',
    FEEDBACK_STORAGE: 'local',
    FEEDBACK_DIR: dir,
    GATEWAY_LOG: 'false',
  });
});
afterAll(async () => {
  await feedbackStore()?.flush();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('feedback (local directory store)', () => {
  it('stores the upload and the prediction by id, and every concurrent flag/correction', async () => {
    const bytes = photo('N010');
    const p = await json<Prediction>(await POST(uploadRequest(bytes)));
    // Feedback right away: the store waits for the prediction save still in flight.
    const events = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        post(
          i % 2
            ? { predictionId: p.requestId, kind: 'flag', comment: `flag ${i}` }
            : { predictionId: p.requestId, kind: 'correction', correctLabel: `Label ${i}` },
        ),
      ),
    );
    for (const r of events) expect(r.status).toBe(201);
    const rec = await json<FeedbackRecord>(await get(p.requestId));
    expect(rec.events).toHaveLength(24);
    expect(new Set(rec.events.map((e) => e.comment ?? e.correctLabel)).size).toBe(24);
    for (const e of rec.events) expect(Date.parse(e.at)).toBeGreaterThan(Date.now() - 60_000);
    expect(rec.prediction).toMatchObject({
      requestId: p.requestId,
      label: p.label,
      probability: p.probability,
    });
    expect(rec.prediction?.createdAt).toBe(p.createdAt);
    // The upload is stored byte for byte.
    expect(rec.upload).toMatchObject({
      key: `uploads/${p.requestId}.jpg`,
      contentType: 'image/jpeg',
      bytes: bytes.length,
    });
    expect(readFileSync(join(dir, rec.upload!.key)).equals(bytes)).toBe(true);
    // No temp files left behind.
    expect(readdirSync(join(dir, 'feedback', p.requestId)).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('by default persists a prediction only when it gets feedback (like Gradio flagging)', async () => {
    const p = await json<Prediction>(await POST(uploadRequest(photo('A001'))));
    await feedbackStore()?.flush();
    expect(existsSync(join(dir, 'predictions', `${p.requestId}.json`))).toBe(false);
    expect((await post({ predictionId: p.requestId, kind: 'flag' })).status).toBe(201);
    expect(existsSync(join(dir, 'predictions', `${p.requestId}.json`))).toBe(true);
    expect(readFileSync(join(dir, 'uploads', `${p.requestId}.jpg`)).equals(photo('A001'))).toBe(true);
  });

  it('with FEEDBACK_SAVE_PREDICTIONS=true persists every prediction as it happens', async () => {
    useEnv({ FEEDBACK_SAVE_PREDICTIONS: 'true' });
    try {
      const p = await json<Prediction>(await POST(uploadRequest(photo('L001'))));
      await feedbackStore()?.flush();
      expect(readFileSync(join(dir, 'uploads', `${p.requestId}.jpg`)).equals(photo('L001'))).toBe(true);
      const rec = await json<FeedbackRecord>(await get(p.requestId));
      expect(rec.events).toEqual([]);
      expect(rec.prediction?.label).toBe(p.label);
    } finally {
      useEnv({ FEEDBACK_SAVE_PREDICTIONS: undefined });
    }
  });

  it('forgets the oldest unsaved predictions beyond its memory bound', async () => {
    const store = new FeedbackStore(new LocalBlobStore(dir), { entries: 2, bytes: 1024 * 1024 });
    const base = await json<Prediction>(await POST(uploadRequest(photo('A001'))));
    for (const id of ['mem-1', 'mem-2', 'mem-3']) store.remember({ ...base, requestId: id }, photo('A001'));
    await expect(store.addEvent('mem-1', { kind: 'flag' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(store.addEvent('mem-3', { kind: 'flag' })).resolves.toMatchObject({
      event: { kind: 'flag' },
      created: true,
    });
  });

  it('stores the same event once (also sent at once), answering 200 with the stored one; different ones all', async () => {
    const p = await json<Prediction>(await POST(uploadRequest(photo('P023'))));
    const correction = { predictionId: p.requestId, kind: 'correction', correctLabel: 'Seafood' };
    const first = await post(correction);
    expect(first.status).toBe(201);
    const stored = await json<FeedbackRecord['events'][number]>(first);
    // The same correction twice more, together: nothing new is written.
    const again = await Promise.all([post(correction), post(correction)]);
    expect(again.map((r) => r.status)).toEqual([200, 200]);
    for (const r of again) expect((await json<{ at: string }>(r)).at).toBe(stored.at);
    // A confirmation, a flag and another correction are other events: each stored once.
    const others = await Promise.all([
      post({ predictionId: p.requestId, kind: 'confirm' }),
      post({ predictionId: p.requestId, kind: 'confirm' }),
      post({ predictionId: p.requestId, kind: 'flag' }),
      post({ predictionId: p.requestId, kind: 'correction', correctLabel: 'Egg' }),
    ]);
    expect(others.map((r) => r.status).sort()).toEqual([200, 201, 201, 201]);
    const rec = await json<FeedbackRecord>(await get(p.requestId));
    expect(rec.events.map((e) => `${e.kind}:${e.correctLabel ?? ''}`).sort()).toEqual([
      'confirm:',
      'correction:Egg',
      'correction:Seafood',
      'flag:',
    ]);
    expect({ predictionId: p.requestId, ...rec.events[0] }).toEqual(stored);
    expect(readdirSync(join(dir, 'feedback', p.requestId))).toHaveLength(4);
  });

  it('404 for an unknown prediction, 400 for bad bodies', async () => {
    const e404 = await json<ApiError>(await post({ predictionId: 'nope-123', kind: 'flag' }));
    expect(e404.error.code).toBe('NOT_FOUND');
    expect((await get('nope-123')).status).toBe(404);
    const bad = await post({ predictionId: 'x', kind: 'correction' });
    expect(bad.status).toBe(400);
    expect((await json<ApiError>(bad)).error.code).toBe('INVALID_REQUEST');
    const notJson = await feedbackPOST(
      new Request('http://localhost/api/feedback', { method: 'POST', body: '{oops' }),
    );
    expect(notJson.status).toBe(400);
    expect((await get('../../etc')).status).toBe(400);
  });
});
