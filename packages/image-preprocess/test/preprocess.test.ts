import { readFileSync } from 'node:fs';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PREPROCESS_CONFIG,
  ImagePreprocessError,
  decodeImage,
  normalizeToTensor,
  preprocessConfigFromParameters,
  preprocessImage,
} from '../src/index.js';
import { ifctPhoto, skimage } from './fixtures.js';

/** A valid PNG whose header claims width×height but whose data is tiny: a decompression-bomb shape. */
function pngHeaderOnly(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.alloc(1024))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (err) {
    expect(err).toBeInstanceOf(ImagePreprocessError);
    return (err as ImagePreprocessError).code;
  }
}

describe('decodeImage', () => {
  it('decodes a real JPEG photo to 8-bit RGB', async () => {
    const d = await decodeImage(readFileSync(ifctPhoto('A001')));
    expect(d).toMatchObject({ width: 307, height: 173, format: 'jpeg', orientation: 1, hadAlpha: false });
    expect(d.data.length).toBe(307 * 173 * 3);
  });

  it('expands greyscale and palette to RGB and drops alpha', async () => {
    const grey = await decodeImage(readFileSync(skimage('camera.png')));
    expect(grey.sourceChannels).toBe(1);
    expect(grey.data.length).toBe(grey.width * grey.height * 3);
    // Grey replicated into R, G and B.
    expect([grey.data[300], grey.data[301]]).toEqual([grey.data[302], grey.data[302]]);
    const rgba = await decodeImage(readFileSync(skimage('logo.png')));
    expect(rgba.hadAlpha).toBe(true);
    expect(rgba.data.length).toBe(rgba.width * rgba.height * 3);
    const pal = await decodeImage(readFileSync(skimage('palette_color.png')));
    expect(pal.data.length).toBe(pal.width * pal.height * 3);
  });

  it('refuses empty input, text, and SVG with stable codes', async () => {
    expect(await codeOf(decodeImage(new Uint8Array(0)))).toBe('EMPTY_IMAGE');
    expect(await codeOf(decodeImage(Buffer.from('hello, this is not an image')))).toBe('UNSUPPORTED_FORMAT');
    const svg = Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>',
    );
    expect(await codeOf(decodeImage(svg))).toBe('UNSUPPORTED_FORMAT');
  });

  it('refuses a truncated JPEG as CORRUPT_IMAGE with a readable reason', async () => {
    const jpeg = readFileSync(ifctPhoto('N010'));
    const err = await decodeImage(jpeg.subarray(0, Math.floor(jpeg.length / 2))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImagePreprocessError);
    expect((err as ImagePreprocessError).code).toBe('CORRUPT_IMAGE');
    expect((err as Error).message).toMatch(/could not be decoded/);
  });

  it('refuses a decompression bomb from its header, before decoding', async () => {
    const bomb = pngHeaderOnly(100_000, 100_000);
    expect(bomb.length).toBeLessThan(2000);
    const started = performance.now();
    expect(await codeOf(decodeImage(bomb))).toBe('TOO_MANY_PIXELS');
    expect(performance.now() - started).toBeLessThan(2000); // decoding 10^10 pixels would take minutes
    // A real photo over a configured limit.
    expect(await codeOf(decodeImage(readFileSync(ifctPhoto('A001')), { maxPixels: 10_000 }))).toBe(
      'TOO_MANY_PIXELS',
    );
    expect(await codeOf(decodeImage(readFileSync(ifctPhoto('A001')), { maxDimension: 300 }))).toBe(
      'TOO_MANY_PIXELS',
    );
  });

  it('accepts WebP and GIF', async () => {
    const src = readFileSync(ifctPhoto('S005'));
    const { width, height } = await sharp(src).metadata();
    for (const buf of [await sharp(src).webp().toBuffer(), await sharp(src).gif().toBuffer()]) {
      const d = await decodeImage(buf);
      expect([d.format, d.width, d.height]).toEqual([expect.stringMatching(/webp|gif/), width, height]);
    }
  });
});

describe('normalizeToTensor', () => {
  const px = new Uint8Array([255, 0, 128, 10, 20, 30]); // two pixels
  const cfg = { ...DEFAULT_PREPROCESS_CONFIG };
  const n = (v: number, c: number) => (v / 255 - cfg.mean[c]!) / cfg.std[c]!;

  it('writes CHW planes', () => {
    const t = normalizeToTensor(px, 2, cfg);
    const want = [n(255, 0), n(10, 0), n(0, 1), n(20, 1), n(128, 2), n(30, 2)];
    want.forEach((w, i) => expect(t[i]).toBeCloseTo(w, 5));
  });

  it('writes HWC and BGR when asked', () => {
    const t = normalizeToTensor(px, 2, { ...cfg, layout: 'HWC', color: 'BGR' });
    const want = [n(128, 2), n(0, 1), n(255, 0), n(30, 2), n(20, 1), n(10, 0)];
    want.forEach((w, i) => expect(t[i]).toBeCloseTo(w, 5));
  });
});

describe('preprocessConfigFromParameters', () => {
  it('falls back to the original squash/224/ImageNet/CHW/RGB', () => {
    expect(preprocessConfigFromParameters(undefined)).toEqual(DEFAULT_PREPROCESS_CONFIG);
  });

  it('reads Triton model-config parameters', () => {
    const c = preprocessConfigFromParameters({
      preprocess_resize: { string_value: 'center_crop' },
      preprocess_size: { string_value: '192' },
      preprocess_mean: { string_value: '0.5, 0.5, 0.5' },
      preprocess_std: { string_value: '[0.25,0.25,0.25]' },
      preprocess_layout: { string_value: 'NHWC' },
      preprocess_color: 'bgr',
    });
    expect(c).toMatchObject({
      resize: 'center-crop',
      width: 192,
      height: 192,
      resizeShorter: 219,
      mean: [0.5, 0.5, 0.5],
      std: [0.25, 0.25, 0.25],
      layout: 'HWC',
      color: 'BGR',
    });
  });

  it('names the bad key', () => {
    expect(() => preprocessConfigFromParameters({ preprocess_mean: '1,2' })).toThrow(/preprocess_mean/);
    expect(() => preprocessConfigFromParameters({ preprocess_resize: 'zoom' })).toThrow(/preprocess_resize/);
    expect(() => preprocessConfigFromParameters({ preprocess_size: '0' })).toThrow(/preprocess_size/);
    expect(() => preprocessConfigFromParameters({ preprocess_std: '1,0,1' })).toThrow(/preprocess_std/);
  });
});

describe('preprocessImage', () => {
  it('returns a 3×224×224 tensor of plausible normalised values and timings', async () => {
    const r = await preprocessImage(readFileSync(ifctPhoto('M001')));
    expect(r.tensor.length).toBe(3 * 224 * 224);
    let min = Infinity;
    let max = -Infinity;
    for (const v of r.tensor) {
      min = Math.min(min, v);
      max = Math.max(max, v);
    }
    expect(min).toBeGreaterThanOrEqual(-2.12);
    expect(max).toBeLessThanOrEqual(2.65);
    expect(max - min).toBeGreaterThan(1); // a real photo, not a flat fill
    expect(r.timings.decodeMs).toBeGreaterThan(0);
    expect(r.timings.preprocessMs).toBeGreaterThan(0);
  });
});
