/**
 * Attacks on the gateway (issue 14): unbounded feedback bodies, prediction ids that would name other
 * storage keys, SVG/XML reaching the image decoder, and huge declared uploads that the server would
 * read to the end. Route handlers in process for the rules; the production build (`next start`) over
 * a raw socket for the connection behaviour.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type * as Preprocess from '@gourmetgram/image-preprocess';
import type { RunningServer } from '@tritonserver-ts/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GET as feedbackGET } from '../src/app/api/feedback/[id]/route';
import { POST as feedbackPOST } from '../src/app/api/feedback/route';
import { POST } from '../src/app/api/predict/route';
import type { ApiError } from '../src/lib/types';
import { json, photo, startEmbedded, uploadRequest, useEnv } from './helpers';

/**
 * Counts the calls into the image decoder (the real functions still run): markup must be refused
 * before any of them sees the bytes.
 */
const decoder = vi.hoisted(() => ({ calls: 0 }));
vi.mock('@gourmetgram/image-preprocess', async (importOriginal) => {
  const real = await importOriginal<typeof Preprocess>();
  const counted =
    <A extends unknown[], R>(fn: (...args: A) => R) =>
    (...args: A): R => {
      decoder.calls++;
      return fn(...args);
    };
  return {
    ...real,
    imagePixels: counted(real.imagePixels),
    decodeImage: counted(real.decodeImage),
    preprocessImage: counted(real.preprocessImage),
  };
});

const web = fileURLToPath(new URL('..', import.meta.url));
let server: RunningServer;
let dir: string;

beforeAll(async () => {
  server = await startEmbedded();
  dir = mkdtempSync(join(tmpdir(), 'gg-sec-'));
  useEnv({
    TRITON_SERVER_URL: server.url,
    FOOD11_MODEL_NAME: 'food_classifier_onnx',
    FEEDBACK_STORAGE: 'local',
    FEEDBACK_DIR: dir,
    MAX_FEEDBACK_BYTES: undefined,
    GATEWAY_LOG: 'false',
  });
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function expectError(res: Response, status: number, code: string): Promise<string> {
  const body = await json<ApiError>(res);
  expect({ status: res.status, code: body.error.code }).toEqual({ status, code });
  return body.error.message;
}

/** A body stream of `total` bytes that counts how much of it was pulled. */
function countingStream(
  total: number,
  chunk = 64 * 1024,
): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= total) {
        controller.close();
        return;
      }
      pulled += chunk;
      controller.enqueue(new Uint8Array(chunk).fill(0x20));
    },
  });
  return { stream, pulled: () => pulled };
}

describe('feedback bodies are bounded (MAX_FEEDBACK_BYTES, default 16 KiB)', () => {
  it('refuses a declared oversized body before reading it', async () => {
    const { stream, pulled } = countingStream(200 * 1024 * 1024);
    const res = await feedbackPOST(
      new Request('http://localhost/api/feedback', {
        method: 'POST',
        body: stream,
        headers: { 'content-type': 'application/json', 'content-length': String(200 * 1024 * 1024) },
        duplex: 'half',
      } as RequestInit),
    );
    await expectError(res, 413, 'BODY_TOO_LARGE');
    expect(res.headers.get('connection')).toBe('close');
    expect(pulled()).toBeLessThanOrEqual(2 * 64 * 1024);
  });

  it('stops reading a body without a length as soon as it passes the limit', async () => {
    const { stream, pulled } = countingStream(200 * 1024 * 1024);
    const res = await feedbackPOST(
      new Request('http://localhost/api/feedback', {
        method: 'POST',
        body: stream,
        headers: { 'content-type': 'application/json' },
        duplex: 'half',
      } as RequestInit),
    );
    await expectError(res, 413, 'BODY_TOO_LARGE');
    // 200 MB offered; at most the limit plus the chunks in flight were read.
    expect(pulled()).toBeLessThan(16 * 1024 + 4 * 64 * 1024);
  });

  it('still takes a normal feedback body', async () => {
    const res = await feedbackPOST(
      new Request('http://localhost/api/feedback', {
        method: 'POST',
        body: JSON.stringify({ predictionId: 'no-such-prediction', kind: 'flag', comment: 'x'.repeat(500) }),
        headers: { 'content-type': 'application/json' },
      }),
    );
    // Well-formed and within the limit: it reaches the store, which does not know the id.
    await expectError(res, 404, 'NOT_FOUND');
  });
});

describe('prediction ids: one validator wherever an id enters', () => {
  const bad = [
    '..',
    '../predictions/x',
    'a:b',
    'a/b',
    'a\\b',
    'a\u0000b',
    '.hidden',
    'x'.repeat(65),
    'a b',
    '',
  ];
  it.each(bad.map((id) => [JSON.stringify(id), id]))(
    'refuses %s with 400 INVALID_PREDICTION_ID',
    async (_, id) => {
      const posted = await feedbackPOST(
        new Request('http://localhost/api/feedback', {
          method: 'POST',
          body: JSON.stringify({ predictionId: id, kind: 'flag' }),
          headers: { 'content-type': 'application/json' },
        }),
      );
      await expectError(posted, 400, 'INVALID_PREDICTION_ID');
      const got = await feedbackGET(new Request('http://localhost/api/feedback/x'), {
        params: Promise.resolve({ id }),
      });
      await expectError(got, 400, 'INVALID_PREDICTION_ID');
      // Nothing was written anywhere under the store's directory.
      expect(readdirSync(dir, { recursive: true }).filter((f) => String(f).includes('feedback/'))).toEqual(
        [],
      );
    },
  );
});

