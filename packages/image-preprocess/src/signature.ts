/**
 * The one image-signature check: which raster format an upload's first bytes name, and the refusal
 * of everything else before a decoder sees a byte. libvips picks its loader by sniffing the content,
 * and its SVG loader (librsvg, which parses DOCTYPEs and entities) accepts text with `<svg` anywhere
 * near the start, gzip-compressed SVG and more, so no "does it look like markup" test can be
 * complete: only files that start with an accepted signature pass.
 *
 * @packageDocumentation
 */
import { ImagePreprocessError } from './errors.js';

/** The raster formats an upload may be, as named by the signature its file starts with. */
export type ImageSignature = 'jpeg' | 'png' | 'gif' | 'webp' | 'tiff' | 'avif' | 'heif';

/** What to send instead, ending every "unsupported format" message. */
export const SUPPORTED_FORMATS_HINT = 'Use a JPEG, PNG, WebP, GIF, TIFF or AVIF photo.';

/** ISOBMFF brands of AV1 images (AVIF). */
const AVIF_BRANDS: ReadonlySet<string> = new Set(['avif', 'avis']);

/** The other ISOBMFF brands libvips' HEIF loader takes (HEVC is refused later as unsupported). */
const HEIF_BRANDS: ReadonlySet<string> = new Set([
  'heic',
  'heix',
  'hevc',
  'heim',
  'heis',
  'hevm',
  'hevs',
  'mif1',
  'msf1',
]);

/** Classic TIFF (`*`) and BigTIFF (`+`), little- and big-endian. */
const TIFF_MAGICS: readonly string[] = ['II*\0', 'MM\0*', 'II+\0', 'MM\0+'];

function latin1(bytes: Uint8Array, from: number, to: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1', from, to);
}

/**
 * The accepted format whose signature `bytes` start with, if any. A lookup only: it refuses nothing
 * (see {@link checkImageSignature}).
 */
export function imageSignatureOf(bytes: Uint8Array): ImageSignature | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  const head = latin1(bytes, 0, 12);
  if (head.startsWith('\x89PNG\r\n\x1a\n')) return 'png';
  if (head.startsWith('GIF87a') || head.startsWith('GIF89a')) return 'gif';
  if (head.startsWith('RIFF') && head.slice(8, 12) === 'WEBP') return 'webp';
  if (TIFF_MAGICS.includes(head.slice(0, 4))) return 'tiff';
  if (head.slice(4, 8) === 'ftyp') {
    const brand = head.slice(8, 12);
    if (AVIF_BRANDS.has(brand)) return 'avif';
    if (HEIF_BRANDS.has(brand)) return 'heif';
  }
  return undefined;
}

/**
 * True when `bytes` read as text markup (SVG, XML, HTML) in any of the encodings an XML parser
 * accepts: byte-order marks and NUL bytes (UTF-16/32) are dropped, then the text either starts with
 * `<` after white space, or names an SVG, XML, DOCTYPE or HTML tag within its first kilobyte. Only
 * chooses the message: anything without an image signature is refused either way.
 */
export function looksLikeMarkup(bytes: Uint8Array): boolean {
  const text = latin1(bytes, 0, 4096)
    .replace(/\0|\xef\xbb\xbf|\xfe\xff|\xff\xfe/g, '')
    .slice(0, 1024)
    .toLowerCase();
  return /^[\s\xa0]*</.test(text) || /<(svg|\?xml|!doctype|!entity|html)[\s>/]/.test(text);
}

declare const checkedBrand: unique symbol;

/**
 * Upload bytes that passed {@link checkImageSignature}: made only by it, so the decoding functions
 * that receive one do not look at the signature again.
 */
export interface CheckedImage {
  readonly bytes: Uint8Array;
  /** The format the first bytes name; the decoder may still find the file truncated or damaged. */
  readonly signature: ImageSignature;
  readonly [checkedBrand]: true;
}

/** What the decoding functions take: raw bytes (checked on entry) or an already checked image. */
export type ImageInput = Uint8Array | CheckedImage;

/** Every {@link CheckedImage} this module made (a look-alike object is checked again). */
const issued = new WeakSet<CheckedImage>();

/**
 * Checks an upload's first bytes before any decoder runs.
 * @returns the bytes with the format their signature names
 * @throws ImagePreprocessError `EMPTY_IMAGE` for no bytes, `UNSUPPORTED_FORMAT` for anything that
 *   does not start with the signature of an accepted format (markup gets its own message)
 */
export function checkImageSignature(bytes: Uint8Array): CheckedImage {
  if (bytes.byteLength === 0) throw new ImagePreprocessError('EMPTY_IMAGE', 'The file is empty.');
  const signature = imageSignatureOf(bytes);
  if (signature === undefined) {
    throw new ImagePreprocessError(
      'UNSUPPORTED_FORMAT',
      looksLikeMarkup(bytes)
        ? 'SVG, XML and HTML files are not supported; send a photo (JPEG, PNG, WebP, GIF, TIFF, AVIF).'
        : `The file is not an image in a supported format. ${SUPPORTED_FORMATS_HINT}`,
    );
  }
  const checked = Object.freeze({ bytes, signature }) as CheckedImage;
  issued.add(checked);
  return checked;
}

/** `input` as a checked image: checked now unless {@link checkImageSignature} already did. */
export function checkedImage(input: ImageInput): CheckedImage {
  if (input instanceof Uint8Array) return checkImageSignature(input);
  return issued.has(input) ? input : checkImageSignature(input.bytes);
}
