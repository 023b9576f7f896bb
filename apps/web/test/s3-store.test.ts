import { createServer } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AwsV4Signer } from 'aws4fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FeedbackStore, S3BlobStore } from '../src/server/feedback-store';
import type { Prediction } from '../src/lib/types';

/*
 * A FAKE, clearly labelled: an in-memory S3-compatible responder (path-style PUT/GET, ListObjectsV2,
 * create bucket), standing in for MinIO, which does not run here. It checks that every request is
 * SigV4-signed for the configured key and region — recomputing the signature from what arrived, so a
 * header or path changed after signing is refused as S3 would — and lets us verify the object layout.
 * (test/s3-production.test.ts runs against a real S3 server, s3rver, which checks no signatures.)
 */
const SECRETS: Record<string, string> = { 'minio-user': 'secret' };

/** The Authorization header S3 would expect for the request as received. */
async function expectedAuth(req: IncomingMessage, auth: string): Promise<string> {
  const key = /Credential=([^/]+)\//.exec(auth)?.[1] ?? '';
  const signedHeaders = (/SignedHeaders=([^,]+)/.exec(auth)?.[1] ?? '').split(';');
  const headers = Object.fromEntries(
    signedHeaders.filter((h) => h !== 'host').map((h) => [h, String(req.headers[h] ?? '')]),
  );
  const signed = await new AwsV4Signer({
    method: req.method ?? 'GET',
    url: `http://${req.headers.host}${req.url}`,
    headers,
    accessKeyId: key,
    secretAccessKey: SECRETS[key] ?? '',
    service: 's3',
    region: 'us-east-1',
    datetime: String(req.headers['x-amz-date']),
  }).sign();
  return signed.headers.get('authorization') ?? '';
}
const objects = new Map<string, { body: Buffer; type: string }>();
const seen: { method: string; url: string; auth: string }[] = [];
let endpoint = '';
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  const respond = async () => {
    const url = new URL(req.url ?? '/', 'http://x');
    const auth = req.headers.authorization ?? '';
    seen.push({ method: req.method ?? '', url: url.pathname + url.search, auth });
    if (!/^AWS4-HMAC-SHA256 Credential=minio-user\/\d{8}\/us-east-1\/s3\/aws4_request/.test(auth)) {
      res.writeHead(403).end('<Error><Code>AccessDenied</Code></Error>');
      return;
    }
    if ((await expectedAuth(req, auth)) !== auth) {
      res.writeHead(403).end('<Error><Code>SignatureDoesNotMatch</Code></Error>');
      return;
    }
    const [, bucket, ...rest] = url.pathname.split('/');
    const key = rest.map(decodeURIComponent).join('/');
    if (req.method === 'PUT' && !key) {
      res.writeHead(200).end();
    } else if (req.method === 'PUT') {
      objects.set(`${bucket}/${key}`, {
        body: Buffer.concat(chunks),
        type: String(req.headers['content-type']),
      });
      res.writeHead(200).end();
    } else if (req.method === 'GET' && key) {
      const o = objects.get(`${bucket}/${key}`);
      if (!o) res.writeHead(404).end('<Error><Code>NoSuchKey</Code></Error>');
      else res.writeHead(200, { 'content-type': o.type }).end(o.body);
    } else if (req.method === 'GET' && url.searchParams.get('list-type') === '2') {
      const prefix = `${bucket}/${url.searchParams.get('prefix') ?? ''}`;
      const keys = [...objects.keys()]
        .filter((k) => k.startsWith(prefix))
        .map((k) => k.slice(bucket!.length + 1));
      res
        .writeHead(200, { 'content-type': 'application/xml' })
        .end(
          `<ListBucketResult>${keys.map((k) => `<Contents><Key>${k}</Key></Contents>`).join('')}<IsTruncated>false</IsTruncated></ListBucketResult>`,
        );
    } else res.writeHead(400).end();
  };
  req.on('end', () => void respond());
});

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const prediction: Prediction = {
  requestId: 'pred-1',
  label: 'Seafood',
  probability: 0.9,
  top: [{ index: 8, label: 'Seafood', probability: 0.9 }],
  verdict: {
    kind: 'likely',
    reason: 'confident-unchecked',
    label: 'Seafood',
    candidates: [{ index: 8, label: 'Seafood', probability: 0.9 }],
    headline: 'Likely Seafood',
    explanation: 'The model clearly prefers this category.',
  },
  model: { name: 'food_classifier_onnx', version: '1', backend: 'onnxruntime', path: 'tensor' },
  image: { format: 'jpeg', width: 10, height: 10 },
  timings: { decode: 1, preprocess: 1, infer: 1, postprocess: 0, total: 3 },
  outOfDistribution: null,
  createdAt: new Date().toISOString(),
};

describe('feedback in an S3-compatible bucket (MinIO)', () => {
  it('stores upload, prediction and concurrent events as separate signed objects', async () => {
    const store = new FeedbackStore(
      new S3BlobStore({
        endpoint,
        bucket: 'production',
        region: 'us-east-1',
        accessKeyId: 'minio-user',
        secretAccessKey: 'secret',
      }),
    );
    const upload = Buffer.from([0xff, 0xd8, 0xff, 1, 2, 3]);
    await store.savePrediction(prediction, upload);
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        store.addEvent('pred-1', { kind: 'correction', correctLabel: `L${i}` }),
      ),
    );
    const rec = await store.get('pred-1');
    expect(rec?.events).toHaveLength(10);
    expect(rec?.prediction?.label).toBe('Seafood');
    expect(objects.get('production/uploads/pred-1.jpg')?.body.equals(upload)).toBe(true);
    expect(objects.get('production/uploads/pred-1.jpg')?.type).toBe('image/jpeg');
    expect([...objects.keys()].filter((k) => k.startsWith('production/feedback/pred-1/'))).toHaveLength(10);
    expect(seen.every((s) => s.auth.startsWith('AWS4-HMAC-SHA256'))).toBe(true);
    // The bucket is looked for, then created (this fake knows no buckets), before any object.
    expect(seen.slice(0, 2)).toMatchObject([
      { method: 'HEAD', url: '/production' },
      { method: 'PUT', url: '/production' },
    ]);
  });

  it('fails loudly with wrong credentials instead of losing data silently', async () => {
    const store = new FeedbackStore(
      new S3BlobStore({
        endpoint,
        bucket: 'b2',
        region: 'us-east-1',
        accessKeyId: 'wrong',
        secretAccessKey: 'x',
      }),
    );
    await expect(store.savePrediction({ ...prediction, requestId: 'p2' }, Buffer.from('x'))).rejects.toThrow(
      /HTTP 403/,
    );
  });
});
