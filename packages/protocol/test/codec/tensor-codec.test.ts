import { describe, expect, it } from 'vitest';
import {
  createTensor,
  deserializeBytesTensor,
  ProtocolError,
  serializeByteTensor,
  serializedByteSize,
  stringsToBytes,
  bytesToStrings,
  tensorDataFromBytes,
  tensorDataToBytes,
  type Datatype,
  type TensorData,
} from '../../src/index.js';
import { parseJson, stringifyJson } from '../../src/http/json.js';
import { tensorDataFromJson, tensorDataToJson } from '../../src/http/json-data.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof ProtocolError) return e.code;
    throw e;
  }
  return undefined;
}

const samples: Record<Exclude<Datatype, 'BYTES'>, TensorData> = {
  BOOL: new Uint8Array([1, 0, 1]),
  UINT8: new Uint8Array([0, 255, 7]),
  UINT16: new Uint16Array([0, 65535, 7]),
  UINT32: new Uint32Array([0, 4294967295, 7]),
  UINT64: new BigUint64Array([0n, 2n ** 64n - 1n, 7n]),
  INT8: new Int8Array([-128, 127, 0]),
  INT16: new Int16Array([-32768, 32767, 0]),
  INT32: new Int32Array([-2147483648, 2147483647, 0]),
  INT64: new BigInt64Array([-(2n ** 63n), 2n ** 63n - 1n, 0n]),
  FP16: new Uint16Array([0x3c00, 0x8000, 0x7c00]),
  FP32: new Float32Array([1.5, -0, 3.4e38]),
  FP64: new Float64Array([Math.PI, -1e300, 5e-324]),
  BF16: new Uint16Array([0x3f80, 0xc000, 0x7f80]),
};

describe('raw tensor data', () => {
  it('round-trips every fixed-size datatype through little-endian bytes', () => {
    for (const [datatype, data] of Object.entries(samples) as [Datatype, TensorData][]) {
      const bytes = tensorDataToBytes(datatype, data);
      expect(tensorDataFromBytes(datatype, bytes, 3), datatype).toEqual(data);
    }
  });

  it('writes little-endian regardless of how the array was built', () => {
    expect(Array.from(tensorDataToBytes('INT32', new Int32Array([1, -2])))).toEqual([
      1, 0, 0, 0, 254, 255, 255, 255,
    ]);
  });

  it('returns a zero-copy view when aligned and a copy when not', () => {
    const buffer = new Uint8Array(16);
    new Float32Array(buffer.buffer).set([1, 2, 3, 4]);
    const aligned = tensorDataFromBytes('FP32', buffer.subarray(4, 12), 2);
    expect(aligned.buffer).toBe(buffer.buffer);
    expect(Array.from(aligned)).toEqual([2, 3]);
    const odd = new Uint8Array(9);
    odd.set(buffer.subarray(0, 8), 1);
    const copied = tensorDataFromBytes('FP32', odd.subarray(1), 2);
    expect(copied.buffer).not.toBe(odd.buffer);
    expect(Array.from(copied)).toEqual([1, 2]);
  });

  it('refuses a byte size that does not match the element count', () => {
    expect(codeOf(() => tensorDataFromBytes('FP32', new Uint8Array(7)))).toBe('BINARY_SIZE_MISMATCH');
    expect(codeOf(() => tensorDataFromBytes('INT64', new Uint8Array(8), 2))).toBe('BINARY_SIZE_MISMATCH');
  });
});

describe('BYTES helpers', () => {
  it('serializes with uint32 little-endian length prefixes, empty elements included', () => {
    const bytes = serializeByteTensor(['ab', '', new Uint8Array([0xff])]);
    expect(Array.from(bytes)).toEqual([2, 0, 0, 0, 97, 98, 0, 0, 0, 0, 1, 0, 0, 0, 0xff]);
    expect(serializedByteSize(['ab', '', new Uint8Array([0xff])])).toBe(15);
    const back = deserializeBytesTensor(bytes, 3);
    expect(back.map((b) => Array.from(b))).toEqual([[97, 98], [], [0xff]]);
  });

  it('refuses a length prefix that runs past the end and a truncated prefix', () => {
    expect(codeOf(() => deserializeBytesTensor(new Uint8Array([9, 0, 0, 0, 1])))).toBe(
      'INVALID_BYTES_ELEMENT',
    );
    expect(codeOf(() => deserializeBytesTensor(new Uint8Array([1, 0])))).toBe('INVALID_BYTES_ELEMENT');
    expect(codeOf(() => deserializeBytesTensor(serializeByteTensor(['a']), 2))).toBe(
      'ELEMENT_COUNT_MISMATCH',
    );
  });

  it('converts strings to UTF-8 and back, strictly when asked', () => {
    expect(bytesToStrings(stringsToBytes(['naïve', '🍜']))).toEqual(['naïve', '🍜']);
    expect(codeOf(() => bytesToStrings([new Uint8Array([0xc3])], { fatal: true }))).toBe(
      'INVALID_BYTES_ELEMENT',
    );
  });
});

