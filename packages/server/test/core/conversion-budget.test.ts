/**
 * BYTES inputs an onnxruntime model needs as one string per element count against the request's
 * limits before a string is made (issue 23, item 2; `core/conversion-budget.ts`): over the
 * per-request limit they are refused as bad input on both wires (HTTP 400, gRPC INVALID_ARGUMENT),
 * naming the flag; under it they run. The identity backend takes the buffer as it is, so the same
 * request to it is not counted. The in-flight share is taken and given back around the request.
 */
import { BytesList, type PackedTensor } from '@tritonserver-ts/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  ConversionTooLargeError,
  TEXT_ELEMENT_BYTES,
  conversionCost,
  holdConversion,
} from '../../src/core/conversion-budget.js';
import { ServerError } from '../../src/common/errors.js';
import type { InputBudget } from '../../src/common/types.js';
import { GrpcStatus, GrpcTestClient, grpcError, startGrpcTestServer } from '../grpc/helpers.js';
import { infer, type TestServer } from '../helpers/server.js';

const MiB = 1024 * 1024;

function bytesInput(model: string, n: number): Parameters<typeof infer> {
  return [
    srv.url,
    model,
    [
      {
        name: 'INPUT0',
        datatype: 'BYTES',
        shape: [1, n],
        data: BytesList.from(new Array<string>(n).fill('')).toArray(),
      },
    ],
  ];
}

let srv: TestServer & { grpcTarget: string };
let client: GrpcTestClient;

beforeAll(async () => {
  srv = await startGrpcTestServer({
    only: ['identity_string', 'identity_bytes'],
    httpMaxInputSize: 1 * MiB,
    httpMaxInflightBodyBytes: 2 * MiB,
  });
  client = new GrpcTestClient(srv.grpcTarget);
});

afterAll(async () => {
  client.close();
  await srv.close();
});

describe('the conversion of BYTES inputs to onnxruntime strings', () => {
  it('HTTP: over --http-max-input-size once converted: 400 before a string is made; under it: answered', async () => {
    const n = 20_000; // 80 KB of body, 1.9 MB as strings
    const refused = await infer(...bytesInput('identity_string', n));
    expect(refused.status).toBe(400);
    expect(refused.error).toMatch(
      new RegExp(
        `^Request size of \\d+ including ${n * TEXT_ELEMENT_BYTES} bytes for its ${n} BYTES elements as onnxruntime strings exceeds the maximum allowed value of ${MiB}\\. Use --http-max-input-size to increase the limit, or send fewer elements\\.$`,
      ),
    );
    // The identity backend takes the buffer: not counted.
    expect((await infer(...bytesInput('identity_bytes', n))).status).toBe(200);
    const small = await infer(...bytesInput('identity_string', 5_000));
    expect(small.status).toBe(200);
    expect(small.decoded?.outputs[0]?.shape).toEqual([1, 5_000]);
  });

  it('gRPC: over the smaller of the message limit and the in-flight budget: INVALID_ARGUMENT', async () => {
    const request = (n: number): object => ({
      modelName: 'identity_string',
      inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1n, BigInt(n)] }],
      rawInputContents: [new Uint8Array(4 * n)],
    });
    const e = await grpcError(client.call('ModelInfer', request(30_000)));
    expect(e.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(e.details).toMatch(
      /as onnxruntime strings exceeds the maximum allowed value of 2097152\. Use --http-max-inflight-body-bytes/,
    );
    await expect(client.call('ModelInfer', request(5_000))).resolves.toBeDefined();
  });
});

describe('holdConversion', () => {
  const tensor = (data: PackedTensor['data']): PackedTensor => ({
    name: 'T',
    datatype: 'BYTES',
    shape: [1],
    data,
  });
  const inputs = new Map([
    ['A', tensor(BytesList.from(['ab', '', 'cde']))],
    ['B', { name: 'B', datatype: 'INT32', shape: [2], data: new Int32Array(2) } satisfies PackedTensor],
  ]);

  function budget(maxBytes: number, free: number): InputBudget & { taken: number } {
    const b = {
      heldBytes: 100,
      maxBytes,
      maxBytesFlag: '--flag',
      taken: 0,
      acquire(bytes: number): () => void {
        if (bytes > free - b.taken) throw new ServerError('UNAVAILABLE', 'budget full');
        b.taken += bytes;
        return () => {
          b.taken -= bytes;
        };
      },
    };
    return b;
  }

  it('costs the elements and copies of their bytes for onnxruntime, nothing for other backends', () => {
    expect(conversionCost('onnxruntime', inputs)).toEqual({
      elements: 3,
      bytes: 3 * TEXT_ELEMENT_BYTES + 3 * 5,
    });
    expect(conversionCost('identity', inputs)).toEqual({ elements: 0, bytes: 0 });
    expect(conversionCost('python', inputs).bytes).toBe(0);
  });

  it('takes the cost from the in-flight budget until released, refuses over the per-request limit', () => {
    const cost = conversionCost('onnxruntime', inputs).bytes;
    const b = budget(100 + 10 + cost, 10_000);
    const release = holdConversion('onnxruntime', inputs, b, 10);
    expect(b.taken).toBe(cost);
    release();
    expect(b.taken).toBe(0);
    expect(() => holdConversion('onnxruntime', inputs, b, 11)).toThrow(ConversionTooLargeError);
    // A full in-flight budget: its refusal (UNAVAILABLE).
    expect(() => holdConversion('onnxruntime', inputs, budget(1 << 30, cost - 1))).toThrow('budget full');
    // No budget (in-process callers), or nothing to convert: nothing taken.
    expect(() => holdConversion('onnxruntime', inputs, undefined)()).not.toThrow();
    expect(holdConversion('identity', inputs, budget(0, 0))).toBeTypeOf('function');
  });
});
