import { describe, expect, it } from 'vitest';
import { gunzipSync, inflateSync } from 'node:zlib';
import {
  classifyRow,
  compressBody,
  decompressBody,
  formatClassificationEntry,
  formatFixed6,
  negotiateContentEncoding,
  parseClassificationEntry,
  ProtocolError,
} from '../../src/index.js';

describe('compression', () => {
  it('uses gzip and a zlib stream (not raw deflate) and round-trips', async () => {
    const body = new TextEncoder().encode('x'.repeat(1000));
    const gz = await compressBody(body, 'gzip');
    expect(gz[0]).toBe(0x1f);
    expect(gunzipSync(gz).length).toBe(1000);
    const zl = await compressBody(body, 'deflate');
    expect(zl[0]).toBe(0x78);
    expect(inflateSync(zl).length).toBe(1000);
    expect(Buffer.from(await decompressBody(gz, 'gzip')).equals(body)).toBe(true);
    expect(Buffer.from(await decompressBody(zl, ' Deflate ')).equals(body)).toBe(true);
    expect(await decompressBody(body, 'identity')).toBe(body);
  });

  it('rejects unknown encodings and corrupt bodies with stable codes', async () => {
    await expect(decompressBody(new Uint8Array(1), 'br')).rejects.toMatchObject({
      code: 'UNSUPPORTED_ENCODING',
    });
    await expect(decompressBody(new Uint8Array([1, 2, 3]), 'gzip')).rejects.toBeInstanceOf(ProtocolError);
  });

  it.each([
    [undefined, 'identity'],
    ['gzip', 'gzip'],
    ['deflate, gzip', 'deflate'],
    ['gzip;q=0.5, deflate;q=0.8', 'deflate'],
    ['identity;q=0.1, gzip;q=0.2', 'gzip'],
    ['br', 'identity'],
    ['*', 'identity'],
    ['gzip;q=0, *;q=0.5', 'identity'],
    ['identity;q=0, *;q=0.5', 'deflate'],
  ])('negotiates %s as %s', (header, expected) => {
    expect(negotiateContentEncoding(header)).toBe(expected);
  });
});

describe('classification strings', () => {
  it('formats values like printf %f including ties to even and specials', () => {
    expect(formatFixed6(0.912345)).toBe('0.912345');
    expect(formatFixed6(0.0078125)).toBe('0.007812');
    expect(formatFixed6(0.0234375)).toBe('0.023438');
    expect(formatFixed6(-0)).toBe('-0.000000');
    expect(formatFixed6(1e22)).toBe('10000000000000000000000.000000');
    expect([formatFixed6(NaN), formatFixed6(Infinity), formatFixed6(-Infinity)]).toEqual([
      'nan',
      'inf',
      '-inf',
    ]);
  });

  it('formats integer outputs without decimals and appends labels', () => {
    expect(formatClassificationEntry(7, 3, 'INT32')).toBe('7:3');
    expect(formatClassificationEntry(0.5, 1, 'FP32', 'pizza')).toBe('0.500000:1:pizza');
  });

  it('ranks a row by value descending with ties by index and labels by index', () => {
    expect(classifyRow('FP32', new Float32Array([0.1, 0.5, 0.5, 0.2]), 3, ['a', 'b', 'c'])).toEqual([
      '0.500000:1:b',
      '0.500000:2:c',
      '0.200000:3',
    ]);
    expect(classifyRow('INT64', new BigInt64Array([3n, 9n]), 5)).toEqual(['9:1', '3:0']);
    expect(() => classifyRow('FP16', new Uint16Array(2), 1)).toThrow(
      "class result not available for output due to unsupported type 'FP16'",
    );
  });

  it("names the unsupported datatype as Triton's classification.cc does", () => {
    for (const datatype of ['BYTES', 'BOOL', 'FP16', 'BF16'] as const) {
      let message = '';
      try {
        classifyRow(datatype, new Uint8Array(0), 1);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toBe(`class result not available for output due to unsupported type '${datatype}'`);
    }
  });

  it('parses entries with and without labels, labels containing colons included', () => {
    expect(parseClassificationEntry('0.700000:1:pizza')).toEqual({ value: 0.7, index: 1, label: 'pizza' });
    expect(parseClassificationEntry('9:1')).toEqual({ value: 9, index: 1 });
    expect(parseClassificationEntry('1.000000:0:a:b')).toEqual({ value: 1, index: 0, label: 'a:b' });
    expect(() => parseClassificationEntry('oops')).toThrow(ProtocolError);
  });
});
