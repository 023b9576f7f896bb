import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  TritonAbortError,
  TritonClient,
  TritonConnectionError,
  TritonProtocolError,
  TritonServerError,
  TritonTimeoutError,
} from '@tritonserver-ts/client';
import { startServer, type RunningServer } from '@tritonserver-ts/server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { POST } from '../src/app/api/predict/route';
import type { ApiError } from '../src/lib/types';
import { toGatewayError } from '../src/server/errors';
import {
  json,
  MODELS,
  photo,
  pngClaiming,
  PROTOCOLS,
  serverEnv,
  startEmbedded,
  uploadRequest,
  useEnv,
} from './helpers';

/** A PNG whose header claims 100000×100000 pixels, in under 2 kB: a decompression bomb. */
const bombPng = (): Buffer => pngClaiming(100_000, 100_000);

async function expectError(res: Response, status: number, code: string): Promise<ApiError> {
  const body = await json<ApiError>(res);
  expect({ status: res.status, code: body.error.code }).toEqual({ status, code });
  expect(body.error.message.length).toBeGreaterThan(5);
  expect(JSON.stringify(body)).not.toMatch(/\n\s+at |node_modules|\.ts:\d+/); // never a stack
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  return body;
}

let server: RunningServer;
let badRepo: string;
let badServer: RunningServer;
let busyRepo: string;
let busyServer: RunningServer;
let explicitServer: RunningServer;

/**
 * A repository of the same model whose queue holds one request and whose batcher waits up to a
 * second for a batch of 16: one prediction sits queued, so the next one overflows the queue.
 */
function busyRepository(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gg-busyrepo-'));
  const src = join(MODELS, 'food_classifier_onnx');
  const dst = join(dir, 'food_classifier_onnx');
  mkdirSync(join(dst, '1'), { recursive: true });
  cpSync(join(src, '1', 'model.onnx'), join(dst, '1', 'model.onnx'));
  cpSync(join(src, 'labels.txt'), join(dst, 'labels.txt'));
  const cfg = readFileSync(join(src, 'config.pbtxt'), 'utf8');
  const patched = cfg.replace(
    /dynamic_batching \{[^}]*\}/,
    'dynamic_batching {\n  preferred_batch_size: [ 16 ]\n  max_queue_delay_microseconds: 1000000\n  default_queue_policy { max_queue_size: 1 }\n}',
  );
  expect(patched).not.toBe(cfg);
  writeFileSync(join(dst, 'config.pbtxt'), patched);
  return dir;
}

