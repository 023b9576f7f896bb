// Behaviour that changed in Triton 2.73 (NGC 26.09), the release the suite targets: the load API's
// model-name rule (only `..` or a name holding `/` is traversal; `...`, `..my_model`, `model..1` are
// plain names, unknown to the repository here) over both transports, and the HTTP front end's
// framing of chunked bodies (the 65,536-chunk limit; a body with both Content-Length and
// Transfer-Encoding: chunked, as Triton's test_content_encoding_chunked_manually sends it), which
// has no gRPC counterpart.
import { request } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeInferResponse } from '@tritonserver-ts/protocol/http';
import { httpBase, newClient, transports } from './target.js';
import { differsOver, expectServerError } from './transport-differences.js';

const { hostname, port } = new URL(httpBase);

/** Triton's message for a load name it refuses as traversal. */
const traversal = (name: string): string =>
  `invalid model name '${name}', model name must not contain path traversal characters`;

/** A POST whose path is sent exactly as given (fetch and URL resolve `..` segments). */
function rawPost(path: string): Promise<{ status: number; error: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method: 'POST' }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, error: (JSON.parse(text) as { error: string }).error }),
      );
    });
    req.on('error', reject);
    req.end('{}');
  });
}

/** Sends `bytes` on a connection of its own; every byte answered until the server closes (or 5 s). */
function exchange(bytes: Buffer): Promise<Buffer> {
  return new Promise((resolve) => {
    const received: Buffer[] = [];
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    const timer = setTimeout(() => socket.destroy(), 5000);
    socket.on('data', (d: Buffer) => received.push(d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(received));
    });
  });
}

/** The first response in `raw`: status, lower-case headers, body. */
function response(raw: Buffer): { status: number; headers: Record<string, string>; body: Buffer } {
  const end = raw.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = raw.toString('latin1', 0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? raw.byteLength);
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0),
    headers,
    body: raw.subarray(end + 4, end + 4 + length),
  };
}

/** `data` in the chunked encoding, `size` bytes a chunk (hex sizes in upper case, as Triton's test). */
function chunked(data: Uint8Array, size: number): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < data.byteLength; at += size) {
    const piece = data.subarray(at, at + size);
    parts.push(
      Buffer.from(`${piece.byteLength.toString(16).toUpperCase()}\r\n`),
      Buffer.from(piece),
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

const head = (lines: readonly string[]): Buffer => Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');

describe.each(transports)('%s: Triton 2.73 behaviour', (transport) => {
  const client = newClient(transport);
  afterAll(() => client.close());

  it.each(['...', '..my_model', 'model..1', 'model....1'])(
    'the load name %j is a plain name: absent from the repository → INTERNAL "failed to poll from model repository"',
    async (name) => {
      const error = await expectServerError(client.loadModel(name), transport, 'INTERNAL');
      expect(error.message).toContain(`failed to load '${name}', failed to poll from model repository`);
    },
  );

  it('the load name ".." is refused as traversal → INVALID_ARG', async () => {
    if (differsOver(transport, 'http-framing')) {
      const error = await expectServerError(client.loadModel('..'), transport, 'INVALID_ARG');
      expect(error.message).toContain(traversal('..'));
      return;
    }
    // Over HTTP the path is sent as is: a client library would resolve the `..` segment.
    expect(await rawPost('/v2/repository/models/../load')).toEqual({ status: 400, error: traversal('..') });
  });

  if (differsOver(transport, 'http-framing')) {
    it('a name holding "/" is refused as traversal → INVALID_ARG', async () => {
      const error = await expectServerError(client.loadModel('a/b'), transport, 'INVALID_ARG');
      expect(error.message).toContain(traversal('a/b'));
    });
    it('has no HTTP chunks: a 1 MiB request in many HTTP/2 frames is one message', async () => {
      const data = new Float32Array(256 * 1024).fill(2.5);
      const result = await client.infer('identity_fp32', [
        { name: 'INPUT0', datatype: 'FP32', shape: [1, data.length], data },
      ]);
      expect(result.shape('OUTPUT0')).toEqual([1, data.length]);
    });
    return;
  }

  it('more than 65,536 non-empty chunks → 400 "Chunked request body exceeds maximum of 65536 non-empty chunks…"', async () => {
    const body = Buffer.from('1\r\nA\r\n'.repeat(65_537) + '0\r\n\r\n');
    const raw = await exchange(
      Buffer.concat([
        head([
          'POST /v2/repository/index HTTP/1.1',
          `Host: ${hostname}`,
          'Content-Type: application/octet-stream',
          'Transfer-Encoding: chunked',
          'Connection: close',
        ]),
        body,
      ]),
    );
    const r = response(raw);
    expect(r.status).toBe(400);
    expect((JSON.parse(r.body.toString()) as { error: string }).error).toBe(
      'Chunked request body exceeds maximum of 65536 non-empty chunks. Send fewer or larger HTTP chunks.',
    );
  });

  it('a body chunk-encoded by the caller, sent with Content-Length too, is framed by its chunks (test_content_encoding_chunked_manually)', async () => {
    const input = Float32Array.from([0, 1, 2, 3, 4, 5, 6, 7]);
    const body = chunked(new Uint8Array(input.buffer), 1 << 20);
    const raw = await exchange(
      Buffer.concat([
        head([
          'POST /v2/models/identity_fp32/infer HTTP/1.1',
          `Host: ${hostname}`,
          'Inference-Header-Content-Length: 0',
          `Content-Length: ${body.byteLength}`,
          'Transfer-Encoding: chunked',
          'Connection: close',
        ]),
        body,
      ]),
    );
    const r = response(raw);
    expect(r.status).toBe(200);
    const decoded = decodeInferResponse(new Uint8Array(r.body), r.headers['inference-header-content-length']);
    expect(Array.from(decoded.outputs[0]?.data as Float32Array)).toEqual(Array.from(input));
  });

  it('the bytes of a gzip stream in chunks with Content-Encoding: gzip are decoded', async () => {
    const json = JSON.stringify({
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 3], data: [1.5, -2, 3] }],
    });
    const body = chunked(gzipSync(json), 5);
    const raw = await exchange(
      Buffer.concat([
        head([
          'POST /v2/models/identity_fp32/infer HTTP/1.1',
          `Host: ${hostname}`,
          'Content-Type: application/json',
          'Content-Encoding: gzip',
          'Transfer-Encoding: chunked',
          `Content-Length: ${body.byteLength}`,
          'Connection: close',
        ]),
        body,
      ]),
    );
    const r = response(raw);
    expect(r.status).toBe(200);
    const out = JSON.parse(r.body.toString()) as { outputs: { data: number[] }[] };
    expect(out.outputs[0]?.data).toEqual([1.5, -2, 3]);
  });
});
