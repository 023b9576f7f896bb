import { performance } from 'node:perf_hooks';
import sharp from 'sharp';
import type { Metadata, OutputInfo } from 'sharp';
import type { PreprocessConfig } from './config.js';
import { AUTO_PILLOW_MAX_PIXELS, DEFAULT_PREPROCESS_CONFIG } from './config.js';
import { ImagePreprocessError } from './errors.js';
import { resizeRgbLikePillow } from './resample.js';
import type { CheckedImage, ImageInput, ImageSignature } from './signature.js';
import { SUPPORTED_FORMATS_HINT, checkedImage } from './signature.js';

/** Formats accepted as uploads. SVG/PDF are refused on purpose (vector renderers are an attack surface). */
export const SUPPORTED_FORMATS: ReadonlySet<string> = new Set([
  'jpeg',
  'png',
  'webp',
  'gif',
  'tiff',
  'avif',
  'heif',
]);

/** Input limits. Checked against the header before any pixel is decoded. */
export interface DecodeLimits {
  /** Maximum width×height. Default 40 megapixels (a 12 MP phone photo is ~12 M). */
  maxPixels?: number;
  /** Maximum width or height. Default 16384. */
  maxDimension?: number;
}

export const DEFAULT_MAX_PIXELS = 40_000_000;
export const DEFAULT_MAX_DIMENSION = 16_384;

/** A decoded image: 8-bit RGB, HWC, rows top to bottom, EXIF orientation applied. */
export interface DecodedImage {
  data: Buffer;
  width: number;
  height: number;
  /** Source format as sharp names it (`jpeg`, `png`, …). */
  format: string;
  /** Source size before orientation. */
  sourceWidth: number;
  sourceHeight: number;
  /** EXIF orientation tag of the source (1 when absent). */
  orientation: number;
  /** Whether the source had an alpha channel (dropped). */
  hadAlpha: boolean;
  /** Channels in the source (1 = grey, 2 = grey+alpha, 3 = RGB / palette, 4 = RGBA). */
  sourceChannels: number;
}

/** The model input plus what was learned on the way. */
export interface PreprocessResult {
  /** FP32 tensor without a batch dimension: `[3, H, W]` (CHW) or `[H, W, 3]` (HWC). */
  tensor: Float32Array;
  shape: [number, number, number];
  image: Omit<DecodedImage, 'data'>;
  timings: { decodeMs: number; preprocessMs: number };
}

function sharpMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Turns a libvips failure on a checked image into a typed error. A file that carries an image
 * signature but that libvips cannot even identify (a TIFF cut before its directory, say) is a
 * damaged image, not a file of an unsupported type.
 */
function classifySharpError(err: unknown, signature: ImageSignature): ImagePreprocessError {
  const msg = sharpMessage(err);
  if (/unsupported image format/i.test(msg)) {
    return new ImagePreprocessError(
      'CORRUPT_IMAGE',
      `The ${signature.toUpperCase()} image could not be decoded (it is truncated or damaged).`,
      { cause: err },
    );
  }
  if (/pixel limit/i.test(msg)) {
    return new ImagePreprocessError('TOO_MANY_PIXELS', 'The image has too many pixels.', { cause: err });
  }
  // libvips names the loader and the reason, e.g. "VipsJpeg: Premature end of input file".
  const reason =
    msg
      .split('\n')[0]
      ?.replace(/^Input (buffer|file) /i, '')
      .slice(0, 160) ?? 'unreadable';
  return new ImagePreprocessError('CORRUPT_IMAGE', `The image could not be decoded (${reason}).`, {
    cause: err,
  });
}

const sharpOptions = (limits: Required<DecodeLimits>) =>
  ({
    failOn: 'error',
    limitInputPixels: limits.maxPixels,
    // Match PIL, which ignores embedded ICC profiles; keeps parity with the training pipeline.
    ignoreIcc: true,
    pages: 1,
  }) as const;

/** What the header says, checked against the limits (no pixel decoded). */
interface ProbedImage {
  readonly format: string;
  readonly sourceWidth: number;
  readonly sourceHeight: number;
  /** Size after EXIF orientation. */
  readonly width: number;
  readonly height: number;
  readonly meta: Metadata;
}