beforeAll(async () => {
  server = await startEmbedded();
  // A repository whose model config asks for 200×200 images while the ONNX graph takes 224×224:
  // the real server refuses the request (400) and the gateway must answer 502.
  badRepo = mkdtempSync(join(tmpdir(), 'gg-badrepo-'));
  const src = join(MODELS, 'food_classifier_onnx');
  const dst = join(badRepo, 'food_classifier_onnx');
  mkdirSync(join(dst, '1'), { recursive: true });
  // A copy, not a link: the server refuses model files that resolve outside the model directory.
  cpSync(join(src, '1', 'model.onnx'), join(dst, '1', 'model.onnx'));
  cpSync(join(src, 'labels.txt'), join(dst, 'labels.txt'));
  const cfg = readFileSync(join(src, 'config.pbtxt'), 'utf8');
  const patched = cfg.replace(/(key: "preprocess_size"\s*value: \{ string_value: ")224(")/, '$1200$2');
  expect(patched).not.toBe(cfg);
  writeFileSync(join(dst, 'config.pbtxt'), patched);
  badServer = await startEmbedded(badRepo);
  busyRepo = busyRepository();
  busyServer = await startEmbedded(busyRepo);
  // Explicit model control, so a test can unload the model under the gateway.
  explicitServer = await startServer({
    modelRepositories: [MODELS],
    modelControlMode: 'explicit',
    loadModels: ['food_classifier_onnx'],
    httpPort: 0,
    grpcPort: 0,
    exitTimeoutSecs: 1,
  });
});
afterAll(async () => {
  await server?.close();
  await badServer?.close();
  await busyServer?.close();
  await explicitServer?.close();
  rmSync(badRepo, { recursive: true, force: true });
  rmSync(busyRepo, { recursive: true, force: true });
});
beforeEach(() => {
  useEnv({
    ...serverEnv(server, 'http'),
    FOOD11_MODEL_NAME: 'food_classifier_onnx',
    MAX_UPLOAD_BYTES: undefined,
    INFERENCE_TIMEOUT_MS: undefined,
    FEEDBACK_STORAGE: 'none',
    GATEWAY_LOG: 'false',
  });
});

describe('bad input → JSON errors with stable codes', () => {
  it('413 FILE_TOO_LARGE over MAX_UPLOAD_BYTES (streamed body)', async () => {
    useEnv({ MAX_UPLOAD_BYTES: '2048' });
    const big = Buffer.alloc(200 * 1024, 7);
    await expectError(await POST(uploadRequest(big)), 413, 'FILE_TOO_LARGE');
  });

  it('413 from Content-Length alone, before reading the body', async () => {
    useEnv({ MAX_UPLOAD_BYTES: '2048' });
    const req = new Request('http://localhost/api/predict', {
      method: 'POST',
      headers: {
        'content-type': 'multipart/form-data; boundary=x',
        'content-length': String(50 * 1024 * 1024),
      },
      body: 'x',
    });
    await expectError(await POST(req), 413, 'FILE_TOO_LARGE');
  });

  it('415 UNSUPPORTED_MEDIA_TYPE for text and for SVG', async () => {
    await expectError(
      await POST(uploadRequest(Buffer.from('hello'), { type: 'text/plain', name: 'a.txt' })),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"/>');
    await expectError(
      await POST(uploadRequest(svg, { type: 'image/svg+xml' })),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it('400 CORRUPT_IMAGE for a truncated JPEG', async () => {
    const jpeg = photo('N010');
    const e = await expectError(await POST(uploadRequest(jpeg.subarray(0, 4000))), 400, 'CORRUPT_IMAGE');
    expect(e.error.message).toMatch(/could not be decoded/);
  });

  it('400 TOO_MANY_PIXELS for a decompression bomb', async () => {
    await expectError(await POST(uploadRequest(bombPng(), { type: 'image/png' })), 400, 'TOO_MANY_PIXELS');
  });

  it('400 for a missing file field, an empty file, and a non-multipart body', async () => {
    const form = new FormData();
    form.set('photo', 'nope');
    await expectError(
      await POST(new Request('http://localhost/api/predict', { method: 'POST', body: form })),
      400,
      'MISSING_FILE',
    );
    await expectError(await POST(uploadRequest(new Uint8Array(0))), 400, 'EMPTY_FILE');
    const raw = new Request('http://localhost/api/predict', {
      method: 'POST',
      body: new Uint8Array(photo('A001')),
      headers: { 'content-type': 'image/jpeg' },
    });
    await expectError(await POST(raw), 400, 'INVALID_REQUEST');
  });
});

// The same cases over HTTP and over gRPC (TRITON_PROTOCOL=grpc against the embedded server's gRPC
// port): the same codes and statuses.
describe.each(PROTOCOLS)('faults of the inference server over %s', (protocol) => {
  beforeEach(() => useEnv(serverEnv(server, protocol)));

  it('503 INFERENCE_UNAVAILABLE when the server is down', async () => {
    const s = await startEmbedded();
    await s.close();
    useEnv(serverEnv(s, protocol));
    const started = Date.now();
    const e = await expectError(await POST(uploadRequest(photo('A001'))), 503, 'INFERENCE_UNAVAILABLE');
    expect(e.error.requestId).toBeTruthy();
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('503 MODEL_UNAVAILABLE for a model of the repository the server has not loaded (explicit mode)', async () => {
    // The Python-backend food_classifier loads on the embedded server now; explicitServer loads only
    // food_classifier_onnx.
    useEnv({ ...serverEnv(explicitServer, protocol), FOOD11_MODEL_NAME: 'food_classifier' });
    await expectError(await POST(uploadRequest(photo('A001'))), 503, 'MODEL_UNAVAILABLE');
  });

  it('503 MODEL_UNAVAILABLE for an unknown model', async () => {
    useEnv({ FOOD11_MODEL_NAME: 'no_such_model' });
    await expectError(await POST(uploadRequest(photo('A001'))), 503, 'MODEL_UNAVAILABLE');
  });

  it('503 MODEL_UNAVAILABLE when the model is unloaded after the gateway read its info (Triton calls it an invalid argument)', async () => {
    useEnv(serverEnv(explicitServer, protocol));
    expect((await POST(uploadRequest(photo('A001')))).status).toBe(200); // model info read and cached
    const admin = new TritonClient({ url: explicitServer.url });
    try {
      await admin.unloadModel('food_classifier_onnx');
      const e = await expectError(await POST(uploadRequest(photo('A001'))), 503, 'MODEL_UNAVAILABLE');
      expect(e.error.message).toMatch(/food_classifier_onnx/);
    } finally {
      await admin.loadModel('food_classifier_onnx');
      await admin.close();
    }
  });

  it('502 INFERENCE_FAILED when the real server rejects the request', async () => {
    useEnv(serverEnv(badServer, protocol));
    const e = await expectError(await POST(uploadRequest(photo('A001'))), 502, 'INFERENCE_FAILED');
    expect(e.error.message).toMatch(/shape|input/i);
  });

  it('503 INFERENCE_UNAVAILABLE when the server is overloaded (its queue is full); the queued one succeeds', async () => {
    useEnv(serverEnv(busyServer, protocol));
    expect((await POST(uploadRequest(photo('A001')))).status).toBe(200); // model info read
    const queued = POST(uploadRequest(photo('A001')));
    await new Promise((r) => setTimeout(r, 300));
    const e = await expectError(await POST(uploadRequest(photo('P005'))), 503, 'INFERENCE_UNAVAILABLE');
    expect(e.error.message).toMatch(/Exceeds maximum queue size/);
    expect((await queued).status).toBe(200);
  });
});

describe('the client errors map by class and transport-neutral reason, never by message text', () => {
  const server = (reason: TritonServerError['reason'], status: number, message: string) =>
    new TritonServerError(status, message, { body: message, transport: 'grpc', reason });

  it.each([
    [server('UNAVAILABLE', 503, 'Exceeds maximum queue size'), 503, 'INFERENCE_UNAVAILABLE'],
    [server('NOT_FOUND', 404, 'no available versions'), 503, 'MODEL_UNAVAILABLE'],
    // Text that reads like "not found" but a reason that says otherwise: the reason wins.
    [server('INVALID_ARG', 400, 'input not found, model unavailable'), 502, 'INFERENCE_FAILED'],
    [server('INTERNAL', 500, 'boom'), 502, 'INFERENCE_FAILED'],
    [new TritonConnectionError('refused'), 503, 'INFERENCE_UNAVAILABLE'],
    [new TritonTimeoutError(100), 504, 'INFERENCE_TIMEOUT'],
    [new TritonAbortError(), 499, 'CLIENT_CLOSED_REQUEST'],
    [new TritonProtocolError('bad body'), 502, 'INFERENCE_FAILED'],
    [new DOMException('aborted', 'AbortError'), 499, 'CLIENT_CLOSED_REQUEST'],
    [new Error('wrapped', { cause: new TritonTimeoutError(5) }), 504, 'INFERENCE_TIMEOUT'],
    // A look-alike that is not the client's error class is not mistaken for one.
    [Object.assign(new Error('x'), { name: 'TritonServerError', status: 503 }), 500, 'INTERNAL_ERROR'],
  ])('%s → %i %s', (error, status, code) => {
    expect(toGatewayError(error)).toMatchObject({ status, code });
  });
});
