/**
 * Request bodies: reading with an explicit size limit (`--http-max-input-size`), and request
 * decompression (`Content-Encoding: gzip | deflate`) with the same limit on the decompressed size.
 * With a {@link Reservation}, the bytes also come out of the shared in-flight budget
 * (`--http-max-inflight-body-bytes`): a declared `Content-Length` up front, a chunked body and the
 * decompressed output as they grow.
 * @packageDocumentation
 */
import type { IncomingMessage } from 'node:http';

import { ProtocolError, decompressWithin, parseContentEncoding } from '@tritonserver-ts/protocol';

import { ServerError, invalidArg } from '../common/errors.js';
import type { BodyPool } from './body-pool.js';
import type { Reservation } from './memory-budget.js';

/** Triton's default `--http-max-input-size` (64 MiB). */
export const DEFAULT_MAX_INPUT_SIZE = 64 * 1024 * 1024;

/** A body larger than the limit (HTTP 400, Triton's wording). */
export class BodyTooLargeError extends ServerError {
  /** @param size - the body size, or a description such as `more than 100` when it is not known. */
  constructor(size: number | string, limit: number) {
    super(
      'INVALID_ARG',
      `request JSON size of ${size} exceeds the maximum allowed value of ${limit}. Use --http-max-input-size to increase the limit.`,
    );
    this.name = 'BodyTooLargeError';
  }
}

/**
 * A decompressed body larger than `--http-max-input-size` (HTTP 400, Triton's wording): decompression
 * stops as soon as the output passes the limit.
 */
export class DecompressedBodyTooLargeError extends ServerError {
  constructor(limit: number) {
    super(
      'INVALID_ARG',
      `Decompressed data size exceeds the maximum allowed value of ${limit} bytes. Use --http-max-input-size to increase the limit.`,
    );
    this.name = 'DecompressedBodyTooLargeError';
  }
}

/**
 * The client went away before its body was complete (CANCELLED; nobody is left to read the answer).
 * Ends the read so that the request's budget reservation is returned at once.
 */
