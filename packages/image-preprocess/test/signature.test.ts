/**
 * The one image-signature check (`src/signature.ts`): every accepted format is named by its first
 * bytes, everything else is refused with a stable code before libvips sees it, and a checked image
 * goes through the decoders without being checked again (a look-alike is checked).
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import {
  ImagePreprocessError,
  checkImageSignature,
  decodeImage,
  imagePixels,
  imageSignatureOf,
  looksLikeMarkup,
  preprocessImage,
  type CheckedImage,
} from '../src/index.js';
import { ifctPhoto } from './fixtures.js';

const HINT = 'Use a JPEG, PNG, WebP, GIF, TIFF or AVIF photo.';
const MARKUP_MESSAGE =
  'SVG, XML and HTML files are not supported; send a photo (JPEG, PNG, WebP, GIF, TIFF, AVIF).';
const SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>';

function refusal(bytes: Uint8Array): ImagePreprocessError {
  try {
    checkImageSignature(bytes);
  } catch (err) {
    expect(err).toBeInstanceOf(ImagePreprocessError);
    return err as ImagePreprocessError;
  }
  throw new Error('accepted');
}

async function rejection(p: Promise<unknown>): Promise<ImagePreprocessError> {
  const err = await p.then(
    () => new Error('resolved'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ImagePreprocessError);
  return err as ImagePreprocessError;
}

/** An ISOBMFF `ftyp` box of `brand`, the start of an AVIF or HEIF file. */
function ftyp(brand: string): Buffer {
  const box = Buffer.alloc(24);
  box.writeUInt32BE(24, 0);
  box.write(`ftyp${brand}`, 4, 'latin1');
  return box;
}

describe('imageSignatureOf', () => {
  it('names every accepted format from files sharp encodes', async () => {
    const src = sharp(readFileSync(ifctPhoto('S005')));
    const encoded = {
      jpeg: await src.clone().jpeg().toBuffer(),
      png: await src.clone().png().toBuffer(),
      gif: await src.clone().gif().toBuffer(),
      webp: await src.clone().webp().toBuffer(),
      tiff: await src.clone().tiff().toBuffer(),
      avif: await src.clone().resize(64, 64).avif().toBuffer(),
    };
    for (const [format, bytes] of Object.entries(encoded)) {
      expect(imageSignatureOf(bytes), format).toBe(format);
      expect(checkImageSignature(bytes).signature, format).toBe(format);
    }
  });

  it('knows BigTIFF, big-endian TIFF, GIF87a and the HEIF brands', () => {
    expect(imageSignatureOf(Buffer.from('II+\0\x08\0\0\0', 'latin1'))).toBe('tiff');
    expect(imageSignatureOf(Buffer.from('MM\0+\0\x08\0\0', 'latin1'))).toBe('tiff');
    expect(imageSignatureOf(Buffer.from('MM\0*\0\0\0\x08', 'latin1'))).toBe('tiff');
    expect(imageSignatureOf(Buffer.from('GIF87a\x01\0\x01\0', 'latin1'))).toBe('gif');
    expect(imageSignatureOf(ftyp('avis'))).toBe('avif');
    for (const brand of ['heic', 'heix', 'mif1', 'msf1', 'hevc'])
      expect(imageSignatureOf(ftyp(brand))).toBe('heif');
    // Other ISOBMFF files (an MP4) and a RIFF that is not WebP (a WAV) are not images.
    expect(imageSignatureOf(ftyp('isom'))).toBeUndefined();
    expect(imageSignatureOf(Buffer.from('RIFF\0\0\0\0WAVEfmt ', 'latin1'))).toBeUndefined();
  });
});

describe('checkImageSignature', () => {
  it('refuses no bytes as EMPTY_IMAGE', () => {
    expect(refusal(new Uint8Array(0)).code).toBe('EMPTY_IMAGE');
  });

  it('refuses files without a signature as UNSUPPORTED_FORMAT, saying what to send', () => {
    for (const bytes of [
      Buffer.from('hello, this is not an image'),
      Buffer.from('%PDF-1.7\n1 0 obj << >> endobj\n'),
      Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46]), Buffer.alloc(60)]),
      gzipSync(SVG), // svgz: libvips would inflate and parse it
      Buffer.concat([Buffer.alloc(64), readFileSync(ifctPhoto('N010')).subarray(64)]),
    ]) {
      const err = refusal(bytes);
      expect(err.code).toBe('UNSUPPORTED_FORMAT');
      expect(err.message).toBe(`The file is not an image in a supported format. ${HINT}`);
    }
  });

  it('refuses markup in any encoding with its own message', () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    for (const bytes of [
      Buffer.from(SVG),
      Buffer.concat([bom, Buffer.from(`\n ${SVG}`)]),
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(SVG, 'utf16le')]),
      Buffer.from(SVG, 'utf16le').swap16(),
      Buffer.from(`logo ${SVG}`),
      Buffer.from('<!doctype html><html><body></body></html>'),
    ]) {
      expect(looksLikeMarkup(bytes)).toBe(true);
      const err = refusal(bytes);
      expect(err.code).toBe('UNSUPPORTED_FORMAT');
      expect(err.message).toBe(MARKUP_MESSAGE);
    }
    expect(looksLikeMarkup(Buffer.from('plain words'))).toBe(false);
  });
});

describe('the decoders and a checked image', () => {
  const jpeg = readFileSync(ifctPhoto('N010'));

  it('decode a checked image, and read its header for the pixel count', async () => {
    const checked = checkImageSignature(jpeg);
    expect(await imagePixels(checked)).toBe(307 * 173);
    expect((await decodeImage(checked)).format).toBe('jpeg');
    expect((await preprocessImage(checked)).shape).toEqual([3, 224, 224]);
  });

  it('refuse what the check refuses when given raw bytes', async () => {
    const err = await rejection(decodeImage(Buffer.from(SVG)));
    expect([err.code, err.message]).toEqual(['UNSUPPORTED_FORMAT', MARKUP_MESSAGE]);
    expect((await rejection(preprocessImage(new Uint8Array(0)))).code).toBe('EMPTY_IMAGE');
  });

  it('check again an object that only looks like a checked image', async () => {
    const forged = { bytes: Buffer.from(SVG), signature: 'jpeg' } as unknown as CheckedImage;
    expect((await rejection(decodeImage(forged))).code).toBe('UNSUPPORTED_FORMAT');
    expect((await rejection(preprocessImage(forged))).code).toBe('UNSUPPORTED_FORMAT');
  });

  it('refuse a truncated JPEG and GIF as CORRUPT_IMAGE, and name the format libvips cannot identify', async () => {
    const gif = await sharp(jpeg).gif().toBuffer();
    expect((await decodeImage(checkImageSignature(gif))).format).toBe('gif');
    for (const cut of [
      jpeg.subarray(0, 3),
      jpeg.subarray(0, jpeg.length / 2),
      gif.subarray(0, 10),
      gif.subarray(0, gif.length / 2),
    ]) {
      const err = await rejection(decodeImage(checkImageSignature(cut)));
      expect(err.code).toBe('CORRUPT_IMAGE');
      expect(err.message).toMatch(/could not be decoded/);
    }
    // A TIFF cut before its directory: libvips does not even identify it, yet it is a damaged TIFF.
    const tiff = await sharp(jpeg).tiff().toBuffer();
    const err = await rejection(preprocessImage(tiff.subarray(0, 100)));
    expect([err.code, err.message]).toEqual([
      'CORRUPT_IMAGE',
      'The TIFF image could not be decoded (it is truncated or damaged).',
    ]);
  });
});
