import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { POST } from '../src/app/api/predict/route';
import type { ApiError, Prediction } from '../src/lib/types';
import type { FakeKserve } from './fake-kserve';
import { startFakeKserve } from './fake-kserve';
import { startFakeKserveGrpc } from './fake-kserve-grpc';
import { json, photo, uploadRequest, useEnv } from './helpers';

// The python path against a FAKE KServe responder (see fake-kserve.ts for why), over HTTP and over
// gRPC (fake-kserve-grpc.ts; TRITON_PROTOCOL=grpc): the same answers, errors and cancellation.
describe.each([
  { protocol: 'http', start: startFakeKserve },
  { protocol: 'grpc', start: startFakeKserveGrpc },
] as const)('over $protocol', ({ protocol, start }) => {
  let fake: FakeKserve;

  beforeAll(async () => {
    fake = await start();
  });
  afterAll(() => fake?.close());
  beforeEach(() => {
    fake.mode = 'ok';
    fake.received.length = 0;
    useEnv({
      TRITON_PROTOCOL: protocol,
      TRITON_GRPC_URL: undefined,
      TRITON_SERVER_URL: fake.url,
      FOOD11_MODEL_NAME: 'food_classifier',
      INFERENCE_TIMEOUT_MS: '10000',
      FEEDBACK_STORAGE: 'none',
      GATEWAY_LOG: 'false',
    });
  });

  describe('POST /api/predict, python-backend model (BYTES path)', () => {
    it('sends the upload as base64 text in a BYTES [1,1] tensor and maps FOOD_LABEL/PROBABILITY', async () => {
      const bytes = photo('S005');
      const res = await POST(uploadRequest(bytes));
      expect(res.status).toBe(200);
      const p = await json<Prediction>(res);
      expect(fake.received).toHaveLength(1);
      const got = fake.received[0]!;
      expect(got.header.inputs).toHaveLength(1);
      expect(got.header.inputs[0]).toMatchObject({ name: 'INPUT_IMAGE', datatype: 'BYTES', shape: [1, 1] });
      expect(got.elements).toHaveLength(1);
      expect(got.elements[0]!.toString('latin1')).toBe(bytes.toString('base64'));
      expect(got.header.outputs?.map((o) => o.name).sort()).toEqual(['FOOD_LABEL', 'PROBABILITY']);
      expect(p.label).toBe('Seafood');
      expect(p.probability).toBeCloseTo(0.93, 6);
      expect(p.top).toEqual([{ index: -1, label: 'Seafood', probability: p.probability }]);
      expect(p.model).toEqual({ name: 'food_classifier', version: '1', backend: 'python', path: 'python' });
      expect(p.image.format).toBe('jpeg');
      // The python model answers no ood_score: no out-of-distribution signal on this path.
      expect(p.outOfDistribution).toBeNull();
    });

    it('refuses a non-image before calling the model (415), like the tensor path', async () => {
      const res = await POST(uploadRequest(Buffer.from('not an image at all'), { type: 'text/plain' }));
      expect(res.status).toBe(415);
      expect((await json<ApiError>(res)).error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      expect(fake.received).toHaveLength(0);
    });

    it('maps a model failure (HTTP 500 from the server) to 502 with the server text', async () => {
      fake.mode = 'error500';
      const res = await POST(uploadRequest(photo('S005')));
      expect(res.status).toBe(502);
      const e = await json<ApiError>(res);
      expect(e.error.code).toBe('INFERENCE_FAILED');
      expect(e.error.message).toMatch(/Failed to process/);
    });

    it('answers 504 when the server is too slow, without hanging', async () => {
      useEnv({ INFERENCE_TIMEOUT_MS: '400' });
      fake.mode = 'hang';
      const started = Date.now();
      const res = await POST(uploadRequest(photo('S005')));
      expect(res.status).toBe(504);
      expect((await json<ApiError>(res)).error.code).toBe('INFERENCE_TIMEOUT');
      expect(Date.now() - started).toBeLessThan(3000);
    });

    it('cancels the inference request when the browser goes away (request signal)', async () => {
      fake.mode = 'hang';
      const ac = new AbortController();
      const pending = POST(uploadRequest(photo('S005'), { signal: ac.signal }));
      // Wait until the inference request reached the server, then close the "tab".
      while (fake.received.length === 0) await new Promise((r) => setTimeout(r, 10));
      ac.abort();
      const res = await pending;
      expect(res.status).toBe(499);
      expect((await json<ApiError>(res)).error.code).toBe('CLIENT_CLOSED_REQUEST');
      // The server saw the connection of the infer call close before it answered.
      await expect(
        Promise.race([
          fake.cancelled.then(() => 'closed'),
          new Promise((r) => setTimeout(() => r('still open'), 2000)),
        ]),
      ).resolves.toBe('closed');
    });
  });
});
