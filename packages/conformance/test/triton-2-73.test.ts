// The wire-visible messages whose wording changed in Triton 2.73 (NGC 26.09), the release the suite
// targets: a BYTES input whose element count differs from its shape (both transports), and the HTTP
// front end's JSON reading (a body over --http-max-input-size, JSON data shorter than its shape, a
// repository-index `ready` that is not a boolean), which has no gRPC counterpart.
import {
  credentials,
  makeGenericClientConstructor,
  Metadata,
  status as GrpcStatus,
  type ServiceError,
} from '@grpc/grpc-js';
import { afterAll, describe, expect, it } from 'vitest';
import { serializeByteTensor } from '@tritonserver-ts/client';
import { serviceDefinition } from '@tritonserver-ts/protocol/grpc';
import { httpBase, newClient, transports, tritonGrpcUrl } from './target.js';
import { differsOver } from './transport-differences.js';

/** Triton's default `--http-max-input-size` (64 MiB); the suite's server runs with it. */
const DEFAULT_MAX_INPUT_SIZE = 64 * 1024 * 1024;

const strings = (n: number): Uint8Array[] =>
  Array.from({ length: n }, (_, i) => new TextEncoder().encode(`s${i}`));
const countMessage = (got: number): string =>
  `expected 16 string elements for inference input 'INPUT0' for model 'identity_string', got ${got}`;

/** POSTs `body` to `path` of the HTTP server; the status and the `error` of a JSON error body. */
async function post(
  path: string,
  body: string | Uint8Array,
  headers: Record<string, string> = {},
): Promise<{ status: number; error: string | undefined }> {
  const response = await fetch(`${httpBase}${path}`, { method: 'POST', body, headers });
  const text = await response.text();
  const error = response.status === 200 ? undefined : (JSON.parse(text) as { error?: string }).error;
  return { status: response.status, error };
}

/** One ModelInfer call on a plain grpc-js client (the client package refuses such requests itself). */
async function grpcInfer(message: object): Promise<ServiceError> {
  const Stub = makeGenericClientConstructor(serviceDefinition, 'GRPCInferenceService');
  const stub = new Stub(tritonGrpcUrl.replace(/^grpc:\/\//, ''), credentials.createInsecure());
  try {
    return await new Promise<ServiceError>((resolve, reject) => {
      const call = stub.ModelInfer as (
        req: object,
        md: Metadata,
        cb: (e: ServiceError | null) => void,
      ) => void;
      call.call(stub, message, new Metadata(), (error) => {
        if (error === null) reject(new Error('the call succeeded'));
        else resolve(error);
      });
    });
  } finally {
    stub.close();
  }
}

describe.each(transports)('%s: Triton 2.73 wording', (transport) => {
  const client = newClient(transport);
  afterAll(() => client.close());

  // Sent on each transport's own wire form: the client refuses a count that differs from the shape.
  it.each([14, 18])(
    'a BYTES input with %i elements for shape [1,16] → INVALID_ARG "expected 16 string elements …"',
    async (n) => {
      const data = serializeByteTensor(strings(n));
      if (differsOver(transport, 'http-wire-helpers')) {
        const error = await grpcInfer({
          modelName: 'identity_string',
          inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1n, 16n] }],
          rawInputContents: [data],
        });
        expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
        expect(error.details).toBe(countMessage(n));
        return;
      }
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
      const body = new Uint8Array([...new TextEncoder().encode(header), ...data]);
      const r = await post('/v2/models/identity_string/infer', body, {
        'Inference-Header-Content-Length': String(new TextEncoder().encode(header).byteLength),
      });
      expect(r).toEqual({ status: 400, error: countMessage(n) });
    },
  );

  if (differsOver(transport, 'http-json-requests')) {
    it('has no JSON to misread: RepositoryIndex takes a typed request and answers', async () => {
      const ready = await client.getModelRepositoryIndex();
      expect(ready.some((m) => m.name === 'simple')).toBe(true);
    });
    return;
  }

  it('a body over --http-max-input-size → 400 "request JSON size of N exceeds …"', async () => {
    const body = `{"inputs":[]}${' '.repeat(DEFAULT_MAX_INPUT_SIZE)}`;
    const r = await post('/v2/models/simple/infer', body, { 'Content-Type': 'application/json' });
    expect(r).toEqual({
      status: 400,
      error: `request JSON size of ${body.length} exceeds the maximum allowed value of ${DEFAULT_MAX_INPUT_SIZE}. Use --http-max-input-size to increase the limit.`,
    });
  });

  it('JSON data shorter than its shape → 400 "Failed to parse \'data\' field: …"', async () => {
    const body = JSON.stringify({
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 3], data: [1, 2] }],
    });
    expect(await post('/v2/models/identity_fp32/infer', body)).toEqual({
      status: 400,
      error: "Failed to parse 'data' field: shape does not match true shape",
    });
  });

  it('a repository-index `ready` that is not a boolean → 400 "Invalid value for \'ready\': …"', async () => {
    expect(await post('/v2/repository/index', '{"ready":"yes"}')).toEqual({
      status: 400,
      error: "Invalid value for 'ready': expected a boolean",
    });
    expect((await post('/v2/repository/index', '{"ready":true}')).status).toBe(200);
  });
});