export class RequestAbortedError extends ServerError {
  constructor() {
    super('CANCELLED', 'the client closed the connection before the request body was complete');
    this.name = 'RequestAbortedError';
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
 *
 * With a `reservation`, a declared `Content-Length` is reserved before a byte is read (refused with
 * `BodyBudgetExceededError`, 503, when the budget cannot hold it), and a body of unknown length
 * (chunked) is reserved chunk by chunk as it arrives. The promise always settles: on the end of the
 * body, on a limit, or with {@link RequestAbortedError} when the connection closes first.
 * With a `pool`, a body with a binary tail (`alignAt` given) whose declared length the pool takes is
 * written straight into a pooled buffer as it arrives (no chunk list, no join); the caller gives it
 * back to the pool when the request is over (a failed read gives it back itself).
 * @param alignAt - byte offset that should be 8-byte aligned in memory (the start of the binary
 *   tail, i.e. `Inference-Header-Content-Length`), so tensors decode as zero-copy typed-array views.
 */
export function readBody(
  req: IncomingMessage,
  limit: number,
  alignAt?: number,
  reservation?: Reservation,
  pool?: BodyPool,
): Promise<Buffer> {
  const declaredHeader = req.headers['content-length'];
  const declared = declaredHeader === undefined ? undefined : Number(declaredHeader);
  const known = declared !== undefined && Number.isSafeInteger(declared) && declared >= 0;
  if (known && declared > limit) return Promise.reject(new BodyTooLargeError(declared, limit));
  if (known && reservation !== undefined) {
    // The whole declared body, before a byte is read: two bodies that cannot both fit never race.
    try {
      reservation.grow(declared);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
  return new Promise((resolve, reject) => {
    const chunked = /\bchunked\b/i.test(req.headers['transfer-encoding'] ?? '');
    if (known && !chunked && alignAt !== undefined && pool?.pools(declared) === true) {
      readInto(req, pool.take(declared, alignAt), pool, resolve, reject);
      return;
    }
    reads.set(req, {
      chunks: [],
      stage: undefined,
      staged: 0,
      size: 0,
      pieces: 0,
      limit,
      known,
      chunked,
      alignAt,
      reservation,
      resolve,
      reject,
    });
    req.on('data', onBodyData);
    req.on('end', onBodyEnd);
    req.on('error', onBodyError);
    req.on('close', onBodyClose);
  });
}

/** A body being read by {@link readBody} (kept by request: its listeners are shared functions). */
interface BodyRead {
  readonly chunks: Buffer[];
  /** A chunked body's block that small chunks are copied into (see {@link keepChunk}). */
  stage: Buffer | undefined;
  /** Bytes of {@link BodyRead.stage} in use. */
  staged: number;
  size: number;
  pieces: number;
  readonly limit: number;
  readonly known: boolean;
  readonly chunked: boolean;
  readonly alignAt: number | undefined;
  readonly reservation: Reservation | undefined;
  readonly resolve: (body: Buffer) => void;
  readonly reject: (error: Error) => void;
}

/** The bodies being read; an entry goes when its read settles. */
const reads = new WeakMap<IncomingMessage, BodyRead>();

function stopRead(req: IncomingMessage): void {
  reads.delete(req);
  req.off('data', onBodyData);
  req.off('end', onBodyEnd);
  req.off('error', onBodyError);
  req.off('close', onBodyClose);
}

function failRead(req: IncomingMessage, read: BodyRead, error: Error): void {
  stopRead(req);
  read.reject(error);
}

function onBodyData(this: IncomingMessage, chunk: Buffer): void {
  const read = reads.get(this);
  if (read === undefined) return;
  // node:http hands each HTTP chunk's data over as at least one piece, so counting pieces bounds
  // the chunks (Triton's limit: many tiny chunks cost per-chunk work and memory).
  if (read.chunked && chunk.byteLength > 0 && ++read.pieces > MAX_CHUNKED_CHUNKS) {
    failRead(this, read, new TooManyChunksError());
    return;
  }
  read.size += chunk.byteLength;
  if (read.size > read.limit) {
    failRead(this, read, new BodyTooLargeError(read.size, read.limit));
    return;
  }
  if (!read.known) {
    try {
      read.reservation?.grow(chunk.byteLength);
    } catch (error) {
      failRead(this, read, error as Error);
      return;
    }
  }
  if (read.chunked) keepChunk(read, chunk);
  else read.chunks.push(chunk);
}

/** Size of the blocks a chunked body's small chunks are copied into. */
const STAGE_BYTES = 64 * 1024;

/**
 * Keeps one piece of a chunked body. node:http hands over every HTTP chunk as its own small view of
 * the socket's read buffer; kept as they come, 65,536 one-byte chunks are 65,536 objects that live
 * until the body ends, reach the old generation and grow the heap (and RSS) for good. Pieces below
 * {@link STAGE_BYTES} are copied into full blocks instead, so each piece dies young.
 */
function keepChunk(read: BodyRead, chunk: Buffer): void {
  if (chunk.byteLength === 0) return;
  if (chunk.byteLength >= STAGE_BYTES) {
    flushStage(read);
    read.chunks.push(chunk);
    return;
  }
  let stage = read.stage;
  let from = 0;
  if (stage !== undefined) {
    from = Math.min(chunk.byteLength, stage.byteLength - read.staged);
    stage.set(from === chunk.byteLength ? chunk : chunk.subarray(0, from), read.staged);
    read.staged += from;
    if (read.staged === stage.byteLength) flushStage(read);
    if (from === chunk.byteLength) return;
  }
  stage = read.stage = Buffer.allocUnsafeSlow(STAGE_BYTES);
  stage.set(from === 0 ? chunk : chunk.subarray(from), 0);
  read.staged = chunk.byteLength - from;
}

/** Moves the stage block (its used part) to the chunk list. */
function flushStage(read: BodyRead): void {
  if (read.stage !== undefined && read.staged > 0) read.chunks.push(read.stage.subarray(0, read.staged));
  read.stage = undefined;
  read.staged = 0;
}

function onBodyEnd(this: IncomingMessage): void {
  const read = reads.get(this);
  if (read === undefined) return;
  stopRead(this);
  flushStage(read);
  const { chunks, size, alignAt } = read;
  if (alignAt !== undefined && alignAt > 0 && alignAt < size)
    read.resolve(joinAligned(chunks, size, alignAt));
  else read.resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
}

function onBodyError(this: IncomingMessage, error: Error): void {
  const read = reads.get(this);
  if (read !== undefined) failRead(this, read, error);
}

/** A connection that closes mid-body (client gone, socket destroyed) ends the read too. */
function onBodyClose(this: IncomingMessage): void {
  const read = reads.get(this);
  if (read !== undefined) failRead(this, read, new RequestAbortedError());
}

/**
 * Receives a body of a known length into `target` (from `pool`), which node:http delimits by its
 * `Content-Length`; settles like {@link readBody}. On failure the buffer goes back to the pool.
 */
function readInto(
  req: IncomingMessage,
  target: Buffer,
  pool: BodyPool,
  resolve: (body: Buffer) => void,
  reject: (error: Error) => void,
): void {
  let size = 0;
  let settled = false;
  const stop = (): void => {
    settled = true;
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onError);
    req.off('close', onClose);
  };
  const fail = (error: Error): void => {
    if (settled) return;
    stop();
    pool.give(target);
    reject(error);
  };
  const onData = (chunk: Buffer): void => {
    if (size + chunk.byteLength > target.byteLength) {
      // node:http ends the body at its Content-Length: not reached.
      fail(new ServerError('INTERNAL', 'the request body is longer than its Content-Length'));
      return;
    }
    target.set(chunk, size);
    size += chunk.byteLength;
  };
  const onEnd = (): void => {
    if (settled) return;
    stop();
    resolve(size === target.byteLength ? target : target.subarray(0, size));
  };
  const onError = (error: Error): void => fail(error);
  const onClose = (): void => fail(new RequestAbortedError());
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
  req.on('close', onClose);
}

/** Throws {@link UnsupportedEncodingError} for anything but none / identity / gzip / deflate. */
export function checkContentEncoding(value: string | undefined): 'gzip' | 'deflate' | undefined {
  try {
    return parseContentEncoding(value);
  } catch {
    throw new UnsupportedEncodingError(value ?? '');
  }
}

/** Output granularity of request decompression: the budget and the limit are checked this often. */
const DECOMPRESS_CHUNK_BYTES = 64 * 1024;

/**
 * Decompresses a request body with the codec's limited streaming decompressor, refusing output
 * above `limit` bytes ({@link DecompressedBodyTooLargeError}, 400, Triton's wording) as soon as it
 * passes it. With a `reservation`, every piece of output is reserved out of the shared in-flight
 * budget as it is produced, so concurrent bombs together cannot exceed what is free
 * (`BodyBudgetExceededError`, 503); the pieces are joined once at the end (the copy is reserved too,
 * and the pieces returned after).
 */
export async function decompressRequestBody(
  body: Buffer,
  encoding: 'gzip' | 'deflate' | undefined,
  limit: number,
  reservation?: Reservation,
): Promise<Buffer> {
  if (encoding === undefined) return body;
  let out;
  try {
    out = await decompressWithin(body, encoding, {
      maxBytes: limit,
      chunkBytes: DECOMPRESS_CHUNK_BYTES,
      ...(reservation !== undefined ? { onChunk: (n: number) => reservation.grow(n) } : {}),
    });
  } catch (error) {
    if (error instanceof ProtocolError && error.code === 'DECOMPRESSED_TOO_LARGE') {
      throw new DecompressedBodyTooLargeError(limit);
    }
    if (error instanceof ProtocolError && error.code === 'CORRUPT_COMPRESSED_BODY') {
      throw invalidArg(`failed to decompress the ${encoding} request body`, error.cause);
    }
    throw error;
  }
  const { chunks, byteLength } = out;
  if (chunks.length === 1) return chunks[0] as Buffer;
  reservation?.grow(byteLength);
  const joined = Buffer.concat(chunks, byteLength);
  reservation?.shrink(byteLength);
  return joined;
}
