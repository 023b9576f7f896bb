/**
 * The server's one-copy encoders of `ModelInferResponse` and `ModelStreamInferResponse`
 * (`response-encoder.ts`) write the bytes protobuf-es's `toBinary` writes, and the server's service
 * definition (`server-definition.ts`) uses them and the packed request reader.
 */
import {
  ModelInferRequestSchema,
  ModelInferResponseSchema,
  ModelStreamInferResponseSchema,
  decodeMessage,
  encodeMessage,
  serviceDefinition,
} from '@tritonserver-ts/protocol/grpc';
import { type MessageInitShape } from '@tritonserver-ts/protocol/grpc';
import { describe, expect, it } from 'vitest';

import { packedBytesContents } from '../../src/grpc/packed-request.js';
import { encodeModelInferResponse, encodeModelStreamInferResponse } from '../../src/grpc/response-encoder.js';
import { serverDefinition } from '../../src/grpc/server-definition.js';

type ResponseInit = MessageInitShape<typeof ModelInferResponseSchema>;

const pattern = (n: number, seed = 1): Uint8Array =>
  Uint8Array.from({ length: n }, (_, i) => (i * seed) & 0xff);

const RESPONSES: [string, ResponseInit][] = [
  [
    'no raw outputs',
    { modelName: 'm', modelVersion: '1', outputs: [{ name: 'A', datatype: 'FP32', shape: [0n] }] },
  ],
  [
    'raw outputs of every size class, parameters and an id',
    {
      modelName: 'identity_bytes',
      modelVersion: '1',
      id: 'req-1',
      parameters: { triton_final_response: { parameterChoice: { case: 'boolParam', value: true } } },
      outputs: [
        { name: 'A', datatype: 'BYTES', shape: [1n, 3n] },
        { name: 'B', datatype: 'INT32', shape: [0n] },
        { name: 'C', datatype: 'UINT8', shape: [70_000n] },
      ],
      rawOutputContents: [pattern(127), new Uint8Array(0), pattern(70_000, 3)],
    },
  ],
];

describe('the one-copy response encoders', () => {
  it.each(RESPONSES)('ModelInferResponse (%s): the bytes toBinary writes', (_, init) => {
    const expected = encodeMessage(ModelInferResponseSchema, init);
    expect(Buffer.from(encodeModelInferResponse(init)).equals(Buffer.from(expected))).toBe(true);
  });

  it.each(RESPONSES)('ModelStreamInferResponse (%s): the bytes toBinary writes', (_, init) => {
    for (const errorMessage of ['', 'failed']) {
      const message = { errorMessage, inferResponse: init };
      const expected = encodeMessage(ModelStreamInferResponseSchema, message);
      expect(Buffer.from(encodeModelStreamInferResponse(message)).equals(Buffer.from(expected))).toBe(true);
    }
    const errorOnly = { errorMessage: 'failed' };
    expect(
      Buffer.from(encodeModelStreamInferResponse(errorOnly)).equals(
        Buffer.from(encodeMessage(ModelStreamInferResponseSchema, errorOnly)),
      ),
    ).toBe(true);
  });

  it('keeps unknown fields where toBinary writes them', () => {
    const known = encodeMessage(ModelInferResponseSchema, RESPONSES[1]?.[1] as ResponseInit);
    const withUnknown = decodeMessage(
      ModelInferResponseSchema,
      Buffer.concat([known, Buffer.from([0x78, 0x01])]),
    );
    expect(Buffer.from(encodeModelInferResponse(withUnknown)).subarray(-2).toString('hex')).toBe('7801');
  });

  it("are the server's serializers, with the packed request reader", () => {
    const def = serverDefinition(serviceDefinition);
    expect(def.ModelInfer.responseSerialize).toBe(encodeModelInferResponse);
    expect(def.ModelStreamInfer.responseSerialize).toBe(encodeModelStreamInferResponse);
    expect(def.ServerLive.responseSerialize).toBe(serviceDefinition.ServerLive.responseSerialize);
    const request = encodeMessage(ModelInferRequestSchema, {
      modelName: 'm',
      inputs: [{ name: 'S', datatype: 'BYTES', shape: [1n], contents: { bytesContents: [pattern(3)] } }],
    });
    const decoded = def.ModelStreamInfer.requestDeserialize(Buffer.from(request));
    const contents = decoded.inputs[0]?.contents;
    expect(contents?.bytesContents).toEqual([]);
    expect([...(packedBytesContents(contents as never) ?? [])]).toEqual([3, 0, 0, 0, 0, 1, 2]);
  });
});
