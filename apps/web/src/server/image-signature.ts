import 'server-only';
import { GatewayError } from './errors';

/**
 * The raster formats an upload may be, known by the signature their files start with. Anything else
 * is refused before a decoder sees a byte: libvips picks its loader by sniffing the content, and its
 * SVG loader (librsvg, which parses DOCTYPEs and entities) accepts text with `<svg` anywhere near the
 * start, gzip-compressed SVG and more, so no "does it look like markup" test can be complete.
 */
export type ImageSignature = 'jpeg' | 'png' | 'gif' | 'webp' | 'tiff' | 'heif';

/** ISOBMFF brands libvips' HEIF loader takes (AVIF and HEIC; HEVC is refused later as unsupported). */
const HEIF_BRANDS: ReadonlySet<string> = new Set([
  'avif',
  'avis',
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

function ascii(bytes: Uint8Array, from: number, to: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1', from, to);
}

/** The accepted format whose signature `bytes` start with, if any. */
export function imageSignatureOf(bytes: Uint8Array): ImageSignature | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  const head = ascii(bytes, 0, 12);
  if (head.startsWith('\x89PNG\r\n\x1a\n')) return 'png';
  if (head.startsWith('GIF87a') || head.startsWith('GIF89a')) return 'gif';
  if (head.startsWith('RIFF') && head.slice(8, 12) === 'WEBP') return 'webp';
  // Classic TIFF (`*`) and BigTIFF (`+`), little- and big-endian.
  if (['II*\0', 'MM\0*', 'II+\0', 'MM\0+'].includes(head.slice(0, 4))) return 'tiff';
  if (head.slice(4, 8) === 'ftyp' && HEIF_BRANDS.has(head.slice(8, 12))) return 'heif';
  return undefined;
}

/**
 * True when `bytes` read as text markup (SVG, XML, HTML) in any of the encodings an XML parser
 * accepts: byte-order marks and NUL bytes (UTF-16/32) are dropped, then the text either starts with
 * `<` after white space, or names an SVG, XML, DOCTYPE or HTML tag within its first kilobyte. Only
 * chooses the message: anything without an image signature is refused either way.
 */
export function looksLikeMarkup(bytes: Uint8Array): boolean {
  const text = ascii(bytes, 0, 4096)
    .replace(/\0|\xef\xbb\xbf|\xfe\xff|\xff\xfe/g, '')
    .slice(0, 1024)
    .toLowerCase();
  return /^[\s\xa0]*</.test(text) || /<(svg|\?xml|!doctype|!entity|html)[\s>/]/.test(text);
}

/**
 * Checks an upload's first bytes before any decoder runs.
 * @returns the format its signature names
 * @throws GatewayError `EMPTY_FILE` (400) for no bytes, `UNSUPPORTED_MEDIA_TYPE` (415) for anything
 *   that does not start with the signature of an accepted format (markup gets its own message)
 */
export function checkImageSignature(bytes: Uint8Array): ImageSignature {
  if (bytes.byteLength === 0) throw new GatewayError('EMPTY_FILE', 'The uploaded file is empty.');
  const signature = imageSignatureOf(bytes);
  if (signature !== undefined) return signature;
  if (looksLikeMarkup(bytes)) {
    throw new GatewayError(
      'UNSUPPORTED_MEDIA_TYPE',
      'SVG, XML and HTML files are not supported; send a photo (JPEG, PNG, WebP, GIF, TIFF, AVIF).',
    );
  }
  throw new GatewayError(
    'UNSUPPORTED_MEDIA_TYPE',
    'The file is not an image in a supported format. Use a JPEG, PNG, WebP, GIF, TIFF or AVIF photo.',
  );
}
