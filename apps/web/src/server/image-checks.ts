/**
 * Images the gateway refuses to classify although they decode: too small to show a dish, or a single
 * flat colour. The model would still answer (a 1×1 pixel gets a confident-looking class), so these
 * are answered `422` with a message before any inference, the same on every inference path.
 *
 * @packageDocumentation
 */
import 'server-only';
import type { PreprocessConfig } from '@gourmetgram/image-preprocess';
import { GatewayError } from './errors';

/**
 * Smallest width and height (after EXIF orientation) the gateway classifies. The model sees 224×224;
 * below 32 px a photo is enlarged more than 7× and holds too little to tell dishes apart (a favicon,
 * a tracking pixel, a thumbnail of a thumbnail).
 */
export const MIN_IMAGE_SIDE = 32;

/**
 * Largest spread, in 8-bit levels, of every colour channel for an image to count as one flat colour
 * (what JPEG rounding leaves of a uniform fill).
 */
export const FLAT_MAX_LEVELS = 2;

/** `IMAGE_TOO_SMALL` (422) when either side is under {@link MIN_IMAGE_SIDE}. */
export function checkImageSize(width: number, height: number): void {
  if (width < MIN_IMAGE_SIDE || height < MIN_IMAGE_SIDE) {
    throw new GatewayError(
      'IMAGE_TOO_SMALL',
      `The image is ${width}×${height} pixels; send a photo at least ${MIN_IMAGE_SIDE}×${MIN_IMAGE_SIDE} so there is something to recognise.`,
    );
  }
}

function flatError(): GatewayError {
  return new GatewayError(
    'IMAGE_UNIFORM',
    'The image is a single flat colour: there is nothing in it to classify. Send a photo of the dish.',
  );
}

/** `IMAGE_UNIFORM` (422) when every channel of interleaved 8-bit RGB pixels spans ≤ {@link FLAT_MAX_LEVELS}. */
export function checkNotFlatRgb(data: Uint8Array): void {
  const min = [255, 255, 255];
  const max = [0, 0, 0];
  for (let i = 0; i + 2 < data.length; i += 3) {
    for (let c = 0; c < 3; c++) {
      const v = data[i + c]!;
      if (v < min[c]!) min[c] = v;
      if (v > max[c]!) max[c] = v;
    }
    // Most photos are told apart within the first row or two.
    if ((i & 0xfff) === 0 && max.some((m, c) => m - min[c]! > FLAT_MAX_LEVELS)) return;
  }
  if (max.every((m, c) => m - min[c]! <= FLAT_MAX_LEVELS)) throw flatError();
}

/**
 * The same check on the model input the gateway built (`[3,H,W]` or `[H,W,3]`, normalised): each
 * channel's spread is brought back to 8-bit levels with its standard deviation. The input is the
 * photo resized to the model's size, which keeps a flat photo flat.
 */
export function checkNotFlatTensor(tensor: Float32Array, config: PreprocessConfig): void {
  const planes = config.layout === 'CHW';
  const n = tensor.length / 3;
  for (let c = 0; c < 3; c++) {
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = 0; i < n; i++) {
      const v = tensor[planes ? c * n + i : i * 3 + c]!;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    // mean/std are in RGB order; a BGR tensor holds blue first.
    const std = config.std[config.color === 'BGR' ? 2 - c : c] ?? 1;
    if ((hi - lo) * std * 255 > FLAT_MAX_LEVELS + 1e-3) return;
  }
  throw flatError();
}
