/** Classification requests Triton refuses with 400: a BYTES output, and an output over 1,000,000 elements. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { encodeInferRequest } from '@tritonserver-ts/protocol/http';

import { post, startTestServer, type TestServer } from '../helpers/server.js';

let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer({ only: ['identity_string', 'identity_fp32'] });
});
afterAll(async () => {
  await srv.close();
});

function classifyRequest(n: number, rows = 1) {
  return encodeInferRequest(
    [
      {
        name: 'INPUT0',
        datatype: 'FP32',
        shape: [rows, n],
        data: new Float32Array(rows * n).map((_, i) => i % 7),
      },
    ],
    { outputs: [{ name: 'OUTPUT0', classCount: 2 }] },
  );
}

describe('classification limits', () => {
  it('refuses a BYTES output with 400 and Triton’s message (not a 500)', async () => {
    const r = await post(
      srv.url,
      '/v2/models/identity_string/infer',
      JSON.stringify({
        inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 2], data: ['a', 'b'] }],
        outputs: [{ name: 'OUTPUT0', parameters: { classification: 1 } }],
      }),
    );
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      error: "class result not available for output due to unsupported type 'BYTES'",
    });
  });

  it('refuses an output of more than 1,000,000 elements and classifies one of exactly 1,000,000', async () => {
    for (const [n, status] of [
      [1_000_001, 400],
      [1_000_000, 200],
    ] as const) {
      const { body, headerLength } = classifyRequest(n);
      const r = await post(srv.url, '/v2/models/identity_fp32/infer', body, {
        'Inference-Header-Content-Length': String(headerLength),
      });
      expect(r.status, r.text.slice(0, 200)).toBe(status);
      if (status === 400) expect(r.json).toEqual({ error: 'classification output tensor too large' });
    }
  });

  it('bounds each batch row, not the whole output (Triton classifies row by row)', async () => {
    const { body, headerLength } = classifyRequest(600_000, 2);
    const r = await post(srv.url, '/v2/models/identity_fp32/infer', body, {
      'Inference-Header-Content-Length': String(headerLength),
    });
    expect(r.status, r.text.slice(0, 200)).toBe(200);
  });
});
