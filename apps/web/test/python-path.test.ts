import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { POST } from '../src/app/api/predict/route';
import type { ApiError } from '../src/lib/types';
import type { FakeKserve } from './fake-kserve';
import { startFakeKserve } from './fake-kserve';
import { startFakeKserveGrpc } from './fake-kserve-grpc';
import { json, photo, uploadRequest, useEnv } from './helpers';

// FAULTS THE REAL SERVER CANNOT BE MADE TO SHOW, on the python path, against a FAKE KServe responder
// (fake-kserve.ts) over HTTP and over gRPC (fake-kserve-grpc.ts; TRITON_PROTOCOL=grpc): a model that
// never answers (timeout) and a call cancelled while the model holds it. Everything else on this path
// (predictions, agreement with the tensor path, bad uploads, the model's own errors) runs on the real
// embedded server and the real food_classifier: python-path-real.test.ts.
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

  describe('POST /api/predict, python-backend model (BYTES path), faults', () => {
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
