/**
 * The bad-upload corpus, generated here: every accepted format truncated and corrupted, bombs by
 * dimensions and by frame count, polyglots, wrong types, missing / duplicated / oversized fields.
 * Each case has its expected status and stable code; the gateway process's resident memory is
 * sampled throughout and must stay under a stated bound.
 */
import sharp from 'sharp';
import type { RunningServer } from '@tritonserver-ts/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POST } from '../src/app/api/predict/route';
import type { ApiError } from '../src/lib/types';
import { json, photo, pngClaiming, startEmbedded, uploadRequest, useEnv } from './helpers';

/**
 * Peak RSS growth allowed over the whole corpus, above the baseline after warm-up. Measured here:
 * mostly 250-305 MiB, once 403 MiB in a full CI run (the four 36 MP decodes of a burst meeting at
 * their peaks); before large photos were decoded in one streaming pipeline and decodes were bounded
 * by pixels, the same corpus took 500-660 MiB, which this bound still fails.
 */
const RSS_BOUND_MIB = 450;
const MAX_UPLOAD = 10 * 1024 * 1024;

interface Case {
  readonly name: string;
  readonly request: () => Request;
  readonly status: number;
  readonly code?: string;
}

/** A GIF whose logical screen and single frame claim 65535×65535 pixels. */
function gifClaimingHuge(): Buffer {
  const header = Buffer.from('GIF89a', 'ascii');
  const screen = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00]);
  const image = Buffer.from([0x2c, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00]);
  return Buffer.concat([header, screen, image, Buffer.from([0x3b])]);
}

/** A JPEG whose SOF0 claims 60000×60000 (the rest of a real small JPEG kept). */
function jpegClaiming(real: Buffer): Buffer {
  const out = Buffer.from(real);
  for (let i = 2; i < out.length - 9; i++) {
    if (out[i] === 0xff && out[i + 1] !== undefined && out[i + 1]! >= 0xc0 && out[i + 1]! <= 0xc2) {
      out.writeUInt16BE(60_000, i + 5);
      out.writeUInt16BE(60_000, i + 7);
      return out;
    }
  }
  throw new Error('no SOF marker');
}

function withFile(bytes: Uint8Array, name: string, type: string): () => Request {
  return () => uploadRequest(bytes, { name, type });
}

function form(build: (f: FormData) => void): () => Request {
  return () => {
    const f = new FormData();
    build(f);
    return new Request('http://localhost/api/predict', { method: 'POST', body: f });
  };
}

/** A streamed body that never declares its length and goes past the upload limit. */
function oversizedStream(): Request {
  const boundary = 'x-bad-upload-boundary';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
  );
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent === 0) controller.enqueue(head);
      if (sent > MAX_UPLOAD * 3) {
        controller.close();
        return;
      }
      sent += 1 << 20;
      controller.enqueue(new Uint8Array(1 << 20).fill(0xff));
    },
  });
  return new Request('http://localhost/api/predict', {
    method: 'POST',
    body: stream,
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    duplex: 'half',
  } as RequestInit);
}

let server: RunningServer;
let cases: Case[] = [];

