/**
 * Image preprocessing of the model contract: decode (honouring EXIF orientation), drop alpha,
 * squash-resize to 224×224 (bilinear), RGB, scale to 0..1, normalise with ImageNet mean/std, CHW.
 */
import sharp from 'sharp';
import { FoodModelError } from './errors.js';
import { IMAGENET_MEAN, IMAGENET_STD, INPUT_SIZE } from './contract.js';

/** Number of floats of one preprocessed image (3×224×224). */
export const IMAGE_FLOATS = 3 * INPUT_SIZE * INPUT_SIZE;

/** Decodes and squash-resizes an image to interleaved RGB bytes (`size`×`size`×3). */
export async function decodeRgb(image: Buffer | string, size = INPUT_SIZE): Promise<Uint8Array> {
  try {
    const { data, info } = await sharp(image)
      .rotate()
      .removeAlpha()
      .toColourspace('srgb')
      .resize(size, size, { fit: 'fill', kernel: 'linear', fastShrinkOnLoad: false })
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3 || info.width !== size || info.height !== size) {
      throw new Error(`unexpected decoded shape ${info.width}x${info.height}x${info.channels}`);
    }
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  } catch (cause) {
    const what = typeof image === 'string' ? image : `${image.byteLength}-byte buffer`;
    throw new FoodModelError('IMAGE_DECODE_FAILED', `cannot decode ${what}`, { cause });
  }
}

/** Converts interleaved RGB bytes (HWC) into the normalised CHW float layout of the contract. */
export function rgbToNormalizedChw(
  rgb: Uint8Array,
  out = new Float32Array(rgb.length),
  offset = 0,
): Float32Array {
  const pixels = rgb.length / 3;
  for (let c = 0; c < 3; c++) {
    const mean = IMAGENET_MEAN[c] ?? 0;
    const std = IMAGENET_STD[c] ?? 1;
    const base = offset + c * pixels;
    for (let i = 0; i < pixels; i++) out[base + i] = ((rgb[i * 3 + c] ?? 0) / 255 - mean) / std;
  }
  return out;
}

/** Decodes one image file or buffer into a normalised `[3,224,224]` Float32Array. */
export async function preprocessImage(image: Buffer | string): Promise<Float32Array> {
  return rgbToNormalizedChw(await decodeRgb(image));
}
