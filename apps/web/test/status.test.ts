import type { RunningServer } from '@tritonserver-ts/server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GET as healthGET } from '../src/app/api/health/route';
import { POST } from '../src/app/api/predict/route';
import { GET as statsGET } from '../src/app/api/stats/route';
import { GET as versionGET } from '../src/app/api/version/route';
import { GET as examplesGET } from '../src/app/api/examples/route';
import { GET as exampleGET } from '../src/app/api/examples/[code]/route';
import { parseEnv } from '../src/env';
import type { Health, ModelStats } from '../src/lib/types';
import { json, photo, startEmbedded, uploadRequest, useEnv } from './helpers';

let server: RunningServer;
beforeAll(async () => {
  server = await startEmbedded();
});
afterAll(() => server?.close());
beforeEach(() =>
  useEnv({
    TRITON_SERVER_URL: server.url,
    FOOD11_MODEL_NAME: undefined,
    FEEDBACK_STORAGE: 'none',
    GATEWAY_LOG: 'false',
  }),
);

describe('GET /api/health', () => {
  it('reports server live and model ready', async () => {
    const res = await healthGET();
    expect(res.status).toBe(200);
    const h = await json<Health>(res);
    expect(h).toMatchObject({
      app: 'ok',
      ok: true,
      server: { live: true },
      model: { name: 'food_classifier_onnx', ready: true },
    });
  });

  it('503 with the cause when the server is down', async () => {
    const s = await startEmbedded();
    await s.close();
    useEnv({ TRITON_SERVER_URL: s.url });
    const res = await healthGET();
    expect(res.status).toBe(503);
    const h = await json<Health>(res);
    expect(h).toMatchObject({ app: 'ok', ok: false, server: { live: false }, model: { ready: false } });
    expect(h.server.error).toMatch(/not reachable/);
  });
});

describe('GET /api/version', () => {
  it('names the app and the served model with its labels', async () => {
    const v = await json<{
      app: string;
      version: string;
      model: { name: string; backend: string; labels: string[] };
    }>(await versionGET());
    expect(v.app).toBe('@gourmetgram/web');
    expect(v.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(v.model.name).toBe('food_classifier_onnx');
    expect(v.model.backend).toBe('onnxruntime');
    expect(v.model.labels).toHaveLength(11);
    expect(v.model.labels[0]).toBe('Bread');
  });
});

describe('GET /api/stats', () => {
  it('reflects inferences made through the gateway', async () => {
    const before = await json<ModelStats>(await statsGET(new Request('http://localhost/api/stats')));
    for (let i = 0; i < 3; i++) expect((await POST(uploadRequest(photo('A001')))).status).toBe(200);
    const after = await json<ModelStats>(await statsGET(new Request('http://localhost/api/stats')));
    expect(after.name).toBe('food_classifier_onnx');
    expect(after.success.count - before.success.count).toBeGreaterThanOrEqual(3);
    expect(after.inferenceCount).toBeGreaterThan(before.inferenceCount);
    expect(after.queue.count).toBeGreaterThanOrEqual(after.success.count - 1);
    expect(after.computeInfer.ms).toBeGreaterThan(0);
    expect(after.batches.reduce((s, b) => s + b.count, 0)).toBeGreaterThan(0);
  });

  it('503 when the server is down', async () => {
    useEnv({ TRITON_SERVER_URL: '127.0.0.1:9' });
    expect((await statsGET(new Request('http://localhost/api/stats'))).status).toBe(503);
  });
});

describe('examples', () => {
  it('lists the gallery and serves each photo from node_modules', async () => {
    const list = await json<{ examples: { code: string; url: string; alt: string }[] }>(examplesGET());
    expect(list.examples.length).toBeGreaterThanOrEqual(6);
    const first = list.examples[0]!;
    const res = await exampleGET(new Request(`http://localhost${first.url}`), {
      params: Promise.resolve({ code: first.code }),
    });
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.from(await res.arrayBuffer()).equals(photo(first.code))).toBe(true);
    const bad = await exampleGET(new Request('http://localhost/api/examples/..'), {
      params: Promise.resolve({ code: '../../etc/passwd' }),
    });
    expect(bad.status).toBe(404);
  });
});

describe('env', () => {
  it('accepts the original bare host:port and full URLs with a base path', () => {
    expect(parseEnv({ TRITON_SERVER_URL: 'triton:8000' }).tritonUrl).toBe('http://triton:8000');
    expect(parseEnv({ TRITON_SERVER_URL: 'https://example.org/triton/' }).tritonUrl).toBe(
      'https://example.org/triton',
    );
    expect(parseEnv({}).modelName).toBe('food_classifier_onnx');
    expect(
      parseEnv({ MINIO_URL: 'minio:9000', MINIO_USER: 'u', MINIO_PASSWORD: 'p' }).feedback,
    ).toMatchObject({
      storage: 's3',
      s3: { endpoint: 'http://minio:9000', accessKeyId: 'u', secretAccessKey: 'p' },
    });
  });

  it('names every bad variable', () => {
    expect(() => parseEnv({ INFERENCE_TIMEOUT_MS: 'soon', TRITON_SERVER_URL: 'ftp://x' })).toThrow(
      /INFERENCE_TIMEOUT_MS.*|TRITON_SERVER_URL/,
    );
    expect(() => parseEnv({ FEEDBACK_STORAGE: 's3' })).toThrow(/S3_ENDPOINT/);
  });
});
