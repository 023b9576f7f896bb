import { afterAll, describe, expect, it } from 'vitest';
import {
  TritonAbortError,
  TritonConnectionError,
  TritonInvalidArgumentError,
  TritonServerError,
  TritonTimeoutError,
  TritonClient,
} from '@tritonserver-ts/client';
import { newClient } from './target.js';

const client = newClient();
afterAll(() => client.close());

async function serverError(p: Promise<unknown>): Promise<TritonServerError> {
  const error: unknown = await p.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TritonServerError);
  return error as TritonServerError;
}

const fp32 = (n: number) => ({
  name: 'INPUT0',
  datatype: 'FP32' as const,
  shape: [1, n],
  data: new Float32Array(n),
});

describe('server errors reach the caller verbatim', () => {
  it('unknown model → 400 with the "Request for unknown model" message', async () => {
    const error = await serverError(client.infer('no_such_model', [fp32(1)]));
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/^Request for unknown model: 'no_such_model' is not found/);
    expect(error.body).toContain('"error"');
  });

  it('unknown version → a server error naming the model', async () => {
    const error = await serverError(
      client.infer('versioned', [{ name: 'INPUT0', datatype: 'INT32', shape: [1], data: [1] }], {
        modelVersion: 7,
      }),
    );
    expect(error.status).toBeGreaterThanOrEqual(400);
    expect(error.message).toContain('versioned');
  });

  it('wrong datatype, wrong shape and an unknown input are refused with 400', async () => {
    const wrongType = await serverError(
      client.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 1], data: [1] }]),
    );
    expect(wrongType.status).toBe(400);
    const wrongShape = await serverError(
      client.infer('simple', [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 3], data: [1, 2, 3] },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 3], data: [1, 2, 3] },
      ]),
    );
    expect(wrongShape.status).toBe(400);
    const unknownInput = await serverError(client.infer('identity_fp32', [{ ...fp32(1), name: 'NOPE' }]));
    expect(unknownInput.status).toBe(400);
  });

  it('duplicate requested outputs → "output \'X\' already exists in request"', async () => {
    const error = await serverError(
      client.infer('identity_fp32', [fp32(1)], { outputs: [{ name: 'OUTPUT0' }, { name: 'OUTPUT0' }] }),
    );
    expect(error.message).toContain("output 'OUTPUT0' already exists in request");
  });

  it('classification of an unsupported type is refused', async () => {
    const error = await serverError(
      client.infer(
        'identity_fp16',
        [{ name: 'INPUT0', datatype: 'FP16', shape: [1, 1], data: new Uint16Array(1) }],
        {
          outputs: [{ name: 'OUTPUT0', classCount: 1 }],
        },
      ),
    );
    expect(error.message).toContain('class result not available for output due to unsupported type');
  });

  it('an unavailable model cannot be used', async () => {
    const error = await serverError(
      client.infer('python_model', [{ name: 'INPUT_IMAGE', datatype: 'BYTES', shape: [1, 1], data: ['x'] }]),
    );
    expect(error.status).toBeGreaterThanOrEqual(400);
  });
});

describe('client-side refusals never reach the server', () => {
  it('a raw binary request refuses options that need the JSON header, and more than one input', async () => {
    await expect(
      client.infer('identity_fp32', [fp32(1)], { rawBinaryRequest: true, outputs: [{ name: 'OUTPUT0' }] }),
    ).rejects.toThrow('a raw binary request cannot carry outputs');
    await expect(
      client.infer('simple', [fp32(1), fp32(1)], { rawBinaryRequest: true }),
    ).rejects.toBeInstanceOf(TritonInvalidArgumentError);
  });

  it('reserved parameters and shape/data mismatches are TritonInvalidArgumentError', async () => {
    await expect(
      client.infer('simple', [fp32(1)], { parameters: { sequence_id: 1 } }),
    ).rejects.toBeInstanceOf(TritonInvalidArgumentError);
    await expect(
      client.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data: [1] }]),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});

describe('timeouts, aborts and connection failures against the real server', () => {
  it('times out a call to the slow model', async () => {
    const error: unknown = await client
      .infer('slow_identity', [fp32(1)], { timeoutMs: 10 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TritonTimeoutError);
    expect(await client.isServerLive()).toBe(true);
  });

  it('aborts a call to the slow model', async () => {
    const controller = new AbortController();
    const pending = client.infer('slow_identity', [fp32(1)], { signal: controller.signal });
    setTimeout(() => controller.abort(), 5);
    await expect(pending).rejects.toBeInstanceOf(TritonAbortError);
  });

  it('reports a connection error for a port nobody listens on', async () => {
    const dead = new TritonClient({ url: '127.0.0.1:1', maxRetries: 0 });
    await expect(dead.isServerLive()).rejects.toBeInstanceOf(TritonConnectionError);
    await dead.close();
  });
});
