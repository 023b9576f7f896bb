import { describe, expect, it } from 'vitest';
import {
  decodeInferResponse,
  encodeInferResponse,
  inferResponseFromHttp,
} from '../../src/http/infer-response.js';

function response(values: Int32Array): { body: Uint8Array; headerLength: string } {
  const encoded = encodeInferResponse({
    modelName: 'cache_model',
    modelVersion: '3',
    outputs: [
      { tensor: { name: 'A', datatype: 'INT32', shape: [1, 4], data: values }, binary: true },
      { tensor: { name: 'B', datatype: 'INT32', shape: [1, 4], data: values }, binary: true },
    ],
  });
  return { body: encoded.body, headerLength: String(encoded.headerLength) };
}

describe('inferResponseFromHttp with a repeated header (decoded once, then only the tail is read)', () => {
  it('gives each response its own data and its own shape and parameter objects', () => {
    const first = response(Int32Array.from([1, 2, 3, 4]));
    const second = response(Int32Array.from([5, 6, 7, 8]));
    const a = inferResponseFromHttp(first.body, first.headerLength);
    const b = inferResponseFromHttp(second.body, second.headerLength);
    expect(Array.from(a.outputs[0]?.data as Int32Array)).toEqual([1, 2, 3, 4]);
    expect(Array.from(b.outputs[1]?.data as Int32Array)).toEqual([5, 6, 7, 8]);
    (a.outputs[0]?.shape as number[]).push(99);
    (a.outputs[0]?.parameters as Record<string, unknown>).x = 1;
    const c = inferResponseFromHttp(second.body, second.headerLength);
    expect(c.outputs[0]?.shape).toEqual([1, 4]);
    expect(c.outputs[0]?.parameters).toEqual({ binary_data_size: 16 });
    const { json: _json, ...expected } = decodeInferResponse(second.body, second.headerLength);
    expect(c).toEqual(expected);
  });

  it('still checks the binary tail against the cached header, with the same errors', () => {
    const ok = response(Int32Array.from([1, 2, 3, 4]));
    inferResponseFromHttp(ok.body, ok.headerLength);
    const short = ok.body.subarray(0, ok.body.byteLength - 4);
    const long = new Uint8Array([...ok.body, 0, 0]);
    for (const body of [short, long]) {
      const expected = (() => {
        try {
          decodeInferResponse(body, ok.headerLength);
        } catch (error) {
          return error;
        }
        return undefined;
      })();
      expect(expected).toBeInstanceOf(Error);
      expect(() => inferResponseFromHttp(body, ok.headerLength)).toThrow((expected as Error).message);
    }
  });
});
