import { describe, expect, it } from 'vitest';
import {
  bf16ArrayToFloat32,
  bf16BitsToFloat32,
  float32ArrayToBf16,
  float32ArrayToFp16,
  float32ToBf16Bits,
  float32ToFp16Bits,
  fp16ArrayToFloat32,
  fp16BitsToFloat32,
} from '../../src/index.js';

describe('FP16 conversion', () => {
  it('encodes normal values, the largest half and signed zeros exactly', () => {
    expect(float32ToFp16Bits(1)).toBe(0x3c00);
    expect(float32ToFp16Bits(-2)).toBe(0xc000);
    expect(float32ToFp16Bits(65504)).toBe(0x7bff);
    expect(float32ToFp16Bits(0)).toBe(0x0000);
    expect(float32ToFp16Bits(-0)).toBe(0x8000);
    expect(float32ToFp16Bits(0.333251953125)).toBe(0x3555);
  });

  it('rounds to nearest with ties to even', () => {
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to the even mantissa (1).
    expect(float32ToFp16Bits(1 + 2 ** -11)).toBe(0x3c00);
    // 1 + 3·2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
    expect(float32ToFp16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(float32ToFp16Bits(1 + 2 ** -11 + 2 ** -20)).toBe(0x3c01);
  });

  it('produces subnormals and underflows to zero at half the smallest subnormal', () => {
    expect(float32ToFp16Bits(2 ** -24)).toBe(0x0001);
    expect(float32ToFp16Bits(2 ** -14 - 2 ** -24)).toBe(0x03ff);
    expect(float32ToFp16Bits(2 ** -25)).toBe(0x0000);
    expect(float32ToFp16Bits(2 ** -25 * 1.5)).toBe(0x0001);
    expect(float32ToFp16Bits(-(2 ** -24))).toBe(0x8001);
  });

  it('overflows to infinity and keeps NaN a NaN', () => {
    expect(float32ToFp16Bits(65520)).toBe(0x7c00);
    expect(float32ToFp16Bits(1e10)).toBe(0x7c00);
    expect(float32ToFp16Bits(-Infinity)).toBe(0xfc00);
    const nan = float32ToFp16Bits(NaN);
    expect(nan & 0x7c00).toBe(0x7c00);
    expect(nan & 0x3ff).not.toBe(0);
  });

  it('decodes every half value and round-trips all of them', () => {
    const all = new Uint16Array(65536).map((_, i) => i);
    const floats = fp16ArrayToFloat32(all);
    expect(floats[0x3c00]).toBe(1);
    expect(floats[0x0001]).toBe(2 ** -24);
    expect(floats[0xfc00]).toBe(-Infinity);
    expect(Number.isNaN(floats[0x7e00])).toBe(true);
    expect(fp16BitsToFloat32(0x7bff)).toBe(65504);
    const back = float32ArrayToFp16(floats);
    for (let i = 0; i < 65536; i++) {
      const isNaN = (i & 0x7c00) === 0x7c00 && (i & 0x3ff) !== 0;
      if (!isNaN && back[i] !== i) throw new Error(`0x${i.toString(16)} did not round-trip`);
    }
  });
});

describe('BF16 conversion', () => {
  it('truncates to the upper 16 bits by default, like the Python client', () => {
    // 1.00390625 = 0x3f808000: truncation gives 0x3f80, rounding would give 0x3f80 (tie, even);
    // 1.01171875 = 0x3f818000: truncation 0x3f81, round-to-even 0x3f82.
    expect(float32ToBf16Bits(1.01171875)).toBe(0x3f81);
    expect(float32ToBf16Bits(1.01171875, 'nearest-even')).toBe(0x3f82);
    expect(float32ToBf16Bits(-2)).toBe(0xc000);
  });

  it('keeps NaN a NaN even when its payload is in the truncated bits', () => {
    const f = new Float32Array(new Uint32Array([0x7f800001]).buffer)[0] as number;
    expect(float32ToBf16Bits(f)).toBe(0x7fc0);
  });

  it('decodes bits exactly and converts arrays both ways', () => {
    expect(bf16BitsToFloat32(0x3f80)).toBe(1);
    const bits = float32ArrayToBf16([1, -2, 0.5, Infinity]);
    expect(Array.from(bits)).toEqual([0x3f80, 0xc000, 0x3f00, 0x7f80]);
    expect(Array.from(bf16ArrayToFloat32(bits))).toEqual([1, -2, 0.5, Infinity]);
  });
});
