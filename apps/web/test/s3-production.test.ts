/*
 * The original GourmetGram's production layout, written through the real gateway code path (route
 * handlers, the embedded inference server, real photos) into a REAL S3 implementation started here:
 * s3rver 3.7.1 (npm), which implements PutObject/GetObject, ListObjectsV2 and GET/PUT ?tagging.
 * s3rver checks the access key id but does not verify SigV4 signatures (test/s3-store.test.ts checks
 * the signing against a labelled fake).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningServer } from '@tritonserver-ts/server';
import { AwsClient } from 'aws4fetch';
import S3rver from 's3rver';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { GET as feedbackGET } from '../src/app/api/feedback/[id]/route';
import { POST as feedbackPOST } from '../src/app/api/feedback/route';
import { POST } from '../src/app/api/predict/route';
import { GET as testGET } from '../src/app/api/test/route';
import { parseEnv } from '../src/env';
import type { FeedbackRecord, Prediction } from '../src/lib/types';
import { feedbackStore } from '../src/server/feedback-store';
import {
  contentTypeOf,
  formatConfidence,
  originalTimestamp,
  productionKey,
  tagValue,
} from '../src/server/production-layout';
import { json, photo, startEmbedded, uploadRequest, useEnv } from './helpers';

const PYTHON = '/usr/bin/python3';

let server: RunningServer;
let s3: S3rver;
let s3Dir: string;
let endpoint = '';
const aws = new AwsClient({
  accessKeyId: 'S3RVER',
  secretAccessKey: 'S3RVER',
  service: 's3',
  region: 'us-east-1',
});

/** Every key of a bucket (ListObjectsV2, read here without the app's code). */
async function keysOf(bucket: string): Promise<string[]> {
  const res = await aws.fetch(`${endpoint}/${bucket}?list-type=2`);
  if (res.status === 404) return [];
  expect(res.status).toBe(200);
  return [...(await res.text()).matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!);
}

/** An object's tags as a plain object (GetObjectTagging, read here without the app's code). */
async function tagsOf(bucket: string, key: string): Promise<Record<string, string>> {
  const res = await aws.fetch(`${endpoint}/${bucket}/${key}?tagging`);
  expect(res.status).toBe(200);
  const xml = await res.text();
  return Object.fromEntries(
    [...xml.matchAll(/<Tag><Key>([^<]*)<\/Key><Value>([^<]*)<\/Value><\/Tag>/g)].map((m) => [m[1]!, m[2]!]),
  );
}

