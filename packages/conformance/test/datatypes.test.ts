import { afterAll, describe, expect, it } from 'vitest';
import {
  float32ArrayToBf16,
  float32ArrayToFp16,
  TritonInvalidArgumentError,
  type Datatype,
  type TensorData,
} from '@tritonserver-ts/client';
import { newClient, transports } from './target.js';
import { differsOver } from './transport-differences.js';

const cases: [Datatype, TensorData][] = [
  ['BOOL', new Uint8Array([1, 0, 1, 1])],
  ['INT8', new Int8Array([-128, -1, 0, 127])],
  ['INT16', new Int16Array([-32768, -1, 0, 32767])],
  ['INT32', new Int32Array([-2147483648, -1, 0, 2147483647])],
  ['INT64', new BigInt64Array([-(2n ** 63n), -1n, 2n ** 53n + 1n, 2n ** 63n - 1n])],
  ['UINT8', new Uint8Array([0, 1, 200, 255])],
  ['UINT16', new Uint16Array([0, 1, 40000, 65535])],
  ['UINT32', new Uint32Array([0, 1, 3000000000, 4294967295])],
  ['UINT64', new BigUint64Array([0n, 1n, 2n ** 53n + 1n, 2n ** 64n - 1n])],
  ['FP16', float32ArrayToFp16([0.5, -2, 65504, 2 ** -24])],
  ['FP32', new Float32Array([0.1, -3.5, 3.4e38, 1e-45])],
  ['FP64', new Float64Array([0.1, -3.5, 1e300, 5e-324])],
  ['BF16', float32ArrayToBf16([0.5, -2, 1e30, 3.0])],
];

function modelFor(datatype: Datatype): string {
  return datatype === 'BYTES' ? 'identity_string' : `identity_${datatype.toLowerCase()}`;
}

describe.each(transports)('%s: every datatype through identity models', (transport) => {
  const client = newClient(transport);
  afterAll(() => client.close());

  it.each(cases)('round-trips %s binary (raw), bit for bit', async (datatype, data) => {
    const result = await client.infer(modelFor(datatype), [
      { name: 'INPUT0', datatype, shape: [1, 4], data },
    ]);
    expect(result.datatype('OUTPUT0')).toBe(datatype);
    expect(result.shape('OUTPUT0')).toEqual([1, 4]);
    expect(result.asTypedArray('OUTPUT0')).toEqual(data);
    const binaryDataSize = result.response.outputs[0]?.parameters?.binary_data_size;
    if (differsOver(transport, 'binary-data-size')) expect(binaryDataSize).toBeUndefined();
    else expect(binaryDataSize).toBeGreaterThan(0);
  });

  // Over HTTP: JSON `data` both ways. Over gRPC: typed `contents` in (INT8/INT16 widened in
  // int_contents, UINT8/UINT16 in uint_contents), raw out (Triton never answers typed contents).
  it.each(cases.filter(([d]) => d !== 'FP16' && d !== 'BF16'))(
    'round-trips %s as JSON / typed contents, 64-bit values exact',
    async (datatype, data) => {
      const result = await client.infer(
        modelFor(datatype),
        [{ name: 'INPUT0', datatype, shape: [1, 4], data, binaryData: false }],
        {
          outputs: [{ name: 'OUTPUT0', binaryData: false }],
        },
      );
      if (!differsOver(transport, 'json-outputs')) {
        expect(result.response.outputs[0]?.parameters?.binary_data_size).toBeUndefined();
        expect(result.response.outputs[0]?.data).toBeDefined();
      }
      expect(result.asTypedArray('OUTPUT0')).toEqual(data);
    },
  );

  it('refuses FP16 and BF16 as JSON / typed contents before sending', async () => {
    for (const datatype of ['FP16', 'BF16'] as const) {
      await expect(
        client.infer(modelFor(datatype), [
          { name: 'INPUT0', datatype, shape: [1, 1], data: new Uint16Array(1), binaryData: false },
        ]),
      ).rejects.toBeInstanceOf(TritonInvalidArgumentError);
    }
  });

  it('round-trips BYTES as strings, including empty and non-ASCII ones, binary and JSON', async () => {
    const strings = ['ramen', '', 'crème brûlée', '🍣'];
    for (const binaryData of [true, false]) {
      const result = await client.infer(
        'identity_string',
        [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 4], data: strings, binaryData }],
        { outputs: [{ name: 'OUTPUT0', binaryData }] },
      );
      expect(result.asStrings('OUTPUT0')).toEqual(strings);
    }
  });

  it('returns an empty tensor for a zero-size input', async () => {
    const result = await client.infer('identity_fp32', [
      { name: 'INPUT0', datatype: 'FP32', shape: [1, 0], data: new Float32Array(0) },
    ]);
    expect(result.shape('OUTPUT0')).toEqual([1, 0]);
    expect(result.asTypedArray('OUTPUT0', 'FP32')).toEqual(new Float32Array(0));
  });
});
