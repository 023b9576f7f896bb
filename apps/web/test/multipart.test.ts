import { describe, expect, it } from 'vitest';
import { MultipartError, boundaryOf, parseMultipart } from '../src/server/multipart';

async function encode(form: FormData) {
  const r = new Request('http://x/', { method: 'POST', body: form });
  return { type: r.headers.get('content-type')!, body: Buffer.from(await r.arrayBuffer()) };
}

describe('multipart parser', () => {
  it('reads what undici sends: fields and files, bytes intact, no copy', async () => {
    const bytes = Uint8Array.from({ length: 3000 }, (_, i) => (i * 7) % 256);
    const form = new FormData();
    form.set('note', 'hello');
    form.set('file', new Blob([bytes], { type: 'image/jpeg' }), 'dîner "1".jpg');
    const { type, body } = await encode(form);
    const parts = parseMultipart(body, boundaryOf(type)!);
    expect(parts.map((p) => p.name)).toEqual(['note', 'file']);
    const file = parts[1]!;
    expect(file.contentType).toBe('image/jpeg');
    expect(file.filename).toBe('dîner %221%22.jpg'); // UTF-8 kept; undici percent-encodes quotes
    expect(Buffer.from(file.data).equals(Buffer.from(bytes))).toBe(true);
    expect(file.data.buffer).toBe(body.buffer);
  });

  it('accepts a quoted boundary and a body that contains the boundary text mid-line', () => {
    const b = 'XyZ';
    const payload = 'a--XyZb\r\n-XyZ';
    const body = Buffer.from(
      `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n${payload}\r\n--${b}--\r\n`,
    );
    const parts = parseMultipart(body, boundaryOf(`multipart/form-data; boundary="${b}"`)!);
    expect(Buffer.from(parts[0]!.data).toString()).toBe(payload);
  });

  it('refuses truncated or malformed bodies', () => {
    const b = 'bnd';
    const ok = `--${b}\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\ndata\r\n--${b}--`;
    expect(() => parseMultipart(Buffer.from(ok.slice(0, 60)), b)).toThrow(MultipartError);
    expect(() => parseMultipart(Buffer.from('no boundary here'), b)).toThrow(MultipartError);
    expect(() => parseMultipart(Buffer.from(`--${b}\r\nX: y\r\n\r\nz\r\n--${b}--`), b)).toThrow(
      /without a name/,
    );
    expect(boundaryOf('multipart/form-data')).toBeUndefined();
  });
});
