import { afterAll, describe, expect, it } from 'vitest';
import {
  TritonAbortError,
  TritonConnectionError,
  TritonInvalidArgumentError,
  TritonTimeoutError,
} from '@tritonserver-ts/client';
import { clientAt, newClient, transports } from './target.js';
import { differsOver, expectServerError } from './transport-differences.js';

const fp32 = (n: number) => ({
  name: 'INPUT0',
  datatype: 'FP32' as const,
  shape: [1, n],
  data: new Float32Array(n),
});

describe.each(transports)('%s: server errors reach the caller verbatim', (transport) => {
  const client = newClient(transport);
  afterAll(() => client.close());

  it('unknown model → INVALID_ARG with the "Request for unknown model" message', async () => {
    const error = await expectServerError(client.infer('no_such_model', [fp32(1)]), transport, 'INVALID_ARG');
    expect(error.message).toMatch(/^Request for unknown model: 'no_such_model' is not found/);
    if (differsOver(transport, 'error-body')) expect(error.body).toBe(error.message);
    else expect(JSON.parse(error.body)).toEqual({ error: error.message });
  });

  it('unknown version → a server error naming the model', async () => {
    const error = await expectServerError(
      client.infer('versioned', [{ name: 'INPUT0', datatype: 'INT32', shape: [1], data: [1] }], {
        modelVersion: 7,
      }),
      transport,
    );
    expect(error.status).toBeGreaterThanOrEqual(400);
    expect(error.message).toContain('versioned');
  });

  it('wrong datatype, wrong shape and an unknown input are refused as INVALID_ARG', async () => {
    const wrongType = await expectServerError(
      client.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 1], data: [1] }]),
      transport,
      'INVALID_ARG',
    );
    expect(wrongType.message).toContain("data-type is 'INT32', but model 'identity_fp32' expects 'FP32'");
    const wrongShape = await expectServerError(
      client.infer('simple', [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 3], data: [1, 2, 3] },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 3], data: [1, 2, 3] },
      ]),
      transport,
      'INVALID_ARG',
    );
    expect(wrongShape.message).toContain("unexpected shape for input 'INPUT0' for model 'simple'");
    await expectServerError(
      client.infer('identity_fp32', [{ ...fp32(1), name: 'NOPE' }]),
      transport,
      'INVALID_ARG',
    );
  });

  it('duplicate requested outputs → "output \'X\' already exists in request"', async () => {
    const error = await expectServerError(
      client.infer('identity_fp32', [fp32(1)], { outputs: [{ name: 'OUTPUT0' }, { name: 'OUTPUT0' }] }),
      transport,
      'INVALID_ARG',
    );
    expect(error.message).toContain("output 'OUTPUT0' already exists in request");
  });

  it('classification of an unsupported type is refused', async () => {
    const error = await expectServerError(
      client.infer(
        'identity_fp16',
        [{ name: 'INPUT0', datatype: 'FP16', shape: [1, 1], data: new Uint16Array(1) }],
        {
          outputs: [{ name: 'OUTPUT0', classCount: 1 }],
        },
      ),
      transport,
    );
    expect(error.message).toContain('class result not available for output due to unsupported type');
  });

  it('an unavailable model cannot be used', async () => {
    const error = await expectServerError(
      client.infer('tensorrt_model', [
        { name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] },
      ]),
      transport,
    );
    expect(error.status).toBeGreaterThanOrEqual(400);
  });
});

describe.each(transports)('%s: client-side refusals never reach the server', (transport) => {
  const client = newClient(transport);
  afterAll(() => client.close());

  // The client refuses these before choosing a transport, so over gRPC too.
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

describe.each(transports)(
  '%s: timeouts, aborts and connection failures against the real server',
  (transport) => {
    const client = newClient(transport);
    afterAll(() => client.close());

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
      expect(await client.isServerLive()).toBe(true);
    });

    it('reports a connection error for a port nobody listens on', async () => {
      const dead = clientAt(transport, '127.0.0.1:1', { maxRetries: 0 });
      await expect(dead.isServerLive()).rejects.toBeInstanceOf(TritonConnectionError);
      await dead.close();
    });
  },
);
