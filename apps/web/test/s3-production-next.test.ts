/*
 * The original production layout end to end through the production build (`next start`): a real
 * multipart upload over HTTP, a flag over HTTP, and the objects read back from a REAL S3 server
 * started here (s3rver 3.7.1, which implements object tagging; it checks the access key id, not the
 * SigV4 signature). Inference: the embedded server with the real ONNX model.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunningServer } from '@tritonserver-ts/server';
import { AwsClient } from 'aws4fetch';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Prediction } from '../src/lib/types';
import { formatConfidence } from '../src/server/production-layout';
import { json, photo, startEmbedded } from './helpers';

const web = fileURLToPath(new URL('..', import.meta.url));
let server: RunningServer;
let s3: S3rver;
let s3Dir: string;
let s3Url = '';
let next: ChildProcess;
let url = '';
const aws = new AwsClient({
  accessKeyId: 'S3RVER',
  secretAccessKey: 'S3RVER',
  service: 's3',
  region: 'us-east-1',
});

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

async function tagsOf(key: string): Promise<Record<string, string>> {
  const res = await aws.fetch(`${s3Url}/production/${key}?tagging`);
  expect(res.status).toBe(200);
  return Object.fromEntries(
    [...(await res.text()).matchAll(/<Tag><Key>([^<]*)<\/Key><Value>([^<]*)<\/Value><\/Tag>/g)].map((m) => [
      m[1]!,
      m[2]!,
    ]),
  );
}

/** Polls until `fn` stops throwing (the object is written after the answer). */
async function eventually<T>(fn: () => Promise<T>, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

beforeAll(async () => {
  if (!existsSync(join(web, '.next/BUILD_ID'))) throw new Error('run `next build` first (npm test does)');
  server = await startEmbedded();
  s3Dir = mkdtempSync(join(tmpdir(), 'gg-s3rver-next-'));
  s3 = new S3rver({ address: '127.0.0.1', port: 0, directory: s3Dir, silent: true });
  const { port: s3Port } = await s3.run();
  s3Url = `http://127.0.0.1:${s3Port}`;
  const port = await freePort();
  const bin = createRequire(join(web, 'package.json')).resolve('next/dist/bin/next');
  next = spawn(process.execPath, [bin, 'start', '-p', String(port), '-H', '127.0.0.1'], {
    cwd: web,
    stdio: 'ignore',
    env: {
      ...process.env,
      TRITON_SERVER_URL: server.url,
      FOOD11_MODEL_NAME: 'food_classifier_onnx',
      // The original's variables, as its compose file set them.
      MINIO_URL: `127.0.0.1:${s3Port}`,
      MINIO_USER: 'S3RVER',
      MINIO_PASSWORD: 'S3RVER',
      GATEWAY_LOG: 'false',
      NEXT_TELEMETRY_DISABLED: '1',
    },
  });
  url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 150; i++) {
    if (
      await fetch(`${url}/api/health`).then(
        (r) => r.status > 0,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 200));
  }
});
afterAll(async () => {
  next?.kill('SIGTERM');
  await server?.close();
  await s3?.close();
  if (s3Dir) rmSync(s3Dir, { recursive: true, force: true });
});

describe('production layout through next start', () => {
  it('an upload lands as class_NN/<uuid>.jpg with its tags; a flag adds flagged=true', async () => {
    const bytes = photo('N010');
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(bytes)], { type: 'image/jpeg' }), 'dinner.jpg');
    const res = await fetch(`${url}/api/predict`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    const p = await json<Prediction>(res);
    const key = `class_${String(p.top[0]!.index).padStart(2, '0')}/${p.requestId}.jpg`;
    const obj = await eventually(async () => {
      const r = await aws.fetch(`${s3Url}/production/${key}`);
      if (r.status !== 200) throw new Error(`HTTP ${r.status}`);
      return { type: r.headers.get('content-type'), body: Buffer.from(await r.arrayBuffer()) };
    });
    expect(obj.type).toBe('image/jpeg');
    expect(obj.body.equals(bytes)).toBe(true);
    const tags = await eventually(async () => {
      const t = await tagsOf(key);
      if (!t.timestamp) throw new Error('not tagged yet');
      return t;
    });
    expect(tags).toEqual({
      predicted_class: p.label,
      confidence: formatConfidence(p.probability),
      timestamp: `${p.createdAt.slice(0, 19)}Z`,
    });
    const flag = await fetch(`${url}/api/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ predictionId: p.requestId, kind: 'flag' }),
    });
    expect(flag.status).toBe(201);
    expect(await tagsOf(key)).toEqual({ ...tags, flagged: 'true' });
  });
});