async function objectOf(bucket: string, key: string): Promise<{ type: string | null; body: Buffer }> {
  const res = await aws.fetch(`${endpoint}/${bucket}/${key}`);
  expect(res.status).toBe(200);
  return { type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
}

/** `f"{p:.3f}"` by the real Python, for each probability. */
function pythonFixed3(values: number[]): string[] {
  const r = spawnSync(
    PYTHON,
    ['-c', 'import json,sys; print(json.dumps([f"{v:.3f}" for v in json.load(sys.stdin)]))'],
    { input: JSON.stringify(values), encoding: 'utf8' },
  );
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as string[];
}

const predict = async (bytes: Uint8Array, name: string, type = 'image/jpeg') => {
  const res = await POST(uploadRequest(bytes, { name, type }));
  expect(res.status).toBe(200);
  return json<Prediction>(res);
};
const feedback = (body: unknown) =>
  feedbackPOST(
    new Request('http://localhost/api/feedback', {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    }),
  );
const record = async (id: string) =>
  json<FeedbackRecord>(
    await feedbackGET(new Request(`http://localhost/api/feedback/${id}`), {
      params: Promise.resolve({ id }),
    }),
  );

const expectedKey = (p: Prediction, ext: string) =>
  `class_${String(p.top[0]!.index).padStart(2, '0')}/${p.requestId}${ext}`;

const S3_ENV = {
  FEEDBACK_STORAGE: undefined, // chosen from the endpoint
  MINIO_USER: 'S3RVER',
  MINIO_PASSWORD: 'S3RVER',
  S3_PRODUCTION_BUCKET: undefined,
  S3_PRODUCTION_LAYOUT: undefined,
  FEEDBACK_SAVE_PREDICTIONS: undefined,
  GATEWAY_LOG: 'false',
};

beforeAll(async () => {
  server = await startEmbedded();
  s3Dir = mkdtempSync(join(tmpdir(), 'gg-s3rver-'));
  s3 = new S3rver({ address: '127.0.0.1', port: 0, directory: s3Dir, silent: true });
  const { port } = await s3.run();
  endpoint = `http://127.0.0.1:${port}`;
  // MINIO_URL as the original set it: host:port, no scheme.
  useEnv({
    ...S3_ENV,
    TRITON_SERVER_URL: server.url,
    MINIO_URL: `127.0.0.1:${port}`,
    S3_ENDPOINT: undefined,
  });
});
afterEach(async () => {
  await feedbackStore()?.flush();
});
afterAll(async () => {
  await feedbackStore()?.flush();
  await server?.close();
  await s3?.close();
  rmSync(s3Dir, { recursive: true, force: true });
  useEnv({ MINIO_URL: undefined, MINIO_USER: undefined, MINIO_PASSWORD: undefined });
});

describe('the original production layout in a real S3 server (s3rver)', () => {
  it('writes class_NN/<uuid><ext> with the upload byte for byte and the three tags', async () => {
    const bytes = photo('N010');
    const p = await predict(bytes, 'dinner.jpg');
    await feedbackStore()!.flush();
    const key = expectedKey(p, '.jpg');
    expect(key).toMatch(
      /^class_\d{2}\/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.jpg$/,
    );
    expect(await keysOf('production')).toContain(key);
    const obj = await objectOf('production', key);
    expect(obj.body.equals(bytes)).toBe(true);
    expect(obj.type).toBe('image/jpeg');
    const tags = await tagsOf('production', key);
    expect(Object.keys(tags)).toEqual(['predicted_class', 'confidence', 'timestamp']);
    expect(tags.predicted_class).toBe(p.label);
    expect(tags.confidence).toBe(pythonFixed3([p.probability])[0]);
    expect(tags.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(tags.timestamp).toBe(`${p.createdAt.slice(0, 19)}Z`);
    // The prediction was not persisted in our own bucket (no feedback yet, the default)…
    expect((await keysOf('gourmetgram-feedback')).filter((k) => k.includes(p.requestId))).toEqual([]);
    // …and nothing but class_NN/ photos is ever in the production bucket.
    for (const k of await keysOf('production')) expect(k).toMatch(/^class_\d{2}\/[0-9a-f-]{36}\.\w+$/);
  });

  it("keeps the file name's extension and guesses the content type from it", async () => {
    const jpeg = photo('A001');
    const png = await sharp(jpeg).png().toBuffer();
    const webp = await sharp(jpeg).webp().toBuffer();
    const cases: [Uint8Array, string, string, string][] = [
      [png, 'Plate.PNG', '.PNG', 'image/png'],
      [jpeg, 'C:\\Users\\me\\lunch.jpeg', '.jpeg', 'image/jpeg'],
      [webp, 'snack.webp', '.webp', 'image/webp'],
      // No extension: named by the detected format (the original stored "<uuid>" as octet-stream).
      [png, 'pasted', '.png', 'image/png'],
    ];
    for (const [bytes, name, ext, type] of cases) {
      const p = await predict(bytes, name, type);
      await feedbackStore()!.flush();
      const obj = await objectOf('production', expectedKey(p, ext));
      expect(obj.type, name).toBe(type);
      expect(obj.body.equals(bytes), name).toBe(true);
    }
  });

  it('merges flagged=true and corrected_class=<label> into the tags, keeping the others', async () => {
    const p = await predict(photo('L001'), 'milk.jpg');
    const key = expectedKey(p, '.jpg');
    // A flag and a correction at once, right after the prediction: both wait for the object's write,
    // and neither read-modify-write loses the other's tag.
    const first = await Promise.all([
      feedback({ predictionId: p.requestId, kind: 'flag' }),
      feedback({ predictionId: p.requestId, kind: 'correction', correctLabel: 'Dessert' }),
    ]);
    for (const r of first) expect(r.status).toBe(201);
    expect(await tagsOf('production', key)).toMatchObject({
      predicted_class: p.label,
      confidence: formatConfidence(p.probability),
      flagged: 'true',
      corrected_class: 'Dessert',
    });
    // A second flag is the same event: stored once (200), nothing written; a later correction
    // replaces the earlier one; "looks right" adds confirmed=true.
    expect((await feedback({ predictionId: p.requestId, kind: 'flag' })).status).toBe(200);
    expect(
      (await feedback({ predictionId: p.requestId, kind: 'correction', correctLabel: 'Dairy product' }))
        .status,
    ).toBe(201);
    expect((await feedback({ predictionId: p.requestId, kind: 'confirm' })).status).toBe(201);
    const tags = await tagsOf('production', key);
    expect(tags).toEqual({
      predicted_class: p.label,
      confidence: formatConfidence(p.probability),
      timestamp: originalTimestamp(p.createdAt),
      flagged: 'true',
      corrected_class: 'Dairy product',
      confirmed: 'true',
    });
    // Our own record (all probabilities, timings, every event) sits in the other bucket and names the object.
    const rec = await record(p.requestId);
    expect(rec.production).toEqual({ bucket: 'production', key, contentType: 'image/jpeg' });
    expect(rec.prediction?.top).toHaveLength(11);
    expect(rec.prediction?.timings.total).toBeGreaterThan(0);
    // The second flag is not stored again.
    expect(rec.events.map((e) => e.kind).sort()).toEqual(['confirm', 'correction', 'correction', 'flag']);
    const ours = await keysOf('gourmetgram-feedback');
    expect(ours).toContain(`predictions/${p.requestId}.json`);
    expect(ours.filter((k) => k.startsWith(`feedback/${p.requestId}/`))).toHaveLength(4);
  });

  it('a correction label outside the tag alphabet is kept in our record and made tag-safe', async () => {
    const p = await predict(photo('A001'), 'a.jpg');
    const r = await feedback({
      predictionId: p.requestId,
      kind: 'correction',
      correctLabel: 'Pasta (al dente) & co',
    });
    expect(r.status).toBe(201);
    expect((await tagsOf('production', expectedKey(p, '.jpg'))).corrected_class).toBe(
      'Pasta _al dente_ _ co',
    );
    expect((await record(p.requestId)).events[0]?.correctLabel).toBe('Pasta (al dente) & co');
  });

  it('with FEEDBACK_SAVE_PREDICTIONS=true the record is saved at once and names the object', async () => {
    useEnv({ FEEDBACK_SAVE_PREDICTIONS: 'true' });
    try {
      const p = await predict(photo('A001'), 'x.jpg');
      await feedbackStore()!.flush();
      expect((await record(p.requestId)).production?.key).toBe(expectedKey(p, '.jpg'));
      expect(await keysOf('production')).toContain(expectedKey(p, '.jpg'));
    } finally {
      useEnv({ FEEDBACK_SAVE_PREDICTIONS: undefined });
    }
  });

  it('GET /api/test (the bundled photo) writes nothing, like the original /test', async () => {
    const before = await keysOf('production');
    const res = await testGET(new Request('http://localhost/api/test'));
    expect(res.status).toBe(200);
    const p = await json<Prediction>(res);
    await feedbackStore()!.flush();
    expect((await keysOf('production')).filter((k) => k.includes(p.requestId))).toEqual([]);
    expect((await keysOf('production')).length).toBe(before.length);
  });

  it('S3_PRODUCTION_BUCKET names the bucket; S3_PRODUCTION_LAYOUT=false turns the layout off', async () => {
    useEnv({ S3_PRODUCTION_BUCKET: 'prod-photos' });
    try {
      const p = await predict(photo('A001'), 'y.jpg');
      await feedbackStore()!.flush();
      expect(await keysOf('prod-photos')).toEqual([expectedKey(p, '.jpg')]);
    } finally {
      useEnv({ S3_PRODUCTION_BUCKET: undefined });
    }
    useEnv({ S3_PRODUCTION_LAYOUT: 'false' });
    try {
      const p = await predict(photo('A001'), 'z.jpg');
      await feedbackStore()!.flush();
      expect(feedbackStore()!.production).toBeUndefined();
      expect((await keysOf('production')).filter((k) => k.includes(p.requestId))).toEqual([]);
    } finally {
      useEnv({ S3_PRODUCTION_LAYOUT: undefined });
    }
  });
});

describe('S3 failures never cost the prediction', () => {
  it('S3 unreachable: predict answers 200 as usual; the failure is logged and counted', async () => {
    // A port with nothing listening.
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const port = (dead.address() as { port: number }).port;
    await new Promise<void>((r) => dead.close(() => r()));
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const saved = process.env.MINIO_URL;
    useEnv({ MINIO_URL: `127.0.0.1:${port}` });
    try {
      const p = await predict(photo('N010'), 'dinner.jpg');
      expect(p.top).toHaveLength(11);
      const store = feedbackStore()!;
      await store.flush();
      expect(store.production?.counts).toMatchObject({ objectsWritten: 0, objectWriteFailures: 1 });
      const logged = out.mock.calls.map((c) => String(c[0])).filter((l) => l.includes('production layout'));
      expect(logged).toHaveLength(1);
      expect(JSON.parse(logged[0]!)).toMatchObject({
        level: 'error',
        msg: 'production layout: writing the object failed',
        bucket: 'production',
        key: expectedKey(p, '.jpg'),
      });
    } finally {
      out.mockRestore();
      useEnv({ MINIO_URL: saved });
    }
  });

  it('S3 silent: attempts abandoned after S3_TIMEOUT_MS, held bytes bounded, predict answers at once', async () => {
    // Accepts connections and never answers.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const saved = process.env.MINIO_URL;
    const bytes = photo('N010');
    // Room for two uploads being written, not three.
    useEnv({
      MINIO_URL: `127.0.0.1:${port}`,
      S3_TIMEOUT_MS: '200',
      S3_PRODUCTION_MAX_PENDING_BYTES: String(Math.floor(bytes.length * 2.5)),
    });
    try {
      const t0 = performance.now();
      const ps = [];
      for (let i = 0; i < 3; i++) ps.push(await predict(bytes, `dinner-${i}.jpg`));
      expect(performance.now() - t0).toBeLessThan(5000);
      const store = feedbackStore()!;
      expect(store.production?.counts).toMatchObject({ objectWriteFailures: 0, dropped: 1 }); // two still trying
      const f0 = performance.now();
      await store.flush();
      // Three attempts of 200 ms of silence each (plus backoff), then given up.
      expect(performance.now() - f0).toBeGreaterThan(500);
      expect(store.production?.counts).toMatchObject({
        objectsWritten: 0,
        objectWriteFailures: 2,
        dropped: 1,
      });
      const logged = out.mock.calls
        .map((c) => String(c[0]))
        .filter((l) => l.includes('production layout'))
        .map((l) => JSON.parse(l) as { level: string; key: string; err?: string });
      expect(logged.map((l) => [l.level, l.key])).toEqual([
        ['warn', expectedKey(ps[2]!, '.jpg')], // dropped
        ['error', expectedKey(ps[0]!, '.jpg')],
        ['error', expectedKey(ps[1]!, '.jpg')],
      ]);
      expect(logged[1]?.err).toMatch(/no answer within 200 ms/);
      // Once the writes have ended, the bound is free again.
      await predict(bytes, 'later.jpg');
      expect(store.production?.counts.dropped).toBe(1);
      await store.flush();
    } finally {
      out.mockRestore();
      useEnv({ MINIO_URL: saved, S3_TIMEOUT_MS: undefined, S3_PRODUCTION_MAX_PENDING_BYTES: undefined });
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it('production object gone: the feedback is stored (201) and the tag failure counted', async () => {
    const p = await predict(photo('A001'), 'gone.jpg');
    const store = feedbackStore()!;
    await store.flush();
    const before = { ...store.production!.counts };
    const del = await aws.fetch(`${endpoint}/production/${expectedKey(p, '.jpg')}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect((await feedback({ predictionId: p.requestId, kind: 'flag' })).status).toBe(201);
    } finally {
      out.mockRestore();
    }
    expect(store.production!.counts.tagUpdateFailures).toBe(before.tagUpdateFailures + 1);
    expect((await record(p.requestId)).events).toHaveLength(1);
  });
});

describe('production layout rules', () => {
  it('confidence is written as Python writes f"{p:.3f}" (ties to even included)', () => {
    const values = [
      ...Array.from({ length: 16 }, (_, i) => i / 16),
      1,
      0,
      0.0005,
      0.9995,
      0.1234999,
      0.5555,
      ...Array.from({ length: 300 }, (_, i) => ((i * 7919) % 10007) / 10007),
    ];
    expect(values.map(formatConfidence)).toEqual(pythonFixed3(values));
  });

  it("content types match Python's mimetypes.guess_type for the image extensions", () => {
    const exts = [
      'jpg',
      'jpeg',
      'JPG',
      'Jpeg',
      'jpe',
      'png',
      'PNG',
      'gif',
      'webp',
      'tif',
      'tiff',
      'avif',
      'bmp',
    ];
    const r = spawnSync(
      PYTHON,
      [
        '-c',
        'import json,sys,mimetypes; print(json.dumps([mimetypes.guess_type("a."+e)[0] for e in json.load(sys.stdin)]))',
      ],
      { input: JSON.stringify(exts), encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(exts.map((e) => contentTypeOf(`.${e}`))).toEqual(JSON.parse(r.stdout));
    expect(contentTypeOf('')).toBe('application/octet-stream');
  });

  it('a label-only prediction (Python-backend path) takes its index from the original class list', () => {
    const base = { requestId: 'r1', image: { format: 'jpeg', width: 1, height: 1 } };
    expect(
      productionKey(
        { ...base, label: 'Seafood', top: [{ index: -1, label: 'Seafood', probability: 1 }] },
        'a.jpg',
      ),
    ).toEqual({ key: 'class_08/r1.jpg', contentType: 'image/jpeg' });
    expect(
      productionKey({ ...base, label: 'Bread', top: [{ index: -1, label: 'Bread', probability: 1 }] }, 'a'),
    ).toEqual({ key: 'class_00/r1.jpg', contentType: 'image/jpeg' });
    expect(
      productionKey(
        { ...base, label: 'Pizza', top: [{ index: -1, label: 'Pizza', probability: 1 }] },
        'a.jpg',
      ),
    ).toBeUndefined();
  });

  it('timestamps are UTC to the second; tag values stay within the S3/MinIO alphabet', () => {
    expect(originalTimestamp('2026-11-21T10:49:50.999Z')).toBe('2026-11-21T10:49:50Z');
    expect(tagValue('Vegetable/Fruit')).toBe('Vegetable/Fruit');
    expect(tagValue('Crème brûlée=1')).toBe('Cr_me br_l_e_1');
    expect(tagValue('x'.repeat(300))).toHaveLength(256);
  });

  it('refuses the same bucket for our records and the production layout', () => {
    expect(() => parseEnv({ S3_ENDPOINT: 'http://minio:9000', S3_BUCKET: 'production' })).toThrow(
      /S3_BUCKET: must differ from S3_PRODUCTION_BUCKET/,
    );
    expect(
      parseEnv({ S3_ENDPOINT: 'http://minio:9000', S3_BUCKET: 'production', S3_PRODUCTION_LAYOUT: 'false' })
        .feedback.storage,
    ).toBe('s3');
    expect(() => parseEnv({ S3_PRODUCTION_BUCKET: 'Bad_Bucket' })).toThrow(/S3_PRODUCTION_BUCKET/);
  });
});