beforeAll(async () => {
  server = await startEmbedded();
  useEnv({
    TRITON_SERVER_URL: server.url,
    FOOD11_MODEL_NAME: 'food_classifier_onnx',
    MAX_UPLOAD_BYTES: String(MAX_UPLOAD),
    FEEDBACK_STORAGE: 'none',
    GATEWAY_LOG: 'false',
  });
  const jpeg = photo('P005');
  // A large noisy photo-sized image per format: truncation and corruption hit real compressed data.
  const noise = await sharp({
    create: {
      width: 1600,
      height: 1200,
      channels: 3,
      background: '#808080',
      noise: { type: 'gaussian', mean: 128, sigma: 40 },
    },
  })
    .png()
    .toBuffer();
  const encoded: [string, string, Buffer][] = [
    ['jpeg', 'image/jpeg', await sharp(noise).jpeg({ quality: 90 }).toBuffer()],
    ['png', 'image/png', await sharp(noise).png().toBuffer()],
    ['webp', 'image/webp', await sharp(noise).webp().toBuffer()],
    ['gif', 'image/gif', await sharp(noise).resize(400, 300).gif().toBuffer()],
    ['tiff', 'image/tiff', await sharp(noise).tiff({ compression: 'lzw' }).toBuffer()],
    ['avif', 'image/avif', await sharp(noise).resize(400, 300).avif().toBuffer()],
  ];
  // Near the pixel limit (36 of 40 MP): a full decode is 108 MB of RGB; several at once are what
  // memory has to be bounded against.
  const large = await sharp({
    create: {
      width: 6000,
      height: 6000,
      channels: 3,
      background: '#808080',
      noise: { type: 'gaussian', mean: 128, sigma: 30 },
    },
  })
    .jpeg({ quality: 70 })
    .toBuffer();
  // A frame with something in it (one flat colour is refused, 422 IMAGE_UNIFORM).
  const many = await sharp(photo('P005')).resize(64, 64).png().toBuffer();
  // 300 frames: a frame-count bomb is decoded one page at a time here (pages: 1).
  const animated = await sharp([...Array<Buffer>(300).fill(many)], { join: { animated: true } })
    .gif()
    .toBuffer();

  const built: Case[] = [];
  for (const [format, type, bytes] of encoded) {
    for (const fraction of [0.02, 0.3, 0.7, 0.97]) {
      built.push({
        name: `${format} truncated at ${fraction * 100}%`,
        request: withFile(bytes.subarray(0, Math.floor(bytes.length * fraction)), `t.${format}`, type),
        status: 400,
        code: 'CORRUPT_IMAGE',
      });
    }
    built.push({
      name: `${format} with its first 64 bytes zeroed`,
      request: withFile(Buffer.concat([Buffer.alloc(64), bytes.subarray(64)]), `z.${format}`, type),
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
    });
  }
  built.push(
    { name: 'a valid photo (control)', request: withFile(jpeg, 'ok.jpg', 'image/jpeg'), status: 200 },
    ...[1, 2, 3, 4].map((n) => ({
      name: `a valid 36 MP photo (${n} of 4 in the same burst)`,
      request: withFile(large, `large${n}.jpg`, 'image/jpeg'),
      status: 200,
    })),
    {
      name: 'a 36 MP photo truncated at 90%',
      request: withFile(large.subarray(0, Math.floor(large.length * 0.9)), 'large-cut.jpg', 'image/jpeg'),
      status: 400,
      code: 'CORRUPT_IMAGE',
    },
    {
      name: 'PNG bomb: 100000×100000 in the header',
      request: withFile(pngClaiming(100_000, 100_000), 'bomb.png', 'image/png'),
      status: 400,
      code: 'TOO_MANY_PIXELS',
    },
    {
      name: 'PNG bomb: 16384×16384 (under the side limit, over the pixel limit)',
      request: withFile(pngClaiming(16_384, 16_384), 'bomb2.png', 'image/png'),
      status: 400,
      code: 'TOO_MANY_PIXELS',
    },
    {
      name: 'GIF bomb: 65535×65535 screen',
      request: withFile(gifClaimingHuge(), 'bomb.gif', 'image/gif'),
      status: 400,
      code: 'TOO_MANY_PIXELS',
    },
    {
      name: 'JPEG bomb: SOF claims 60000×60000',
      request: withFile(jpegClaiming(jpeg), 'bomb.jpg', 'image/jpeg'),
      status: 400,
      code: 'TOO_MANY_PIXELS',
    },
    {
      name: 'GIF with 300 frames (frame-count bomb)',
      request: withFile(animated, 'anim.gif', 'image/gif'),
      status: 200,
    },
    {
      name: 'polyglot: JPEG followed by an HTML page',
      request: withFile(
        Buffer.concat([jpeg, Buffer.from('<html><script>alert(1)</script></html>')]),
        'p.jpg',
        'image/jpeg',
      ),
      status: 200,
    },
    {
      name: 'polyglot: HTML page with a JPEG inside',
      request: withFile(Buffer.concat([Buffer.from('<html><body>'), jpeg]), 'p.html', 'text/html'),
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
    },
    {
      name: 'wrong type: a PDF',
      request: withFile(
        Buffer.from('%PDF-1.7\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n'),
        'x.pdf',
        'application/pdf',
      ),
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
    },
    {
      name: 'wrong type: an ELF binary named .jpg',
      request: withFile(
        Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]), Buffer.alloc(500)]),
        'x.jpg',
        'image/jpeg',
      ),
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
    },
    {
      name: 'wrong type: plain text',
      request: withFile(Buffer.from('just some text\n'.repeat(100)), 'x.txt', 'text/plain'),
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
    },
    {
      name: 'empty file',
      request: withFile(new Uint8Array(0), 'empty.jpg', 'image/jpeg'),
      status: 400,
      code: 'EMPTY_FILE',
    },
    {
      name: 'missing file field',
      request: form((f) => f.set('photo', new Blob([new Uint8Array(jpeg)]), 'x.jpg')),
      status: 400,
    },
    {
      name: 'file field as text, not a file',
      request: form((f) => f.set('file', 'not a file')),
      status: 400,
    },
    {
      name: 'duplicated file field',
      request: form((f) => {
        f.append('file', new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }), 'a.jpg');
        f.append('file', new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }), 'b.jpg');
      }),
      status: 400,
    },
    {
      name: 'not multipart at all',
      request: () =>
        new Request('http://localhost/api/predict', { method: 'POST', body: new Uint8Array(jpeg) }),
      status: 400,
    },
    {
      name: 'declared oversized upload',
      request: withFile(new Uint8Array(MAX_UPLOAD + 1024), 'huge.jpg', 'image/jpeg'),
      status: 413,
      code: 'FILE_TOO_LARGE',
    },
    {
      name: 'oversized stream without a length',
      request: oversizedStream,
      status: 413,
      code: 'FILE_TOO_LARGE',
    },
  );
  // The large photos first, so that all four are decoded in the same burst.
  cases = [
    ...built.filter((c) => c.name.includes('36 MP')),
    ...built.filter((c) => !c.name.includes('36 MP')),
  ];
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('bad-upload corpus', () => {
  it('answers every case with its status and stable code, within a bounded memory', async () => {
    // Warm up (sharp, the model info, the client) before the baseline.
    expect((await POST(uploadRequest(photo('P005')))).status).toBe(200);
    global.gc?.();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 10);
    const mismatches: string[] = [];
    try {
      // Three rounds, eight at a time, as a burst of hostile clients would send them.
      const work = [...cases, ...cases, ...cases];
      for (let i = 0; i < work.length; i += 8) {
        await Promise.all(
          work.slice(i, i + 8).map(async (c) => {
            const res = await POST(c.request());
            let code: string | undefined;
            if (res.status !== 200) {
              const body = await json<ApiError>(res);
              code = body.error.code;
              expect(body.error.message.length, c.name).toBeGreaterThan(5);
            } else {
              await res.arrayBuffer();
            }
            if (res.status !== c.status || (c.code !== undefined && code !== c.code)) {
              mismatches.push(
                `${c.name}: expected ${c.status} ${c.code ?? ''}, got ${res.status} ${code ?? ''}`,
              );
            }
          }),
        );
        peak = Math.max(peak, process.memoryUsage().rss);
      }
    } finally {
      clearInterval(sampler);
    }
    expect(mismatches).toEqual([]);
    const grownMiB = (peak - baseline) / 2 ** 20;
    console.log(
      `bad-upload corpus: ${cases.length} cases × 3, peak RSS +${grownMiB.toFixed(0)} MiB over the baseline`,
    );
    expect(grownMiB).toBeLessThan(RSS_BOUND_MIB);
  }, 180_000);
});
