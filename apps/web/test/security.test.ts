/**
 * Attacks on the gateway (issue 14): unbounded feedback bodies, prediction ids that would name other
 * storage keys, SVG/XML reaching the image decoder, and huge declared uploads that the server would
 * read to the end. Route handlers in process for the rules; the production build (`next start`) over
 * a raw socket for the connection behaviour and the server's memory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** What a raw HTTP/1.1 client saw of one oversized POST. */
interface RawOutcome {
  /** Everything the server sent (latin1). */
  reply: string;
  /** Body bytes the client managed to hand to the socket in all. */
  sent: number;
  /** Body bytes handed to the socket when the first byte of the answer arrived. */
  sentWhenAnswered: number;
  /** Milliseconds from connecting to the first byte of the answer, and to the close. */
  answeredAfterMs: number | undefined;
  closedAfterMs: number;
}

interface RawPost {
  port: number;
  path: string;
  type: string;
  /** `declared`: `Content-Length: 1 GiB`; `chunked`: no length, chunked transfer coding. */
  framing: 'declared' | 'chunked';
  /**
   * `flood`: as fast as the socket takes it (waiting for `drain`), up to `total` bytes, stopping at the
   * first byte of the answer; `paced`: `burst` bytes at once, then 1 KiB every 5 ms until the connection
   * closes, each write followed by `busyMs` of blocking work (a client whose event loop is busy, as a
   * loaded browser's is).
   */
  pace: { kind: 'flood'; total: number } | { kind: 'paced'; burst: number; busyMs: number };
}

/** One POST over a raw socket; never ends its body, so only the server can end the exchange. */
function rawPost(o: RawPost): Promise<RawOutcome> {
  const frame = (bytes: Buffer) =>
    o.framing === 'chunked'
      ? Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')])
      : bytes;
  const size = o.pace.kind === 'flood' ? 64 * 1024 : 1024;
  const framed = frame(Buffer.alloc(size, 0x61));
  const length = o.framing === 'declared' ? `Content-Length: ${2 ** 30}` : 'Transfer-Encoding: chunked';
  return new Promise<RawOutcome>((resolve, reject) => {
    const started = Date.now();
    const socket = connect(o.port, '127.0.0.1');
    let reply = '';
    let sent = 0;
    let sentWhenAnswered = 0;
    let answeredAfterMs: number | undefined;
    let tick: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`not closed after 15 s (${sent} bytes sent): ${reply.slice(0, 200)}`));
    }, 15_000);
    const flood = (total: number) => {
      while (answeredAfterMs === undefined && !socket.destroyed && sent < total) {
        sent += size;
        if (!socket.write(framed)) {
          socket.once('drain', () => flood(total));
          return;
        }
      }
    };
    socket.on('connect', () => {
      socket.write(
        `POST ${o.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${o.type}\r\n${length}\r\n\r\n`,
      );
      const pace = o.pace;
      if (pace.kind === 'flood') {
        flood(pace.total);
        return;
      }
      if (pace.burst > 0) {
        sent += pace.burst;
        socket.write(frame(Buffer.alloc(pace.burst, 0x61)));
      }
      tick = setInterval(() => {
        if (socket.destroyed || socket.writableEnded) return;
        sent += size;
        socket.write(framed);
        setImmediate(() => {
          const until = Date.now() + pace.busyMs;
          while (Date.now() < until);
        });
      }, 5);
    });
    socket.on('data', (d: Buffer) => {
      if (answeredAfterMs === undefined) {
        answeredAfterMs = Date.now() - started;
        sentWhenAnswered = sent;
      }
      reply += d.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(tick);
      clearTimeout(timer);
      resolve({ reply, sent, sentWhenAnswered, answeredAfterMs, closedAfterMs: Date.now() - started });
    });
  });
}

/** Resident memory of a process now and at its peak since the last reset, in MiB (Linux). */
function memoryMiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => {
    const kib = Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
    if (!Number.isFinite(kib)) throw new Error(`no ${name} for process ${pid}`);
    return kib / 1024;
  };
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

