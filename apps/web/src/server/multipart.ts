import 'server-only';

/** One part of a multipart/form-data body; `data` is a view into the body (no copy). */
export interface MultipartPart {
  name: string;
  filename: string | undefined;
  contentType: string | undefined;
  data: Uint8Array;
}

/** Malformed multipart input. */
export class MultipartError extends Error {
  override readonly name = 'MultipartError';
}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

/** The boundary of a `multipart/form-data` content type, or undefined. */
export function boundaryOf(contentType: string): string | undefined {
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(contentType);
  return m?.[1] ?? m?.[2];
}

function param(header: string, key: string): string | undefined {
  const m = new RegExp(`;\\s*${key}\\*?=(?:"((?:[^"\\\\]|\\\\.)*)"|([^;]*))`, 'i').exec(header);
  const v = m?.[1] ?? m?.[2]?.trim();
  return v?.replace(/\\(.)/g, '$1');
}

/**
 * Parses a buffered multipart/form-data body (RFC 7578) into parts without copying their contents.
 * Small and strict: what browsers, curl and undici send. Throws {@link MultipartError} when malformed.
 */
export function parseMultipart(body: Buffer, boundary: string): MultipartPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const next = Buffer.from(`\r\n--${boundary}`);
  let pos = body.indexOf(delimiter);
  if (pos < 0) throw new MultipartError('no boundary in the body');
  const parts: MultipartPart[] = [];
  for (;;) {
    pos += delimiter.length;
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return parts; // closing "--"
    if (body.indexOf(CRLF, pos) !== pos) throw new MultipartError('bad delimiter line');
    pos += 2;
    const headerEnd = body.indexOf(HEADER_END, pos);
    if (headerEnd < 0) throw new MultipartError('part headers not terminated');
    const headers = body.subarray(pos, headerEnd).toString('latin1').split('\r\n');
    const start = headerEnd + 4;
    const end = body.indexOf(next, start);
    if (end < 0) throw new MultipartError('part not terminated');
    let name: string | undefined;
    let filename: string | undefined;
    let contentType: string | undefined;
    for (const h of headers) {
      const colon = h.indexOf(':');
      const key = h.slice(0, colon).trim().toLowerCase();
      const value = h.slice(colon + 1).trim();
      if (key === 'content-disposition') {
        name = param(value, 'name');
        filename = param(value, 'filename');
      } else if (key === 'content-type') contentType = value;
    }
    if (name === undefined) throw new MultipartError('part without a name');
    parts.push({
      name,
      filename: filename === undefined ? undefined : Buffer.from(filename, 'latin1').toString('utf8'),
      contentType,
      data: body.subarray(start, end),
    });
    pos = end + 2;
  }
}
