/**
 * Request bodies: reading with an explicit size limit (`--http-max-input-size`), and request
 * decompression (`Content-Encoding: gzip | deflate`) with the same limit on the decompressed size.
 * @packageDocumentation
 */
import type { IncomingMessage } from 'node:http';
import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';

import { parseContentEncoding } from '@tritonserver-ts/client/protocol';

import { ServerError, invalidArg } from '../core/errors.js';
import { BodyBudgetExceededError, type Reservation } from './memory-budget.js';

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);

/** Triton's default `--http-max-input-size` (64 MiB). */
export const DEFAULT_MAX_INPUT_SIZE = 64 * 1024 * 1024;

/** A body larger than the limit (HTTP 400, Triton's wording). */
export class BodyTooLargeError extends ServerError {
  /** @param size - the body size, or a description such as `more than 100` when it is not known. */
  constructor(size: number | string, limit: number) {
    super(
      'INVALID_ARG',
      `Request JSON size of ${size} exceeds the maximum allowed value of ${limit}. Use --http-max-input-size to increase the limit.`,
    );
    this.name = 'BodyTooLargeError';
  }
}

/** Triton's limit on the non-empty chunks of one chunked request body (`kMaxChunkedChunks`). */
export const MAX_CHUNKED_CHUNKS = 65_536;

/** A chunked body of more than {@link MAX_CHUNKED_CHUNKS} non-empty chunks (400, connection closed). */
export class TooManyChunksError extends ServerError {
  constructor() {
    super(
      'INVALID_ARG',
      `Chunked request body exceeds maximum of ${MAX_CHUNKED_CHUNKS} non-empty chunks. Send fewer or larger HTTP chunks.`,
    );
    this.name = 'TooManyChunksError';
  }
}

/** An unsupported `Content-Encoding` (HTTP 415 with `Accept-Encoding: gzip, deflate`, as Triton). */
export class UnsupportedEncodingError extends ServerError {
  constructor(encoding: string) {
    super(
      'UNSUPPORTED',
      `Unsupported Content-Encoding '${encoding}', only 'gzip' and 'deflate' are supported`,
    );
    this.name = 'UnsupportedEncodingError';
  }
}

/** Joins chunks into one buffer whose byte `alignAt` sits on an 8-byte boundary (one copy). */
function joinAligned(chunks: readonly Buffer[], size: number, alignAt: number): Buffer {
  const pad = (8 - (alignAt % 8)) % 8;
  const single = chunks.length === 1 ? (chunks[0] as Buffer) : undefined;
  if (single !== undefined && (single.byteOffset + alignAt) % 8 === 0) return single;
  const out = Buffer.from(new ArrayBuffer(size + pad), pad, size);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}

/**
 * Reads the whole body into one buffer, refusing more than `limit` bytes (checked against
 * `Content-Length` before reading, and while streaming for chunked bodies). Chunks are kept as
 * received and joined once.
 * @param alignAt - byte offset that should be 8-byte aligned in memory (the start of the binary
 *   tail, i.e. `Inference-Header-Content-Length`), so tensors decode as zero-copy typed-array views.
 */
export function readBody(
  req: IncomingMessage,
  limit: number,
  alignAt?: number,
  reservation?: Reservation,
): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined) {
    const n = Number(declared);
    if (Number.isFinite(n) && n > limit) return Promise.reject(new BodyTooLargeError(n, limit));
    // A declared body that the shared budget cannot hold is refused before a byte is read.
    if (reservation !== undefined && Number.isFinite(n) && n > reservation.available) {
      return Promise.reject(new BodyBudgetExceededError(reservation.limit));
    }
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    const fail = (error: Error): void => {
      failed = true;
      req.off('data', onData);
      reject(error);
    };
    const chunked = /\bchunked\b/i.test(req.headers['transfer-encoding'] ?? '');
    let pieces = 0;
    const onData = (chunk: Buffer): void => {
      // node:http hands each HTTP chunk's data over as at least one piece, so counting pieces bounds
      // the chunks (Triton's limit: many tiny chunks cost per-chunk work and memory).
      if (chunked && chunk.byteLength > 0 && ++pieces > MAX_CHUNKED_CHUNKS) {
        fail(new TooManyChunksError());
        return;
      }
      size += chunk.byteLength;
      if (size > limit) {
        fail(new BodyTooLargeError(size, limit));
        return;
      }
      try {
        reservation?.grow(chunk.byteLength);
      } catch (error) {
        fail(error as Error);
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => {
      if (failed) return;
      if (alignAt !== undefined && alignAt > 0 && alignAt < size) resolve(joinAligned(chunks, size, alignAt));
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    });
    req.once('error', (error) => {
      if (!failed) reject(error);
    });
  });
}

/** Throws {@link UnsupportedEncodingError} for anything but none / identity / gzip / deflate. */
export function checkContentEncoding(value: string | undefined): 'gzip' | 'deflate' | undefined {
  try {
    return parseContentEncoding(value);
  } catch {
    throw new UnsupportedEncodingError(value ?? '');
  }
}

/**
 * Decompresses a request body, refusing output above `limit` bytes; with a `reservation`, the
 * decompressed bytes also come out of the shared in-flight budget (a bomb cannot exceed what is free).
 */
export async function decompressRequestBody(
  body: Buffer,
  encoding: 'gzip' | 'deflate' | undefined,
  limit: number,
  reservation?: Reservation,
): Promise<Buffer> {
  if (encoding === undefined) return body;
  const budgetBound = reservation !== undefined && reservation.available < limit;
  const maxOutputLength = budgetBound ? Math.max(1, reservation.available) : limit;
  let out: Buffer;
  try {
    out =
      encoding === 'gzip'
        ? await gunzipAsync(body, { maxOutputLength })
        : await inflateAsync(body, { maxOutputLength });
  } catch (cause) {
    if (cause instanceof RangeError || (cause as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      if (budgetBound) throw new BodyBudgetExceededError(reservation.limit);
      throw new BodyTooLargeError(`more than ${limit} (decompressed)`, limit);
    }
    throw invalidArg(`failed to decompress the ${encoding} request body`, cause);
  }
  reservation?.grow(out.byteLength);
  return out;
}