/** Sets a process's peak resident memory (VmHWM) back to its current resident memory. */
function resetPeakMemory(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

function expect413(out: RawOutcome, code: string): void {
  expect(out.reply.split('\r\n')[0]).toMatch(/^HTTP\/1\.1 413 /);
  expect(out.reply.toLowerCase()).toContain('\r\nconnection: close\r\n');
  expect(out.reply).toContain(`"code":"${code}"`);
}

const ROUTES = [
  ['/api/predict', 'multipart/form-data; boundary=x', 'FILE_TOO_LARGE'],
  ['/api/feedback', 'application/json', 'BODY_TOO_LARGE'],
] as const;

describe('oversized bodies through the production server (next start)', () => {
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
        MAX_UPLOAD_BYTES: undefined,
        MAX_FEEDBACK_BYTES: undefined,
        GATEWAY_LOG: 'false',
        NEXT_TELEMETRY_DISABLED: '1',
      },
    });
    let up = false;
    for (let i = 0; i < 150 && !up && next.exitCode === null; i++) {
      up = await fetch(`http://127.0.0.1:${port}/api/version`).then(
        (r) => r.ok,
        () => false,
      );
      if (!up) await new Promise((r) => setTimeout(r, 200));
    }
    if (!up || next.exitCode !== null) throw new Error('next start did not come up');
    // Load both routes (sharp, the client) before any memory is measured.
    const warm = await Promise.all([
      fetch(`http://127.0.0.1:${port}/api/predict`, { method: 'POST', body: 'x' }),
      fetch(`http://127.0.0.1:${port}/api/feedback`, { method: 'POST', body: '{}' }),
    ]);
    expect(warm.map((r) => r.status)).toEqual([400, 400]);
  }, 60_000);
  afterAll(() => {
    next?.kill('SIGTERM');
  });

  it('prediction ids from the URL and the body: 400 INVALID_PREDICTION_ID, never a 500', async () => {
    // Percent-encoded as a client would send them; `..` alone is resolved by URL parsers first.
    const inPath = ['a%3Ab', '..%2Fx', '..%2F..%2Fpredictions%2Fx', 'a%5Cb', 'a%00b', '.hidden', 'a%20b'];
    for (const id of inPath) {
      const res = await fetch(`http://127.0.0.1:${port}/api/feedback/${id}`);
      expect({ id, status: res.status, code: (await json<ApiError>(res)).error.code }).toEqual({
        id,
        status: 400,
        code: 'INVALID_PREDICTION_ID',
      });
    }
    for (const id of ['..', '../predictions/x', 'a:b', 'a\\b', 'a\u0000b', 'x'.repeat(65)]) {
      const res = await fetch(`http://127.0.0.1:${port}/api/feedback`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ predictionId: id, kind: 'flag' }),
      });
      expect({ id, status: res.status, code: (await json<ApiError>(res)).error.code }).toEqual({
        id,
        status: 400,
        code: 'INVALID_PREDICTION_ID',
      });
    }
  });

  it.each(ROUTES)(
    '%s: a declared 1 GiB body gets 413 and Connection: close after a few kilobytes',
    async (path, type, code) => {
      const out = await rawPost({
        port,
        path,
        type,
        framing: 'declared',
        pace: { kind: 'paced', burst: 0, busyMs: 0 },
      });
      expect413(out, code);
      // Answered at once and closed by the server, long before the body could have been sent: the
      // client never ends its body, and sent only what it paced out (1 KiB per 5 ms) meanwhile.
      expect(out.answeredAfterMs).toBeLessThan(3000);
      expect(out.closedAfterMs).toBeLessThan(5000);
      expect(out.sent).toBeLessThan(2 * 1024 * 1024);
    },
  );

  it.each(ROUTES)(
    '%s: a 200 MB chunked body is refused before most of it is sent, in bounded server memory',
    async (path, type, code) => {
      const pid = next?.pid ?? 0;
      resetPeakMemory(pid);
      const before = memoryMiB(pid).rss;
      const total = 200 * 1024 * 1024;
      const out = await rawPost({ port, path, type, framing: 'chunked', pace: { kind: 'flood', total } });
      const grown = memoryMiB(pid).peak - before;
      console.log(
        `${path}: 200 MB chunked body, answered after ${out.answeredAfterMs} ms and ${(out.sentWhenAnswered / 2 ** 20).toFixed(1)} MiB, ` +
          `closed after ${out.closedAfterMs} ms and ${(out.sent / 2 ** 20).toFixed(1)} MiB, server peak RSS +${grown.toFixed(1)} MiB`,
      );
      expect413(out, code);
      // The answer came while the client was still sending (socket buffers hold a few MB), and the
      // server then stopped reading: the client could not push more than a fraction of the body.
      expect(out.sentWhenAnswered).toBeLessThan(total / 4);
      expect(out.sent).toBeLessThan(total / 4);
      // The body (200 MB) never lived in the server: its peak resident memory grew by far less.
      expect(grown).toBeLessThan(64);
    },
  );

  it.each(ROUTES)(
    '%s: the 413 reaches clients that keep sending with a busy event loop (40 clients, 8 at a time)',
    async (path, type, code) => {
      // Closing a socket with unread data makes the kernel answer with a reset; a client still
      // writing then fails its next write (EPIPE) before it has read the answer. Each client pushes
      // 256 KiB at once (as a browser's upload fills the socket), then keeps writing. Closing right
      // after the answer lost 68–80% of these answers here; the short linger after it loses none.
      const outcomes: RawOutcome[] = [];
      for (let i = 0; i < 40; i += 8) {
        outcomes.push(
          ...(await Promise.all(
            Array.from({ length: 8 }, () =>
              rawPost({
                port,
                path,
                type,
                framing: 'declared',
                pace: { kind: 'paced', burst: 256 * 1024, busyMs: 8 },
              }),
            ),
          )),
        );
      }
      const lost = outcomes.filter((o) => !o.reply.startsWith('HTTP/1.1 413 '));
      expect(lost.map((o) => `${o.sent} bytes sent, reply ${JSON.stringify(o.reply.slice(0, 40))}`)).toEqual(
        [],
      );
      for (const o of outcomes) expect413(o, code);
    },
    60_000,
  );
});
