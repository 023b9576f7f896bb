import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  generateRequestBody,
  InferResult,
  parseResponseBody,
  parseRetryAfter,
  TritonInvalidArgumentError,
  TritonProtocolError,
  httpStatusForGrpcCode,
  reasonForGrpcCode,
  reasonForHttpStatus,
  TritonClient,
  TritonServerError,
} from '../src/index.js';
import { compressBody } from '@tritonserver-ts/protocol';
import { decodeInferResponse, encodeInferResponse } from '@tritonserver-ts/protocol/http';
import { parseServerUrl } from '../src/http/index.js';

describe('server url', () => {
  it.each([
    ['localhost:8000', 'http://localhost:8000', ''],
    ['localhost:8000/triton/', 'http://localhost:8000', '/triton'],
    ['http://10.0.0.1:8000', 'http://10.0.0.1:8000', ''],
    ['https://example.com/base/v', 'https://example.com', '/base/v'],
  ])('parses %s', (url, origin, basePath) => {
    expect(parseServerUrl(url)).toEqual({ origin, basePath });
  });

  it('uses https for host:port with ssl and refuses other schemes and query strings', () => {
    expect(parseServerUrl('h:1', true).origin).toBe('https://h:1');
    expect(() => parseServerUrl('ftp://h:1')).toThrow(TritonInvalidArgumentError);
    expect(() => parseServerUrl('http://h:1/?x=1')).toThrow(TritonInvalidArgumentError);
  });
});

