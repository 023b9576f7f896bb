/**
 * A port of Pillow's separable resampler (`libImaging/Resample.c`, 8 bits per channel) for the
 * BILINEAR filter, so that our tensors match torchvision's `Resize` on PIL images exactly: the same
 * coefficients (triangle filter, support widened by the scale when reducing), the same 22-bit fixed
 * point and rounding, horizontal pass first into an 8-bit intermediate, then vertical.
 */

const PRECISION_BITS = 32 - 8 - 2;
const HALF = 1 << (PRECISION_BITS - 1);
const ONE = 1 << PRECISION_BITS;

interface Coeffs {
  ksize: number;
  /** Per output index: first input index and number of taps. */
  bounds: Int32Array;
  /** Per output index: ksize fixed-point weights. */
  kk: Int32Array;
}

function bilinear(x: number): number {
  const a = x < 0 ? -x : x;
  return a < 1 ? 1 - a : 0;
}

function precompute(inSize: number, outSize: number): Coeffs {
  const scale = inSize / outSize;
  const filterscale = scale < 1 ? 1 : scale;
  const support = 1 * filterscale;
  const ksize = Math.ceil(support) * 2 + 1;
  const bounds = new Int32Array(outSize * 2);
  const kk = new Int32Array(outSize * ksize);
  const k = new Float64Array(ksize);
  const ss = 1 / filterscale;
  for (let xx = 0; xx < outSize; xx++) {
    const center = (xx + 0.5) * scale;
    // C casts truncate toward zero.
    let xmin = Math.trunc(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    let xmax = Math.trunc(center + support + 0.5);
    if (xmax > inSize) xmax = inSize;
    xmax -= xmin;
    let ww = 0;
    for (let x = 0; x < xmax; x++) {
      const w = bilinear((x + xmin - center + 0.5) * ss);
      k[x] = w;
      ww += w;
    }
    for (let x = 0; x < ksize; x++) {
      let w = x < xmax ? (k[x] ?? 0) : 0;
      if (x < xmax && ww !== 0) w /= ww;
      // normalize_coeffs_8bpc
      kk[xx * ksize + x] = w < 0 ? Math.trunc(-0.5 + w * ONE) : Math.trunc(0.5 + w * ONE);
    }
    bounds[xx * 2] = xmin;
    bounds[xx * 2 + 1] = xmax;
  }
  return { ksize, bounds, kk };
}

const clip8 = (v: number): number => {
  const s = v >> PRECISION_BITS;
  return s < 0 ? 0 : s > 255 ? 255 : s;
};

/**
 * Resizes 8-bit RGB (HWC, 3 channels) from inW×inH to outW×outH exactly like Pillow's
 * `Image.resize((outW, outH), Image.BILINEAR)`.
 */
export function resizeRgbLikePillow(
  src: Uint8Array,
  inW: number,
  inH: number,
  outW: number,
  outH: number,
): Uint8Array {
  const needH = outW !== inW;
  const needV = outH !== inH;
  const vert = precompute(inH, outH);
  let img = src;
  let w = inW;
  let h = inH;
  if (needH) {
    const horiz = precompute(inW, outW);
    // Only rows that the vertical pass will read.
    const yFirst = vert.bounds[0] ?? 0;
    const yLast = (vert.bounds[(outH - 1) * 2] ?? 0) + (vert.bounds[(outH - 1) * 2 + 1] ?? 0);
    for (let i = 0; i < outH; i++) vert.bounds[i * 2] = (vert.bounds[i * 2] ?? 0) - yFirst;
    const rows = yLast - yFirst;
    const tmp = new Uint8Array(outW * rows * 3);
    const { ksize, bounds, kk } = horiz;
    for (let y = 0; y < rows; y++) {
      const inRow = (y + yFirst) * inW * 3;
      const outRow = y * outW * 3;
      for (let xx = 0; xx < outW; xx++) {
        const xmin = bounds[xx * 2]!;
        const xmax = bounds[xx * 2 + 1]!;
        const kOff = xx * ksize;
        let s0 = HALF;
        let s1 = HALF;
        let s2 = HALF;
        let p = inRow + xmin * 3;
        for (let x = 0; x < xmax; x++, p += 3) {
          const c = kk[kOff + x]!;
          s0 += img[p]! * c;
          s1 += img[p + 1]! * c;
          s2 += img[p + 2]! * c;
        }
        const o = outRow + xx * 3;
        tmp[o] = clip8(s0);
        tmp[o + 1] = clip8(s1);
        tmp[o + 2] = clip8(s2);
      }
    }
    img = tmp;
    w = outW;
    h = rows;
  }
  if (!needV) {
    return img;
  }
  const out = new Uint8Array(outW * outH * 3);
  const { ksize, bounds, kk } = vert;
  const stride = w * 3;
  void h;
  for (let yy = 0; yy < outH; yy++) {
    const ymin = bounds[yy * 2]!;
    const ymax = bounds[yy * 2 + 1]!;
    const kOff = yy * ksize;
    const outRow = yy * stride;
    for (let x = 0; x < stride; x++) {
      let s = HALF;
      let p = ymin * stride + x;
      for (let y = 0; y < ymax; y++, p += stride) s += img[p]! * kk[kOff + y]!;
      out[outRow + x] = clip8(s);
    }
  }
  return out;
}
