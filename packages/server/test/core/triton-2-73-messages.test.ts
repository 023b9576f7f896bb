/**
 * Messages whose wording changed in Triton 2.73 (NGC 26.09), the release this server follows, on
 * every wire where they apply, through the real server: a BYTES input whose element count differs
 * from its shape (gRPC raw and typed contents, HTTP binary and JSON) and a JSON body over
 * `--http-max-input-size`. (JSON data shorter than its shape and a non-boolean `ready` are HTTP-only
 * and asserted in test/http/negative.test.ts and test/http/int64.test.ts.)
 */
import { serializeByteTensor } from '@tritonserver-ts/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { GrpcStatus, GrpcTestClient, grpcError, startGrpcTestServer } from '../grpc/helpers.js';
import { post, type TestServer } from '../helpers/server.js';

const LIMIT = 64 * 1024;
let server: TestServer & { grpcTarget: string };
let client: GrpcTestClient;

beforeAll(async () => {
  server = await startGrpcTestServer({ only: ['identity_string', 'simple'], httpMaxInputSize: LIMIT });
  client = new GrpcTestClient(server.grpcTarget);
});

afterAll(async () => {
  client.close();
  await server.close();
});

const strings = (n: number): Buffer[] => Array.from({ length: n }, (_, i) => Buffer.from(`s${i}`));
const countMessage = (got: number): string =>
  `expected 16 string elements for inference input 'INPUT0' for model 'identity_string', got ${got}`;

describe('a BYTES input whose element count differs from its shape', () => {
  it.each([14, 18, 0])('gRPC raw_input_contents with %i elements for [1,16]', async (n) => {
    const error = await grpcError(
      client.call('ModelInfer', {
        modelName: 'identity_string',
        inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1n, 16n] }],
        rawInputContents: [serializeByteTensor(strings(n))],
      }),
    );
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.details).toBe(countMessage(n));
  });

  it('gRPC typed bytes_contents with 14 elements for [1,16]', async () => {
    const error = await grpcError(
      client.call('ModelInfer', {
        modelName: 'identity_string',
        inputs: [
          { name: 'INPUT0', datatype: 'BYTES', shape: [1n, 16n], contents: { bytesContents: strings(14) } },
        ],
      }),
    );
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.details).toBe(countMessage(14));
  });

  it('HTTP binary data with 14 elements for [1,16]', async () => {
    const data = serializeByteTensor(strings(14));
    const header = JSON.stringify({
      inputs: [
        {
          name: 'INPUT0',
          datatype: 'BYTES',
          shape: [1, 16],
          parameters: { binary_data_size: data.byteLength },
        },
      ],
    });
    const r = await post(
      server.url,
      '/v2/models/identity_string/infer',
      Buffer.concat([Buffer.from(header), data]),
      {
        'Inference-Header-Content-Length': String(Buffer.byteLength(header)),
      },
    );
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ error: countMessage(14) });
  });

  it('HTTP JSON data with 14 elements for [1,16]', async () => {
    const body = JSON.stringify({
      inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 16], data: strings(14).map(String) }],
    });
    const r = await post(server.url, '/v2/models/identity_string/infer', body);
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ error: countMessage(14) });
  });

  it('still serves the right count on both wires', async () => {
    const ok = await client.call<{ rawOutputContents: Uint8Array[] }>('ModelInfer', {
      modelName: 'identity_string',
      inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1n, 16n] }],
      rawInputContents: [serializeByteTensor(strings(16))],
    });
    expect(Buffer.from(ok.rawOutputContents[0] as Uint8Array)).toEqual(
      Buffer.from(serializeByteTensor(strings(16))),
    );
    const body = JSON.stringify({
      inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 16], data: strings(16).map(String) }],
    });
    expect((await post(server.url, '/v2/models/identity_string/infer', body)).status).toBe(200);
  });
});

describe('a JSON body over --http-max-input-size', () => {
  it('is refused with 400 and the 2.73 wording, lower-case "request"', async () => {
    const body = `{"inputs":[]}${' '.repeat(LIMIT)}`;
    const r = await post(server.url, '/v2/models/simple/infer', body);
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      error: `request JSON size of ${body.length} exceeds the maximum allowed value of ${LIMIT}. Use --http-max-input-size to increase the limit.`,
    });
  });
});