describe('markup never reaches the image decoder', () => {
  const svg =
    '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>';
  const billionLaughs = `<?xml version="1.0"?>
<!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>
<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>&c;</text></svg>`;
  const bom = Buffer.from([0xef, 0xbb, 0xbf]);
  const cases: [string, Uint8Array][] = [
    ['plain SVG', Buffer.from(svg)],
    ['SVG with a DOCTYPE and entities', Buffer.from(billionLaughs)],
    ['SVG after a comment and a DOCTYPE', Buffer.from(`<!-- logo -->\n<!DOCTYPE svg>\n${svg}`)],
    ['SVG after a BOM and white space', Buffer.concat([bom, Buffer.from(`\n  ${svg}`)])],
    ['UTF-16 SVG', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(svg, 'utf16le')])],
    ['an HTML page', Buffer.from('<!doctype html><html><body><img src=x onerror=alert(1)></body></html>')],
    // Each of these passed a "starts with <" check and reached librsvg: 400 with its parser's text,
    // or (compressed) parsed in full, entities included.
    ['SVG after a word of text', Buffer.from(`logo ${svg}`)],
    ['SVG after a form feed', Buffer.from(`\f${billionLaughs}`)],
    ['SVG after a no-break space', Buffer.from(`\u00a0${svg}`)],
    ['SVG after two BOMs', Buffer.concat([bom, bom, Buffer.from(billionLaughs)])],
    ['gzip-compressed SVG (svgz)', gzipSync(svg)],
    ['gzip-compressed SVG with a DOCTYPE and entities', gzipSync(billionLaughs)],
    ['UTF-16BE SVG without a BOM', Buffer.from(svg, 'utf16le').swap16()],
    ['SVG after NUL bytes', Buffer.concat([Buffer.alloc(4), Buffer.from(svg)])],
  ];
  it.each(cases)('refuses %s with 415 before any decoder sees it', async (_, bytes) => {
    const before = decoder.calls;
    const message = await expectError(
      await POST(uploadRequest(bytes, { name: 'image.svg', type: 'image/svg+xml' })),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expect(decoder.calls - before).toBe(0);
    expect(message).toMatch(/SVG, XML and HTML files are not supported|not an image in a supported format/);
    expect(message).not.toMatch(/rsvg|libxml|glib|entity|XML parse|svg"/i);
  });

  it('still decodes a photo (the decoder is only skipped for refused files)', async () => {
    const before = decoder.calls;
    const res = await POST(uploadRequest(photo('P005')));
    expect(res.status).toBe(200);
    expect(decoder.calls - before).toBeGreaterThan(0);
  });
});

describe('a huge declared upload is answered and closed, not read (next start)', () => {
  let next: ChildProcess | undefined;
  let port = 0;
  beforeAll(async () => {
    if (!existsSync(join(web, '.next/BUILD_ID'))) throw new Error('run `next build` first (npm test does)');
    port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = s.address() as { port: number };
        s.close(() => resolve(p));
      });
    });
    const bin = createRequire(join(web, 'package.json')).resolve('next/dist/bin/next');
    next = spawn(process.execPath, [bin, 'start', '-p', String(port), '-H', '127.0.0.1'], {
      cwd: web,
      stdio: 'ignore',
      env: {
        ...process.env,
        TRITON_SERVER_URL: server.url,
        FOOD11_MODEL_NAME: 'food_classifier_onnx',
        FEEDBACK_STORAGE: 'none',
        GATEWAY_LOG: 'false',
        NEXT_TELEMETRY_DISABLED: '1',
      },
    });
    for (let i = 0; i < 150; i++) {
      const up = await fetch(`http://127.0.0.1:${port}/api/health`).then(
        (r) => r.status > 0,
        () => false,
      );
      if (up) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 60_000);
  afterAll(() => {
    next?.kill('SIGTERM');
  });

  it.each([
    ['/api/predict', 'multipart/form-data; boundary=x', 'FILE_TOO_LARGE'],
    ['/api/feedback', 'application/json', 'BODY_TOO_LARGE'],
  ])('%s: 413 with Connection: close after a few kilobytes of a declared 1 GiB', async (path, type, code) => {
    const started = Date.now();
    let sent = 0;
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let data = '';
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`no answer after ${sent} bytes: ${data}`));
      }, 10_000);
      socket.on('connect', () => {
        socket.write(
          `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: ${2 ** 30}\r\n\r\n`,
        );
        // Keep sending slowly, as a client with a large upload would, until the server answers.
        const chunk = Buffer.alloc(1024, 0x61);
        const tick = setInterval(() => {
          if (socket.destroyed || socket.writableEnded) return clearInterval(tick);
          sent += chunk.length;
          socket.write(chunk);
        }, 5);
        socket.on('close', () => clearInterval(tick));
      });
      socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(data);
      });
      socket.on('error', () => undefined);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 413 /);
    expect(reply.toLowerCase()).toContain('connection: close');
    expect(reply).toContain(`"code":"${code}"`);
    // Answered and closed long before the body could have been read: a few kB of 1 GiB.
    expect(sent).toBeLessThan(2 * 1024 * 1024);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
