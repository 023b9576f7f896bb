/**
 * The infer reply of a binary-only response is written directly (infer-adapter.ts's fast path):
 * its bytes must be exactly what the shared codec's `encodeInferResponse` writes, for every kind of
 * output; responses the fast path does not take (an id, JSON outputs, no outputs) go through the
 * codec unchanged. The header bytes a model's responses repeat are reused: a change of shape, size,
 * outputs or version must never send a stale header.
 */
import { describe, expect, it } from 'vitest';

import { BytesList, type PackedTensor } from '@tritonserver-ts/protocol';
import { encodeInferResponse } from '@tritonserver-ts/protocol/http';

import type { CoreInferResponse } from '../../src/common/types.js';
import { toInferReply } from '../../src/http/infer-adapter.js';

const raw = { kind: 'raw', data: new Uint8Array(0) } as const;

function response(outputs: PackedTensor[], id?: string): CoreInferResponse {
  return {
    modelName: 'mödel "x"',
    modelVersion: '12',
    ...(id !== undefined ? { id } : {}),
    outputs: outputs.map((tensor) => ({ name: tensor.name, classification: false, tensor })),
  };
}

const tensors: PackedTensor[] = [
  { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 4], data: new Int32Array([1, -2, 3, 2147483647]) },
  { name: 'ÜNICODE\\"', datatype: 'FP32', shape: [2], data: new Float32Array([0.5, -1.25]) },
  { name: 'S', datatype: 'BYTES', shape: [2], data: BytesList.from(['héllo', '']) },
  { name: 'H', datatype: 'FP16', shape: [1], data: new Uint16Array([0x3c00]) },
  { name: 'B', datatype: 'BOOL', shape: [], data: new Uint8Array([1]) },
  { name: 'L', datatype: 'INT64', shape: [0, 3], data: new BigInt64Array(0) },
];

describe('infer reply of binary outputs', () => {
  it('writes exactly the bytes encodeInferResponse writes', async () => {
    for (let n = 1; n <= tensors.length; n++) {
      const outputs = tensors.slice(0, n);
      const reply = await toInferReply(response(outputs), raw, undefined);
      const expected = encodeInferResponse({
        modelName: 'mödel "x"',
        modelVersion: '12',
        outputs: outputs.map((tensor) => ({ tensor, binary: true })),
      });
      expect(Buffer.from(reply.body as Uint8Array).equals(Buffer.from(expected.body))).toBe(true);
      expect(reply.headers?.['Inference-Header-Content-Length']).toBe(expected.headerLength);
      expect(reply.headers?.['Content-Type']).toBe('application/octet-stream');
    }
  });

  it('stays exact when the responses of a model change shape, size, outputs or version', async () => {
    const int = (name: string, shape: number[]): PackedTensor => ({
      name,
      datatype: 'INT32',
      shape,
      data: new Int32Array(shape.reduce((a, b) => a * b, 1)),
    });
    const sequence: [string, PackedTensor[]][] = [
      ['1', [int('A', [1, 4]), int('B', [1, 4])]],
      ['1', [int('A', [1, 4]), int('B', [1, 4])]],
      ['1', [int('A', [2, 4]), int('B', [2, 4])]],
      ['1', [int('A', [1, 4])]],
      ['1', [int('B', [1, 4]), int('A', [1, 4])]],
      ['2', [int('B', [1, 4]), int('A', [1, 4])]],
      ['2', [{ ...int('B', [1, 4]), datatype: 'FP32', data: new Float32Array(4) }, int('A', [1, 4])]],
      ['2', [int('B', [4, 1]), int('A', [1, 4])]],
      ['2', [int('B', [1, 4]), int('A', [1, 4])]],
    ];
    for (const [version, outputs] of sequence) {
      const reply = await toInferReply({ ...response(outputs), modelVersion: version }, raw, undefined);
      const expected = encodeInferResponse({
        modelName: 'mödel "x"',
        modelVersion: version,
        outputs: outputs.map((tensor) => ({ tensor, binary: true })),
      });
      expect(Buffer.from(reply.body as Uint8Array).toString('latin1')).toBe(
        Buffer.from(expected.body).toString('latin1'),
      );
      expect(reply.headers?.['Inference-Header-Content-Length']).toBe(expected.headerLength);
    }
  });

  it('leaves a response with an id or without outputs to the codec', async () => {
    const withId = await toInferReply(response(tensors.slice(0, 2), 'r1'), raw, undefined);
    const expected = encodeInferResponse({
      modelName: 'mödel "x"',
      modelVersion: '12',
      id: 'r1',
      outputs: tensors.slice(0, 2).map((tensor) => ({ tensor, binary: true })),
    });
    expect(Buffer.from(withId.body as Uint8Array).equals(Buffer.from(expected.body))).toBe(true);
    const none = await toInferReply(response([]), raw, undefined);
    expect(none.headers?.['Content-Type']).toBe('application/json');
    expect(none.headers?.['Inference-Header-Content-Length']).toBeUndefined();
    expect(Buffer.from(none.body as Uint8Array).toString()).toBe(
      '{"model_name":"mödel \\"x\\"","model_version":"12","outputs":[]}',
    );
  });
});
