/**
 * Half-precision (IEEE-754 binary16, `FP16`) and bfloat16 (`BF16`) conversions.
 *
 * FP16 encoding rounds to nearest, ties to even, produces subnormals, overflows to ±Infinity and
 * keeps NaN a NaN. BF16 encoding truncates to the upper 16 bits of the float32 pattern by default,
 * exactly like the official Python client (`serialize_bf16_tensor`); pass `'nearest-even'` to round
 * instead. Either way a NaN stays a NaN (plain truncation could turn a NaN with a low-bits-only
 * payload into Infinity; we return the quiet NaN `0x7fc0` with the sign kept instead).
 * Values given as JavaScript numbers are first rounded to float32.
 * @packageDocumentation
 */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** How a float32 is narrowed to bfloat16. */
export type Bf16Rounding = 'truncate' | 'nearest-even';

/** Converts one number to FP16 bits (round to nearest even, with subnormals, Infinity and NaN). */
export function float32ToFp16Bits(value: number): number {
  f32[0] = value;
  const x = u32[0] as number;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  const mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 | (mant >>> 13) : 0);
  const e = exp - 112; // rebias 127 → 15
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    const full = mant | 0x800000;
    const shift = 14 - e;
    let half = full >>> shift;
    const rem = full & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rem > halfway || (rem === halfway && (half & 1) === 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  // A carry out of the mantissa correctly bumps the exponent (up to Infinity).
  if (rem > 0x1000 || (rem === 0x1000 && (half & 1) === 1)) half++;
  return sign | half;
}

function fp16BitsToNumberSlow(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >>> 10) & 0x1f;
  const mant = bits & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant === 0 ? sign * Infinity : NaN;
  u32[0] = ((bits & 0x8000) << 16) | ((exp + 112) << 23) | (mant << 13);
  return f32[0] as number;
}

let fp16Table: Float32Array | undefined;
function table(): Float32Array {
  if (fp16Table === undefined) {
    fp16Table = new Float32Array(65536);
    for (let i = 0; i < 65536; i++) fp16Table[i] = fp16BitsToNumberSlow(i);
  }
  return fp16Table;
}

/** Converts FP16 bits to a number (exact: every half value is a float32). */
export function fp16BitsToFloat32(bits: number): number {
  return fp16BitsToNumberSlow(bits & 0xffff);
}

/** Converts float32 (or any numbers) to an FP16 bit array, suitable as `FP16` tensor data. */
export function float32ArrayToFp16(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = float32ToFp16Bits(values[i] as number);
  return out;
}

/** Converts `FP16` tensor data (bit patterns) to float32 values. */
export function fp16ArrayToFloat32(bits: Uint16Array): Float32Array {
  const t = table();
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = t[bits[i] as number] as number;
  return out;
}

/** Converts one number to BF16 bits (truncating by default, like the Python client). */
export function float32ToBf16Bits(value: number, rounding: Bf16Rounding = 'truncate'): number {
  f32[0] = value;
  const x = u32[0] as number;
  if ((x & 0x7f800000) === 0x7f800000 && (x & 0x7fffff) !== 0) return ((x >>> 16) & 0x8000) | 0x7fc0;
  if (rounding === 'truncate') return x >>> 16;
  const rounded = x + 0x7fff + ((x >>> 16) & 1);
  return (rounded >>> 16) & 0xffff;
}

/** Converts BF16 bits to a number (exact). */
export function bf16BitsToFloat32(bits: number): number {
  u32[0] = (bits & 0xffff) << 16;
  return f32[0] as number;
}

/** Converts float32 (or any numbers) to a BF16 bit array, suitable as `BF16` tensor data. */
export function float32ArrayToBf16(
  values: ArrayLike<number>,
  rounding: Bf16Rounding = 'truncate',
): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = float32ToBf16Bits(values[i] as number, rounding);
  return out;
}

/** Converts `BF16` tensor data (bit patterns) to float32 values. */
export function bf16ArrayToFloat32(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  const outBits = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; i++) outBits[i] = (bits[i] as number) << 16;
  return out;
}