async function probeImage(image: CheckedImage, lim: Required<DecodeLimits>): Promise<ProbedImage> {
  const opts = sharpOptions(lim);
  let meta: Metadata;
  try {
    // Header only: cheap, and tells us the size before we commit memory to pixels.
    meta = await sharp(image.bytes, { ...opts, limitInputPixels: false }).metadata();
  } catch (err) {
    throw classifySharpError(err, image.signature);
  }
  const format = meta.format;
  if (!SUPPORTED_FORMATS.has(format)) {
    throw new ImagePreprocessError(
      'UNSUPPORTED_FORMAT',
      `Images of type "${format}" are not supported. ${SUPPORTED_FORMATS_HINT}`,
    );
  }
  if (format === 'heif' && meta.compression === 'hevc') {
    // iPhone HEIC: the prebuilt libvips has no HEVC decoder (patents); AVIF (AV1) works.
    throw new ImagePreprocessError(
      'UNSUPPORTED_FORMAT',
      `HEIC (HEVC) photos are not supported; export the photo as JPEG or choose "Most Compatible" in the camera settings. ${SUPPORTED_FORMATS_HINT}`,
    );
  }
  const sourceWidth = meta.width;
  const sourceHeight = meta.pageHeight ?? meta.height;
  if (!(sourceWidth > 0 && sourceHeight > 0)) {
    throw new ImagePreprocessError('CORRUPT_IMAGE', 'The image has no pixels.');
  }
  if (
    sourceWidth * sourceHeight > lim.maxPixels ||
    sourceWidth > lim.maxDimension ||
    sourceHeight > lim.maxDimension
  ) {
    throw new ImagePreprocessError(
      'TOO_MANY_PIXELS',
      `The image is ${sourceWidth}×${sourceHeight} pixels; the limit is ${lim.maxPixels.toLocaleString('en')} pixels and ${lim.maxDimension} per side.`,
    );
  }
  const swap = (meta.orientation ?? 1) >= 5;
  return {
    format,
    sourceWidth,
    sourceHeight,
    width: swap ? sourceHeight : sourceWidth,
    height: swap ? sourceWidth : sourceHeight,
    meta,
  };
}

function limitsOf(limits: DecodeLimits): Required<DecodeLimits> {
  return {
    maxPixels: limits.maxPixels ?? DEFAULT_MAX_PIXELS,
    maxDimension: limits.maxDimension ?? DEFAULT_MAX_DIMENSION,
  };
}

/**
 * Decodes an upload into 8-bit RGB: EXIF orientation applied, alpha dropped (not composited, like
 * PIL's `convert('RGB')`), grey and palette expanded to three channels. Refuses empty input
 * (`EMPTY_IMAGE`) and unsupported formats (`UNSUPPORTED_FORMAT`; raw bytes go through
 * {@link checkImageSignature} first, a {@link CheckedImage} is not checked again), corrupt data
 * (`CORRUPT_IMAGE`) and decompression bombs (`TOO_MANY_PIXELS`, decided from the header before
 * decoding).
 */
export async function decodeImage(input: ImageInput, limits: DecodeLimits = {}): Promise<DecodedImage> {
  const lim = limitsOf(limits);
  const image = checkedImage(input);
  return decodeWith(image, await probeImage(image, lim), lim);
}

async function decodeWith(
  image: CheckedImage,
  probed: ProbedImage,
  lim: Required<DecodeLimits>,
): Promise<DecodedImage> {
  const opts = sharpOptions(lim);
  const { format, sourceWidth, sourceHeight, meta } = probed;
  let out: { data: Buffer; info: OutputInfo };
  try {
    out = await sharp(image.bytes, { ...opts, autoOrient: true })
      .removeAlpha()
      .toColourspace('srgb')
      .raw({ depth: 'uchar' })
      .toBuffer({ resolveWithObject: true });
  } catch (err) {
    throw classifySharpError(err, image.signature);
  }
  let { data } = out;
  const { width, height, channels } = out.info;
  if (channels === 1) {
    // Defensive: expand grey to RGB if libvips kept one band.
    const rgb = Buffer.allocUnsafe(width * height * 3);
    for (let i = 0, j = 0; i < data.length; i++, j += 3) rgb[j] = rgb[j + 1] = rgb[j + 2] = data[i] ?? 0;
    data = rgb;
  } else if (channels !== 3) {
    throw new ImagePreprocessError(
      'CORRUPT_IMAGE',
      `The image decoded to ${channels} channels; expected RGB.`,
    );
  }
  return {
    data,
    width,
    height,
    format,
    sourceWidth,
    sourceHeight,
    orientation: meta.orientation ?? 1,
    hadAlpha: meta.hasAlpha,
    sourceChannels: meta.channels,
  };
}

