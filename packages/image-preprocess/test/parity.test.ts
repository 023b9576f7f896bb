import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PreprocessConfig } from '../src/index.js';
import { DEFAULT_PREPROCESS_CONFIG, preprocessImage } from '../src/index.js';
import { ifctPhoto, skimage } from './fixtures.js';

/*
 * Parity with the original GourmetGram preprocessing, torchvision on PIL:
 *   Resize((224, 224)) → ToTensor() → Normalize(ImageNet mean, std)
 * Reference tensors come from scripts/torchvision_reference.py run now with Debian's
 * python3-torchvision.
 *
 * Tolerance (default `pillow` resampler): max |Δ| ≤ 1e-5 in normalised units. Our resampler is a port
 * of Pillow's fixed-point bilinear code, so the 8-bit resized pixels are identical; what remains is
 * float32 rounding of (x/255 − mean)/std computed as one multiply-add (measured ≤ 4e-7). One 8-bit
 * level is 1/255/0.229 ≈ 0.017, so a single differing pixel value fails the test.
 *
 * For sharp's own resize (`libvips`, used by `auto` above 2 MP) we measured, against the same references: mean |Δ|
 * ≈ 0.004 (≈ 0.2 of an 8-bit level) and max |Δ| ≤ 0.16 when reducing (astronaut 512², coffee
 * 600×400), but mean |Δ| ≈ 0.17 (≈ 10 levels) when a side is enlarged (the 307×173 IFCT photos
 * going to 224 tall): libvips and Pillow place the upsampling grid differently. That is why the
 * default (`auto`) uses the Pillow port up to 2 MP and libvips only for large photos, which are always
 * reduced: there we measured mean |Δ| ≈ 0.008 and max ≈ 0.17 on 12 MP and 9 MP images.
 */

const PY = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('../scripts/torchvision_reference.py', import.meta.url));

const images: { name: string; path: string }[] = [
  // Real food photos across classes (rice, meat, seafood, egg, dairy, vegetable/fruit).
  ...['A001', 'N010', 'S005', 'M001', 'L001', 'D010'].map((c) => ({ name: `${c}.jpeg`, path: ifctPhoto(c) })),
  { name: 'coffee.png (RGB)', path: skimage('coffee.png') },
  { name: 'astronaut.png (RGB, 512²)', path: skimage('astronaut.png') },
  { name: 'camera.png (greyscale L)', path: skimage('camera.png') },
  { name: 'logo.png (RGBA)', path: skimage('logo.png') },
  { name: 'palette_color.png (palette P)', path: skimage('palette_color.png') },
];

let work: string;

function reference(paths: string[], mode: 'squash' | 'center-crop'): Float32Array[] {
  const out = join(work, mode);
  execFileSync(PY, [SCRIPT, '--out', out, '--mode', mode, ...paths], { stdio: 'pipe' });
  const index = JSON.parse(readFileSync(join(out, 'index.json'), 'utf8')) as { entries: { file: string }[] };
  return index.entries.map((e) => {
    const buf = readFileSync(join(out, e.file));
    return new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  });
}

function diff(a: Float32Array, b: Float32Array) {
  expect(a.length).toBe(b.length);
  let max = 0;
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i]! - b[i]!);
    sum += d;
    if (d > max) max = d;
  }
  return { max, mean: sum / a.length };
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'parity-'));
  // A real photo with EXIF orientation 6 (rotate 90° clockwise to display).
  const rotated = await sharp(readFileSync(ifctPhoto('N010')))
    .withMetadata({ orientation: 6 })
    .jpeg()
    .toBuffer();
  writeFileSync(join(work, 'oriented.jpeg'), rotated);
  images.push({ name: 'N010 re-encoded with EXIF orientation 6', path: join(work, 'oriented.jpeg') });
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('parity with torchvision Resize/ToTensor/Normalize on PIL', () => {
  it('squash to 224×224 matches within 1e-5 for every image (default auto → pillow below 2 MP)', async () => {
    const refs = reference(
      images.map((i) => i.path),
      'squash',
    );
    const report: string[] = [];
    for (const [i, img] of images.entries()) {
      const r = await preprocessImage(readFileSync(img.path));
      expect(r.shape).toEqual([3, 224, 224]);
      const d = diff(r.tensor, refs[i]!);
      report.push(`${img.name}: max ${d.max.toExponential(2)} mean ${d.mean.toExponential(2)}`);
      expect(d.max, img.name).toBeLessThanOrEqual(1e-5);
    }
    console.log(`squash parity:\n  ${report.join('\n  ')}`);
  });

  it('shorter side 256 + centre crop 224 matches within 1e-5', async () => {
    const subset = images.slice(0, 3).concat(images.slice(7, 9));
    const refs = reference(
      subset.map((i) => i.path),
      'center-crop',
    );
    const config: PreprocessConfig = {
      ...DEFAULT_PREPROCESS_CONFIG,
      resize: 'center-crop',
      resizeShorter: 256,
    };
    for (const [i, img] of subset.entries()) {
      const r = await preprocessImage(readFileSync(img.path), config);
      const d = diff(r.tensor, refs[i]!);
      expect(d.max, img.name).toBeLessThanOrEqual(1e-5);
    }
  });

  it('the libvips resampler stays within mean 0.01 / max 0.25 when reducing (documented trade-off)', async () => {
    const reducing = [images[6]!, images[7]!];
    const refs = reference(
      reducing.map((i) => i.path),
      'squash',
    );
    for (const [i, img] of reducing.entries()) {
      const r = await preprocessImage(readFileSync(img.path), {
        ...DEFAULT_PREPROCESS_CONFIG,
        resampler: 'libvips',
      });
      const d = diff(r.tensor, refs[i]!);
      console.log(`libvips ${img.name}: max ${d.max.toFixed(4)} mean ${d.mean.toFixed(5)}`);
      expect(d.mean).toBeLessThan(0.01);
      expect(d.max).toBeLessThan(0.25);
    }
  });

  it('large photos (auto → libvips above 2 MP) stay within mean 0.02 / max 0.25 of torchvision', async () => {
    // 12 MP and 9 MP images made from real photos; the JS Pillow port would take 150+ ms here.
    const big = join(work, 'big.jpg');
    const big2 = join(work, 'big2.png');
    await sharp(readFileSync(ifctPhoto('N010')))
      .resize(4000, 3000, { fit: 'fill' })
      .jpeg({ quality: 90 })
      .toFile(big);
    await sharp(readFileSync(skimage('astronaut.png')))
      .resize(3000, 3000)
      .png()
      .toFile(big2);
    const refs = reference([big, big2], 'squash');
    for (const [i, path] of [big, big2].entries()) {
      const r = await preprocessImage(readFileSync(path));
      const d = diff(r.tensor, refs[i]!);
      console.log(
        `auto on ${r.image.width}×${r.image.height}: max ${d.max.toFixed(4)} mean ${d.mean.toFixed(5)}`,
      );
      expect(d.max).toBeGreaterThan(1e-5); // really took the libvips path
      expect(d.mean).toBeLessThan(0.02);
      expect(d.max).toBeLessThan(0.25);
    }
  });

  it('applies EXIF orientation before resizing', async () => {
    const oriented = images.at(-1)!;
    const r = await preprocessImage(readFileSync(oriented.path));
    expect(r.image.orientation).toBe(6);
    expect([r.image.width, r.image.height]).toEqual([173, 307]);
    expect([r.image.sourceWidth, r.image.sourceHeight]).toEqual([307, 173]);
  });
});
