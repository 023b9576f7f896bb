import 'server-only';
import { randomUUID } from 'node:crypto';
import { clientRequestId, parsePredictForm } from './api-schemas';
import { GatewayError } from './errors';
import type { MultipartPart } from './multipart';
import { boundaryOf, parseMultipart } from './multipart';

/**
 * Ids of one request: `requestId` is always generated here (it names the stored prediction, so a
 * caller must not be able to choose it and overwrite someone else's); the caller's own
 * `x-request-id`, when sane, is kept for logs as `clientRequestId`.
 */
export function requestIdsOf(req: Request): { requestId: string; clientRequestId?: string } {
  const given = req.headers.get('x-request-id');
  const requestId = randomUUID();
  return given && clientRequestId.safeParse(given).success
    ? { requestId, clientRequestId: given }
    : { requestId };
}

/** Multipart overhead allowed on top of the file limit (boundaries, headers, small fields). */
const MULTIPART_SLACK = 64 * 1024;

/**
 * Reads a request body of at most `limit` bytes: refused from a declared Content-Length before a byte
 * is read, and while streaming as soon as the limit is crossed. The rest is never read: the reader
 * just stops pulling, so the server stops reading the socket (the stream is not cancelled, which
 * would destroy Node's request object while the answer is still to be written on its connection),
 * and the 413 answer closes the connection (see `errorResponse`). At most `limit` bytes plus one
 * chunk are ever held.
 */
export async function readBody(req: Request, limit: number, tooLarge: () => Error): Promise<Buffer> {
  const declared = Number(req.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  if (!req.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = req.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) throw tooLarge();
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return Buffer.concat(chunks, total);
}

/**
 * Reads the body with a hard byte limit (checked against Content-Length first, then while streaming)
 * and returns the multipart field `file` (and the text of the optional `model` field). 413 when too
 * large, 400 when missing or malformed.
 */
export async function readUpload(
  req: Request,
  maxBytes: number,
): Promise<{ bytes: Uint8Array; name: string; type: string; model?: string }> {
  const type = req.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data/i.test(type)) {
    throw new GatewayError(
      'INVALID_REQUEST',
      'Send the photo as multipart/form-data in a field named "file".',
    );
  }
  const limit = maxBytes + MULTIPART_SLACK;
  const tooLarge = () =>
    new GatewayError(
      'FILE_TOO_LARGE',
      `The file is larger than the ${(maxBytes / 1024 / 1024).toFixed(1)} MB limit.`,
    );
  if (!req.body) throw new GatewayError('MISSING_FILE', 'The request has no body.');
  const body = await readBody(req, limit, tooLarge);
  const boundary = boundaryOf(type);
  if (!boundary) throw new GatewayError('INVALID_REQUEST', 'The multipart content type has no boundary.');
  let parts: MultipartPart[];
  try {
    parts = parseMultipart(body, boundary);
  } catch (err) {
    throw new GatewayError('INVALID_REQUEST', 'The multipart body could not be parsed.', { cause: err });
  }
  const files = parts.filter((p) => p.name === 'file' && p.filename !== undefined);
  // Exactly one file part named "file" (src/server/api-schemas.ts; /api/openapi.json documents it).
  parsePredictForm(files.map((f) => f.data));
  const file = files[0]!;
  if (file.data.byteLength > maxBytes) throw tooLarge();
  // The optional `model` field (a text part): at most one (see chooseModel for the names allowed).
  const models = parts.filter((p) => p.name === 'model' && p.filename === undefined);
  if (models.length > 1) {
    throw new GatewayError('INVALID_REQUEST', 'Send at most one "model" field.');
  }
  const model = models[0] ? Buffer.from(models[0].data).toString('utf8') : undefined;
  return {
    bytes: file.data,
    name: file.filename ?? 'upload',
    type: file.contentType ?? 'application/octet-stream',
    ...(model !== undefined ? { model } : {}),
  };
}

/** One structured log line per request. */
export function logLine(fields: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ t: new Date().toISOString(), ...fields })}\n`);
}