/** `value` nested in `depth` arrays. */
function nest(depth: number, value: unknown = 1): unknown[] {
  let v: unknown = value;
  for (let i = 0; i < depth; i++) v = [v];
  return v as unknown[];
}

describe('JSON tensor data', () => {
  it('encodes BOOL as booleans, BYTES as strings and safe 64-bit values as numbers', () => {
    expect(tensorDataToJson('BOOL', new Uint8Array([1, 0]))).toEqual([true, false]);
    expect(tensorDataToJson('BYTES', stringsToBytes(['x']))).toEqual(['x']);
    expect(tensorDataToJson('INT64', new BigInt64Array([5n, 2n ** 62n]))).toEqual([5, 2n ** 62n]);
  });

  it('refuses FP16 and BF16 with Triton wording in both directions', () => {
    expect(() => tensorDataToJson('FP16', new Uint16Array(1), 'input', 'x')).toThrow(
      'receiving FP16 data via JSON is not supported. Please use the binary data format for input x',
    );
    expect(() => tensorDataFromJson('BF16', [1], 1, 'y', 'output')).toThrow(
      'sending BF16 data via JSON is not supported. Please use the binary data format for output',
    );
  });

  it('accepts nested data and checks element count, type and range', () => {
    expect(
      Array.from(
        tensorDataFromJson(
          'INT32',
          [
            [1, 2],
            [3, 4],
          ],
          4,
        ),
      ),
    ).toEqual([1, 2, 3, 4]);
    expect(codeOf(() => tensorDataFromJson('INT32', [1, 2, 3], 4))).toBe('ELEMENT_COUNT_MISMATCH');
    expect(codeOf(() => tensorDataFromJson('INT8', [1.5]))).toBe('INVALID_VALUE');
    expect(codeOf(() => tensorDataFromJson('BOOL', [1]))).toBe('INVALID_VALUE');
    expect(codeOf(() => tensorDataFromJson('BYTES', [1]))).toBe('INVALID_VALUE');
    expect(codeOf(() => tensorDataFromJson('UINT64', [-1]))).toBe('INVALID_VALUE');
  });

  it("reads elements with TritonJson's type checks and messages, casting to narrower types as Triton", () => {
    const message = (fn: () => unknown): string => {
      try {
        fn();
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    };
    // As Triton's C++ casts: in range of the 64-bit read, cut to the element type.
    expect(Array.from(tensorDataFromJson('UINT8', [256, 300]))).toEqual([0, 44]);
    expect(Array.from(tensorDataFromJson('INT8', [300, -129]))).toEqual([44, 127]);
    expect(Array.from(tensorDataFromJson('INT32', [2 ** 31, 2n ** 62n + 5n]))).toEqual([-(2 ** 31), 5]);
    expect(Array.from(tensorDataFromJson('UINT64', [2n ** 64n - 1n]))).toEqual([2n ** 64n - 1n]);
    expect(message(() => tensorDataFromJson('UINT16', [-1]))).toBe(
      "Unable to parse 'data': attempt to access JSON non-unsigned-integer as unsigned-integer",
    );
    expect(message(() => tensorDataFromJson('INT64', [2n ** 63n]))).toBe(
      "Unable to parse 'data': attempt to access JSON non-signed-integer as signed-integer",
    );
    expect(message(() => tensorDataFromJson('INT32', [1.5]))).toBe(
      "Unable to parse 'data': attempt to access JSON non-signed-integer as signed-integer",
    );
    expect(message(() => tensorDataFromJson('FP32', ['1']))).toBe(
      "Unable to parse 'data': attempt to access JSON non-number as double",
    );
    expect(message(() => tensorDataFromJson('BOOL', [0]))).toBe(
      "Unable to parse 'data': attempt to access JSON non-boolean as boolean",
    );
    expect(message(() => tensorDataFromJson('BYTES', ['a', 1]))).toBe(
      'Unable to parse JSON bytes array: attempt to access JSON non-string as string',
    );
    expect(message(() => tensorDataFromJson('FP32', 'abc'))).toBe(
      "Unable to parse 'data': attempt to access JSON non-array as array",
    );
  });

  it('reports the first problem in document order, as Triton walks the data', () => {
    const message = (fn: () => unknown): string => {
      try {
        fn();
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    };
    const shape = "Unable to parse 'data': Shape does not match true shape of 'data' field";
    const deep = nest(150);
    // One element too many is met before a bad element after it, and before a too-deep array.
    expect(message(() => tensorDataFromJson('INT32', [1, 2, 'x'], 1))).toBe(shape);
    expect(message(() => tensorDataFromJson('INT32', [1, 2, deep], 1))).toBe(shape);
    // A bad element before the first one too many wins.
    expect(message(() => tensorDataFromJson('INT32', ['x', 2, 3], 1))).toBe(
      "Unable to parse 'data': attempt to access JSON non-signed-integer as signed-integer",
    );
    // Too few elements are found after the walk, so a bad element anywhere wins.
    expect(message(() => tensorDataFromJson('INT32', [[1], ['x']], 5))).toBe(
      "Unable to parse 'data': attempt to access JSON non-signed-integer as signed-integer",
    );
    // Too few, as Triton 2.73 words it.
    expect(message(() => tensorDataFromJson('INT32', [[1], [2]], 5))).toBe(
      "Failed to parse 'data' field: shape does not match true shape",
    );
    expect(message(() => tensorDataFromJson('FP32', [1, 2], 3))).toBe(
      "Failed to parse 'data' field: shape does not match true shape",
    );
    // A too-deep array before a bad element wins.
    expect(message(() => tensorDataFromJson('INT32', [deep, 'x'], 5))).toBe(
      "Unable to parse 'data': JSON nesting depth exceeds maximum allowed limit (100)",
    );
    // BYTES: the element count is the model's check, not the codec's.
    expect(bytesToStrings(tensorDataFromJson('BYTES', ['a', 'b', 'c'], 2))).toEqual(['a', 'b', 'c']);
    expect(message(() => tensorDataFromJson('BYTES', ['a', 'b', 'c'], 2, 'x', 'output'))).toBe(shape);
  });

  it('walks nested data without recursion and refuses nesting deeper than 100, as Triton', () => {
    expect(Array.from(tensorDataFromJson('INT32', nest(100), 1))).toEqual([1]);
    for (const depth of [101, 100_000]) {
      expect(() => tensorDataFromJson('INT32', nest(depth), 1)).toThrow(
        "Unable to parse 'data': JSON nesting depth exceeds maximum allowed limit (100)",
      );
      // BYTES sizes its data first (JsonBytesArrayByteSize), whose error has no prefix.
      expect(() => tensorDataFromJson('BYTES', nest(depth, 'a'), 1)).toThrow(
        /^JSON nesting depth exceeds maximum allowed limit \(100\)$/,
      );
    }
  });

  it('never recurses on a deep element that is an object, even one holding a bigint', () => {
    let deep: unknown = 2n ** 60n;
    for (let i = 0; i < 200_000; i++) deep = { k: deep };
    expect(() => tensorDataFromJson('FP32', [deep], 1)).toThrow(
      "Unable to parse 'data': attempt to access JSON non-number as double",
    );
    expect(codeOf(() => tensorDataFromJson('FP32', [{ k: 'x'.repeat(10_000) }], 1))).toBe('INVALID_VALUE');
  });

  it('parses any nesting depth without recursion, 64-bit integers included, and keeps them exact', () => {
    const depth = 100_000;
    const text = `{"a":${'['.repeat(depth)}18446744073709551615${']'.repeat(depth)},"b":12345678901234567890,"c":"12345678901234567890","d":-9007199254740993}`;
    const started = performance.now();
    const parsed = parseJson(text) as { a: unknown; b: unknown; c: unknown; d: unknown };
    expect(performance.now() - started).toBeLessThan(5_000);
    let inner: unknown = parsed.a;
    let levels = 0;
    while (Array.isArray(inner)) {
      inner = inner[0];
      levels++;
    }
    expect(levels).toBe(depth);
    expect(inner).toBe(2n ** 64n - 1n);
    expect(parsed.b).toBe(12345678901234567890n);
    expect(parsed.c).toBe('12345678901234567890');
    expect(parsed.d).toBe(-9007199254740993n);
    // Invalid documents stay invalid (a long literal with leading zeros is not rewritten into a string).
    expect(codeOf(() => parseJson('[00000000000000000001]'))).toBe('MALFORMED_JSON');
    expect(codeOf(() => parseJson('[12345678901234567890'))).toBe('MALFORMED_JSON');
    // A string that looks like the internal mark is just a string.
    expect(parseJson('["\\u0000abc:12345678901234567890", 12345678901234567890]')).toEqual([
      '\u0000abc:12345678901234567890',
      12345678901234567890n,
    ]);
  });

  it('keeps 64-bit integers exact through stringifyJson and parseJson', () => {
    const text = stringifyJson({
      data: tensorDataToJson('UINT64', new BigUint64Array([2n ** 64n - 1n, 1n])),
    });
    expect(text).toBe('{"data":[18446744073709551615,1]}');
    const parsed = parseJson(text) as { data: unknown[] };
    expect(Array.from(tensorDataFromJson('UINT64', parsed.data, 2))).toEqual([2n ** 64n - 1n, 1n]);
  });

  it('parses long fractions with the fast path and returns numbers for them', () => {
    expect(parseJson('[0.30000000000000004, 1e300, 9007199254740991]')).toEqual([
      0.30000000000000004, 1e300, 9007199254740991,
    ]);
    expect(parseJson('[9007199254740993]')).toEqual([9007199254740993n]);
    expect(codeOf(() => parseJson('{"a":'))).toBe('MALFORMED_JSON');
  });
});

describe('createTensor', () => {
  it('builds typed data from plain values and checks the shape', () => {
    const t = createTensor('x', 'INT64', [2], [1, 2]);
    expect(t.data).toEqual(new BigInt64Array([1n, 2n]));
    expect(createTensor('h', 'FP16', [1], [1]).data).toEqual(new Uint16Array([0x3c00]));
    expect(codeOf(() => createTensor('x', 'FP32', [2, 2], [1, 2, 3]))).toBe('ELEMENT_COUNT_MISMATCH');
  });
});
