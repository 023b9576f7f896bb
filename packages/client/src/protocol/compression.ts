/**
 * Whole-body HTTP compression as Triton uses it: `gzip` (RFC 1952) and `deflate` (a zlib stream,
 * RFC 1950 — not raw deflate), plus the server's choice of response encoding from `Accept-Encoding`.
 * Compress after joining JSON and binary tail; decompress before splitting them.
 * @packageDocumentation
 */
import { promisify } from 'node:util';
import { gzip, gunzip, deflate, inflate } from 'node:zlib';
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