describe('retry timing', () => {
  it('backs off exponentially with jitter and caps, preferring Retry-After', () => {
    const policy = { baseDelayMs: 100, maxDelayMs: 1000 };
    expect(backoffDelay(0, policy, undefined, () => 0)).toBe(50);
    expect(backoffDelay(2, policy, undefined, () => 1)).toBe(400);
    expect(backoffDelay(10, policy, undefined, () => 1)).toBe(1000);
    expect(backoffDelay(0, policy, 300)).toBe(300);
    expect(backoffDelay(0, policy, 5000)).toBe(1000);
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});

function result(): InferResult {
  const enc = encodeInferResponse({
    modelName: 'm',
    modelVersion: '1',
    id: 'r1',
    outputs: [
      {
        tensor: {
          name: 'grid',
          datatype: 'INT32',
          shape: [2, 3],
          data: new Int32Array([0, 1, 2, 10, 11, 12]),
        },
        binary: true,
      },
      {
        tensor: { name: 'half', datatype: 'FP16', shape: [2], data: new Uint16Array([0x3c00, 0xc000]) },
        binary: true,
      },
      {
        tensor: {
          name: 'cls',
          datatype: 'BYTES',
          shape: [2],
          data: [new TextEncoder().encode('0.900000:2:ramen'), new TextEncoder().encode('0.100000:0')],
        },
        binary: false,
      },
    ],
  });
  return new InferResult(decodeInferResponse(enc.body, enc.headerLength));
}

describe('InferResult', () => {
  it('exposes outputs by name as tensors, typed arrays, shapes and the raw response', () => {
    const r = result();
    expect(r.outputNames).toEqual(['grid', 'half', 'cls']);
    expect(r.id).toBe('r1');
    expect(r.shape('grid')).toEqual([2, 3]);
    expect(Array.from(r.asTypedArray('grid', 'INT32'))).toEqual([0, 1, 2, 10, 11, 12]);
    expect(r.output('grid').datatype).toBe('INT32');
    expect(r.response.outputs[0]?.parameters?.binary_data_size).toBe(24);
    expect(() => r.asTypedArray('grid', 'FP32')).toThrow(TritonInvalidArgumentError);
    expect(() => r.output('missing')).toThrow("the response has no output 'missing'");
  });

  it('offers an ndarray view with strides and bounds checks', () => {
    const view = result().view<'INT32'>('grid');
    expect(view.strides).toEqual([3, 1]);
    expect(view.get(1, 2)).toBe(12);
    expect(view.toNested()).toEqual([
      [0, 1, 2],
      [10, 11, 12],
    ]);
    expect(() => view.get(2, 0)).toThrow(TritonInvalidArgumentError);
  });

  it('decodes FP16 to float32, BYTES to strings and classification entries', () => {
    const r = result();
    expect(Array.from(r.asFloat32Array('half'))).toEqual([1, -2]);
    expect(r.asStrings('cls')).toEqual(['0.900000:2:ramen', '0.100000:0']);
    expect(r.classifications('cls')).toEqual([
      { value: 0.9, index: 2, label: 'ramen' },
      { value: 0.1, index: 0 },
    ]);
  });
});

describe('body helpers for custom HTTP stacks', () => {
  it('generates a request body and parses a compressed response body', async () => {
    const { body, headerLength } = generateRequestBody([
      { name: 'X', datatype: 'FP32', shape: [2], data: [1, 2] },
    ]);
    expect(headerLength).toBeGreaterThan(0);
    expect(body.byteLength).toBe((headerLength ?? 0) + 8);
    const enc = encodeInferResponse({
      modelName: 'm',
      modelVersion: '1',
      outputs: [
        { tensor: { name: 'Y', datatype: 'FP32', shape: [1], data: new Float32Array([3]) }, binary: true },
      ],
    });
    const parsed = await parseResponseBody(await compressBody(enc.body, 'gzip'), {
      headerLength: enc.headerLength ?? null,
      contentEncoding: 'gzip',
    });
    expect(Array.from(parsed.asTypedArray('Y', 'FP32'))).toEqual([3]);
    await expect(parseResponseBody(new Uint8Array([1]))).rejects.toBeInstanceOf(TritonProtocolError);
    const same = await InferResult.fromResponseBody(enc.body, { headerLength: enc.headerLength ?? null });
    expect(Array.from(same.asTypedArray('Y', 'FP32'))).toEqual([3]);
  });

  it('maps codec refusals to TritonInvalidArgumentError', () => {
    expect(() =>
      generateRequestBody([{ name: 'X', datatype: 'FP32', shape: [1], data: [1] }], {
        parameters: { triton_x: 1 },
      }),
    ).toThrow(TritonInvalidArgumentError);
  });
});

describe('one status table for both transports', () => {
  it('maps gRPC codes to the HTTP statuses Triton uses, so 503 retries apply to UNAVAILABLE', () => {
    expect([3, 5, 12, 13, 14].map(httpStatusForGrpcCode)).toEqual([400, 404, 501, 500, 503]);
    expect(httpStatusForGrpcCode(99)).toBe(500);
  });

  it("gives every server error a transport-neutral reason: Triton's status kinds", () => {
    expect([400, 404, 500, 501, 503, 413, 429].map(reasonForHttpStatus)).toEqual([
      'INVALID_ARG',
      'NOT_FOUND',
      'INTERNAL',
      'UNSUPPORTED',
      'UNAVAILABLE',
      'UNKNOWN',
      'UNKNOWN',
    ]);
    expect([1, 2, 3, 5, 6, 12, 13, 14, 4, 8].map(reasonForGrpcCode)).toEqual([
      'CANCELLED',
      'UNKNOWN',
      'INVALID_ARG',
      'NOT_FOUND',
      'ALREADY_EXISTS',
      'UNSUPPORTED',
      'INTERNAL',
      'UNAVAILABLE',
      'UNKNOWN',
      'UNKNOWN',
    ]);
    const fromHttp = new TritonServerError(503, 'busy', { body: '', transport: 'http' });
    expect(fromHttp).toMatchObject({ status: 503, reason: 'UNAVAILABLE', code: 'SERVER_ERROR' });
    const fromGrpc = new TritonServerError(400, 'dup', {
      body: '',
      transport: 'grpc',
      reason: 'ALREADY_EXISTS',
    });
    expect(fromGrpc.reason).toBe('ALREADY_EXISTS');
  });
});

describe('client lifecycle', () => {
  it('refuses calls after close() and needs a url or a transport', async () => {
    const client = new TritonClient({ url: '127.0.0.1:9' });
    await client.close();
    await client.close();
    await expect(client.isServerLive()).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(() => new TritonClient({})).toThrow(TritonInvalidArgumentError);
  });
});