/**
 * The pixel count (width × height of the first page) a checked upload's header declares, read
 * without decoding a pixel; `undefined` when the header cannot be read (decoding will then fail with
 * the precise error). Lets a caller reserve decode memory before committing to it. Takes only a
 * {@link CheckedImage}: no header is read of bytes that failed {@link checkImageSignature}.
 */
export async function imagePixels(image: CheckedImage): Promise<number | undefined> {
  try {
    const meta = await sharp(image.bytes, { limitInputPixels: false, pages: 1 }).metadata();
    const w = meta.width;
    const h = meta.pageHeight ?? meta.height;
    return w > 0 && h > 0 ? w * h : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Resizes decoded RGB to the configured size (squash, or shorter side + centre crop with
 * torchvision's rounding) and returns 8-bit RGB HWC bytes of `config.height × config.width`.
 * The `pillow` resampler (bilinear) is bit-exact with Pillow/torchvision; `libvips` is much faster
 * on large photos and within about half an 8-bit level on average when reducing; `auto` picks by size.
 */
export async function resizeRgb(
  image: Pick<DecodedImage, 'data' | 'width' | 'height'>,
  config: PreprocessConfig,
): Promise<Uint8Array> {
  const [rw, rh] = resizeTarget(image.width, image.height, config);
  const resized = usesPillow(config, image.width * image.height)
    ? resizeRgbLikePillow(image.data, image.width, image.height, rw, rh)
    : await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
        .resize(rw, rh, { fit: 'fill', kernel: config.kernel, fastShrinkOnLoad: false })
        .raw({ depth: 'uchar' })
        .toBuffer();
  return centerCrop(resized, rw, rh, config);
}

/** Whether `config` resizes an image of `pixels` with the Pillow-exact resampler (else libvips). */
function usesPillow(config: PreprocessConfig, pixels: number): boolean {
  return (
    config.kernel === 'linear' &&
    (config.resampler === 'pillow' || (config.resampler === 'auto' && pixels <= AUTO_PILLOW_MAX_PIXELS))
  );
}

/** The size to resize to before any crop: the target (squash) or torchvision's shorter-side rule. */
function resizeTarget(width: number, height: number, config: PreprocessConfig): [number, number] {
  if (config.resize !== 'center-crop') return [config.width, config.height];
  // torchvision Resize(int): shorter side = n, longer = int(n * long / short).
  const s = config.resizeShorter;
  const [rw, rh] =
    width <= height ? [s, Math.floor((s * height) / width)] : [Math.floor((s * width) / height), s];
  if (rw < config.width || rh < config.height) {
    throw new ImagePreprocessError(
      'INVALID_CONFIG',
      `preprocess_resize_shorter ${s} is smaller than the crop`,
    );
  }
  return [rw, rh];
}

/** torchvision CenterCrop of an `rw`×`rh` RGB image to the configured size (a no-op when equal). */
function centerCrop(resized: Uint8Array, rw: number, rh: number, config: PreprocessConfig): Uint8Array {
  const { width: W, height: H } = config;
  if (rw === W && rh === H) return resized;
  // top = int(round((h - ch) / 2)).
  const top = Math.round((rh - H) / 2);
  const left = Math.round((rw - W) / 2);
  const out = new Uint8Array(W * H * 3);
  for (let y = 0; y < H; y++) {
    const from = ((top + y) * rw + left) * 3;
    out.set(resized.subarray(from, from + W * 3), y * W * 3);
  }
  return out;
}

/**
 * Large images on the libvips path in one streaming pipeline: decode (shrinking on load where the
 * format allows), orient, drop alpha, sRGB, resize. The full-resolution RGB image never exists in
 * memory (a 40 MP photo would be 120 MB, several times over in intermediates).
 */
async function decodeAndResize(
  image: CheckedImage,
  probed: ProbedImage,
  config: PreprocessConfig,
  lim: Required<DecodeLimits>,
): Promise<Uint8Array> {
  const [rw, rh] = resizeTarget(probed.width, probed.height, config);
  let out: { data: Buffer; info: OutputInfo };
  try {
    out = await sharp(image.bytes, { ...sharpOptions(lim), autoOrient: true })
      .removeAlpha()
      .toColourspace('srgb')
      .resize(rw, rh, { fit: 'fill', kernel: config.kernel, fastShrinkOnLoad: false })
      .raw({ depth: 'uchar' })
      .toBuffer({ resolveWithObject: true });
  } catch (err) {
    throw classifySharpError(err, image.signature);
  }
  if (out.info.channels !== 3 || out.info.width !== rw || out.info.height !== rh) {
    throw new ImagePreprocessError(
      'CORRUPT_IMAGE',
      `The image decoded to ${out.info.width}×${out.info.height}×${out.info.channels}; expected ${rw}×${rh} RGB.`,
    );
  }
  return centerCrop(out.data, rw, rh, config);
}

/**
 * One pass over 8-bit RGB HWC bytes: `(px / 255 - mean[c]) / std[c]` written as FP32 in the
 * configured layout and channel order. Pass `out` to reuse a buffer (e.g. a batch slot).
 */
export function normalizeToTensor(
  rgb: Uint8Array,
  pixels: number,
  config: Pick<PreprocessConfig, 'mean' | 'std' | 'layout' | 'color'>,
  out: Float32Array = new Float32Array(pixels * 3),
): Float32Array {
  if (rgb.length < pixels * 3) throw new RangeError('rgb buffer is smaller than pixels*3');
  if (out.length < pixels * 3) throw new RangeError('out buffer is smaller than pixels*3');
  // Output channel k reads source channel src[k].
  const src = config.color === 'RGB' ? [0, 1, 2] : [2, 1, 0];
  const s0 = src[0] ?? 0;
  const s1 = src[1] ?? 1;
  const s2 = src[2] ?? 2;
  const m = config.mean;
  const sd = config.std;
  // x/255/std - mean/std, folded into one multiply-add per value.
  const a0 = 1 / (255 * sd[s0]!);
  const a1 = 1 / (255 * sd[s1]!);
  const a2 = 1 / (255 * sd[s2]!);
  const b0 = -m[s0]! / sd[s0]!;
  const b1 = -m[s1]! / sd[s1]!;
  const b2 = -m[s2]! / sd[s2]!;
  if (config.layout === 'CHW') {
    const p1 = pixels;
    const p2 = pixels * 2;
    for (let i = 0, j = 0; i < pixels; i++, j += 3) {
      out[i] = rgb[j + s0]! * a0 + b0;
      out[p1 + i] = rgb[j + s1]! * a1 + b1;
      out[p2 + i] = rgb[j + s2]! * a2 + b2;
    }
  } else {
    for (let j = 0; j < pixels * 3; j += 3) {
      out[j] = rgb[j + s0]! * a0 + b0;
      out[j + 1] = rgb[j + s1]! * a1 + b1;
      out[j + 2] = rgb[j + s2]! * a2 + b2;
    }
  }
  return out;
}

/**
 * Upload bytes → model input tensor. Decode (orientation, RGB), resize, normalise, lay out.
 * Timings split decode (container + pixels) from the rest. Refuses what {@link decodeImage} refuses;
 * raw bytes are checked with {@link checkImageSignature} first, a {@link CheckedImage} is not.
 */
export async function preprocessImage(
  input: ImageInput,
  config: PreprocessConfig = DEFAULT_PREPROCESS_CONFIG,
  limits: DecodeLimits = {},
  out?: Float32Array,
): Promise<PreprocessResult> {
  const t0 = performance.now();
  const lim = limitsOf(limits);
  const checked = checkedImage(input);
  const probed = await probeImage(checked, lim);
  let rgb: Uint8Array;
  let image: Omit<DecodedImage, 'data'>;
  let t1: number;
  if (usesPillow(config, probed.width * probed.height)) {
    const { data, ...decoded } = await decodeWith(checked, probed, lim);
    image = decoded;
    t1 = performance.now();
    rgb = await resizeRgb({ data, width: decoded.width, height: decoded.height }, config);
  } else {
    // Decode and resize are one pipeline here: decodeMs covers both.
    rgb = await decodeAndResize(checked, probed, config, lim);
    t1 = performance.now();
    image = {
      width: probed.width,
      height: probed.height,
      format: probed.format,
      sourceWidth: probed.sourceWidth,
      sourceHeight: probed.sourceHeight,
      orientation: probed.meta.orientation ?? 1,
      hadAlpha: probed.meta.hasAlpha,
      sourceChannels: probed.meta.channels,
    };
  }
  const tensor = normalizeToTensor(rgb, config.width * config.height, config, out);
  const t2 = performance.now();
  return {
    tensor,
    shape: config.layout === 'CHW' ? [3, config.height, config.width] : [config.height, config.width, 3],
    image,
    timings: { decodeMs: t1 - t0, preprocessMs: t2 - t1 },
  };
}
