/**
 * Whole-body HTTP compression as Triton uses it: `gzip` (RFC 1952) and `deflate` (a zlib stream,
 * RFC 1950 — not raw deflate), plus the server's choice of response encoding from `Accept-Encoding`.
 * Compress after joining JSON and binary tail; decompress before splitting them.
 * @packageDocumentation
 */
import { promisify } from 'node:util';
import { createGunzip, createInflate, deflate, gunzip, gzip, inflate } from 'node:zlib';

import { ProtocolError } from './errors.js';

/** A body compression algorithm. */
export type CompressionAlgorithm = 'gzip' | 'deflate';

/** A content coding a Triton server can answer with. */
export type ContentCoding = CompressionAlgorithm | 'identity';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);
const deflateAsync = promisify(deflate);
const inflateAsync = promisify(inflate);

/**
 * Reads a `Content-Encoding` header value.
 * @returns the algorithm, or `undefined` for none / `identity`.
 * @throws ProtocolError `UNSUPPORTED_ENCODING` for anything else (a server should then answer 400
 *   with `Accept-Encoding: gzip, deflate`).
 */
export function parseContentEncoding(value: string | null | undefined): CompressionAlgorithm | undefined {
  const v = (value ?? '').trim().toLowerCase();
  if (v === '' || v === 'identity') return undefined;
  if (v === 'gzip' || v === 'deflate') return v;
  throw new ProtocolError('UNSUPPORTED_ENCODING', `unsupported Content-Encoding '${value ?? ''}'`);
}

/** Compresses a whole body. */
export async function compressBody(body: Uint8Array, algorithm: CompressionAlgorithm): Promise<Uint8Array> {
  return algorithm === 'gzip' ? gzipAsync(body) : deflateAsync(body);
}

/**
 * Decompresses a whole body.
 * @param encoding - a `Content-Encoding` value; none / `identity` returns `body` unchanged.
 * @throws ProtocolError `UNSUPPORTED_ENCODING` or `CORRUPT_COMPRESSED_BODY`.
 */
export async function decompressBody(
  body: Uint8Array,
  encoding: string | null | undefined,
): Promise<Uint8Array> {
  const algorithm = parseContentEncoding(encoding);
  if (algorithm === undefined) return body;
  try {
    return algorithm === 'gzip' ? await gunzipAsync(body) : await inflateAsync(body);
  } catch (cause) {
    throw new ProtocolError('CORRUPT_COMPRESSED_BODY', `failed to decompress the ${algorithm} body`, {
      cause,
    });
  }
}

/** Limits of {@link decompressWithin}. */
export interface DecompressLimits {
  /**
   * Largest decompressed size in bytes. Passing it stops decompression as soon as it happens
   * (ProtocolError `DECOMPRESSED_TOO_LARGE`): a small compressed body cannot make the reader hold
   * more than this.
   */
  readonly maxBytes: number;
  /**
   * Called with the size of each piece of output before it is kept (after the limit check). An error
   * thrown here stops decompression, and the promise rejects with it (e.g. a memory budget).
   */
  readonly onChunk?: (byteLength: number) => void;
  /** Output piece size in bytes: how often the limit and `onChunk` are checked (default 64 KiB). */
  readonly chunkBytes?: number;
}

/** What {@link decompressWithin} produced: the output pieces in order, and their total size. */
export interface DecompressedChunks {
  readonly chunks: Buffer[];
  readonly byteLength: number;
}

/**
 * Decompresses a whole body as a stream, within {@link DecompressLimits}; the pieces are returned
 * unjoined, so the caller decides (and accounts for) the one copy that joins them.
 * @throws ProtocolError `DECOMPRESSED_TOO_LARGE` past `maxBytes`, `CORRUPT_COMPRESSED_BODY` when the
 *   data is not valid for `algorithm`; or what `onChunk` threw.
 */
export function decompressWithin(
  body: Uint8Array,
  algorithm: CompressionAlgorithm,
  limits: DecompressLimits,
): Promise<DecompressedChunks> {
  const chunkSize = limits.chunkBytes ?? 64 * 1024;
  const stream = algorithm === 'gzip' ? createGunzip({ chunkSize }) : createInflate({ chunkSize });
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const fail = (error: Error): void => {
      if (settled) return;
      settled = true;
      chunks = [];
      stream.destroy();
      reject(error);
    };
    stream.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.byteLength;
      if (size > limits.maxBytes) {
        fail(
          new ProtocolError(
            'DECOMPRESSED_TOO_LARGE',
            `the decompressed ${algorithm} body exceeds ${limits.maxBytes} bytes`,
          ),
        );
        return;
      }
      try {
        limits.onChunk?.(chunk.byteLength);
      } catch (error) {
        fail(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      chunks.push(chunk);
    });
    stream.once('end', () => {
      if (settled) return;
      settled = true;
      resolve({ chunks, byteLength: size });
    });
    stream.once('error', (cause) => {
      fail(
        new ProtocolError('CORRUPT_COMPRESSED_BODY', `failed to decompress the ${algorithm} body`, { cause }),
      );
    });
    stream.end(body);
  });
}

/**
 * Picks the response encoding from an `Accept-Encoding` header the way Triton does: among
 * `identity`, `deflate` and `gzip`, the one with the highest q-value (`*` covers those not named;
 * q=0 excludes); on a tie, the one listed first. Without a usable preference: `identity`.
 */
export function negotiateContentEncoding(acceptEncoding: string | null | undefined): ContentCoding {
  if (acceptEncoding === undefined || acceptEncoding === null || acceptEncoding.trim() === '')
    return 'identity';
  const weights = new Map<string, number>();
  const order: string[] = [];
  for (const part of acceptEncoding.split(',')) {
    const [token = '', ...params] = part.split(';').map((s) => s.trim());
    const coding = token.toLowerCase();
    if (coding === '') continue;
    let q = 1;
    for (const p of params) {
      const m = /^q\s*=\s*([0-9.]+)$/i.exec(p);
      if (m !== null) q = Number(m[1]);
    }
    if (Number.isNaN(q)) q = 0;
    if (!weights.has(coding)) order.push(coding);
    weights.set(coding, q);
  }
  const star = weights.get('*');
  let best: ContentCoding = 'identity';
  let bestQ = 0;
  let bestRank = Number.POSITIVE_INFINITY;
  for (const coding of ['identity', 'deflate', 'gzip'] as const) {
    const q = weights.get(coding) ?? star;
    if (q === undefined || q <= 0) continue;
    const rank = weights.has(coding) ? order.indexOf(coding) : order.indexOf('*');
    if (q > bestQ || (q === bestQ && rank < bestRank)) {
      best = coding;
      bestQ = q;
      bestRank = rank;
    }
  }
  return best;
}
