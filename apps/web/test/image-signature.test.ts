/**
 * The gateway's one image-signature check (`checkImageSignature` of `@gourmetgram/image-preprocess`,
 * in `src/server/classify.ts`), on the tensor path and on a path that sends the file's own bytes
 * (the ensemble): what an upload is comes from its first bytes, never from its name or its claimed
 * type, and every refusal keeps its status, code and message.
 */
import sharp from 'sharp';
import type { RunningServer } from '@tritonserver-ts/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POST } from '../src/app/api/predict/route';
import type { ApiError, Prediction } from '../src/lib/types';
import { json, photo, startEmbedded, uploadRequest, useEnv } from './helpers';

const NOT_AN_IMAGE =
  'The file is not an image in a supported format. Use a JPEG, PNG, WebP, GIF, TIFF or AVIF photo.';
const MARKUP = 'SVG, XML and HTML files are not supported; send a photo (JPEG, PNG, WebP, GIF, TIFF, AVIF).';

let server: RunningServer;
let png: Buffer;
let gif: Buffer;
let size: { width: number; height: number };
const jpeg = photo('P005');

beforeAll(async () => {
  server = await startEmbedded();
  const { width, height } = await sharp(jpeg).metadata();
  size = { width, height };
  png = await sharp(jpeg).png().toBuffer();
  gif = await sharp(jpeg).gif().toBuffer();
});
afterAll(() => server?.close());

async function upload(bytes: Uint8Array, name: string, type: string): Promise<Response> {
  return POST(uploadRequest(bytes, { name, type }));
}

async function expectRefused(res: Response, status: number, code: string): Promise<string> {
  const body = await json<ApiError>(res);
  expect({ status: res.status, code: body.error.code }).toEqual({ status, code });
  return body.error.message;
}

describe.each(['food_classifier_onnx', 'food_classifier_ensemble'])('uploads to %s', (model) => {
  beforeAll(() => {
    useEnv({
      TRITON_PROTOCOL: 'http',
      TRITON_SERVER_URL: server.url,
      TRITON_GRPC_URL: undefined,
      FOOD11_MODEL_NAME: model,
      FOOD11_MODEL_VERSION: '',
      FEEDBACK_STORAGE: 'none',
      GATEWAY_LOG: 'false',
    });
  });

  it('classifies a PNG named .jpg and sent as image/jpeg, as the PNG it is', async () => {
    const res = await upload(png, 'photo.jpg', 'image/jpeg');
    expect(res.status).toBe(200);
    expect((await json<Prediction>(res)).image).toMatchObject({
      format: 'png',
      width: size.width,
      height: size.height,
    });
  });

  it('classifies a GIF named .png and sent as image/png', async () => {
    const res = await upload(gif, 'photo.png', 'image/png');
    expect(res.status).toBe(200);
    expect((await json<Prediction>(res)).image.format).toBe('gif');
  });

  it('refuses text named .jpg and sent as image/jpeg: 415, however it is named', async () => {
    const text = Buffer.from('just some text\n'.repeat(20));
    expect(
      await expectRefused(await upload(text, 'photo.jpg', 'image/jpeg'), 415, 'UNSUPPORTED_MEDIA_TYPE'),
    ).toBe(NOT_AN_IMAGE);
  });

  it('refuses SVG named .png and sent as image/png with the markup message', async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"/>');
    expect(
      await expectRefused(await upload(svg, 'photo.png', 'image/png'), 415, 'UNSUPPORTED_MEDIA_TYPE'),
    ).toBe(MARKUP);
  });

  it('refuses a JPEG cut after its signature, and one cut in half, as 400 CORRUPT_IMAGE', async () => {
    for (const cut of [jpeg.subarray(0, 3), jpeg.subarray(0, jpeg.length / 2)]) {
      const message = await expectRefused(await upload(cut, 'photo.jpg', 'image/jpeg'), 400, 'CORRUPT_IMAGE');
      expect(message).toMatch(
        /^The image could not be decoded \(.*VipsJpeg: premature end of JPEG image\)\.$/,
      );
    }
  });

  it('refuses a truncated GIF as 400 CORRUPT_IMAGE', async () => {
    const message = await expectRefused(
      await upload(gif.subarray(0, gif.length / 2), 'photo.gif', 'image/gif'),
      400,
      'CORRUPT_IMAGE',
    );
    expect(message).toMatch(/could not be decoded/);
  });

  it('refuses a TIFF cut before its directory as a damaged TIFF, not as an unsupported type', async () => {
    const tiff = await sharp(jpeg).tiff().toBuffer();
    expect(
      await expectRefused(
        await upload(tiff.subarray(0, 100), 'photo.tiff', 'image/tiff'),
        400,
        'CORRUPT_IMAGE',
      ),
    ).toBe('The TIFF image could not be decoded (it is truncated or damaged).');
  });
});
