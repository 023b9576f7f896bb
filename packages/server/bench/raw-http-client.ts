/**
 * Bench helper: a minimal HTTP/1.1 keep-alive client over one `net` socket, for the load generator
 * (`load.ts`, `BENCH_LOAD=raw`, the default). The request bytes are written as they were built once
 * (no per-request header objects), and the response is framed by its `Content-Length` (a reply without one fails the request) without building a
 * response object. On a 2-core host the load generator
 * shares the cores with the server it measures: `node:http`'s client spends about as much CPU per
 * request as a small server request costs, which caps what any server can show; this one spends a
 * fraction of it, closer to a load generator on another machine.
 *
 * It is a measuring tool, not a general client: one request at a time per connection, answers
 * read to their end and counted by status; a connection the server closes is reopened for the next
 * request.
 */
import net from 'node:net';

const HEADER_END = Buffer.from('\r\n\r\n');

/** What one request resolves with. */
export interface RawReply {
  readonly status: number;
  readonly bodyBytes: number;
}

/** One keep-alive connection; {@link RawHttpConnection.request} one request at a time. */
export class RawHttpConnection {
  #socket: net.Socket | undefined;
  #pending: { resolve: (r: RawReply) => void; reject: (e: Error) => void } | undefined;
  #buffered: Buffer | undefined;
  #status = 0;
  /** Bytes of body still expected; -1 while the header is incomplete. */
  #bodyLeft = -1;
  #bodyBytes = 0;
  #closeAfter = false;

  constructor(
    readonly port: number,
    readonly host = '127.0.0.1',
  ) {}

  /** Sends `parts` (request line, headers and body, already encoded) and reads the reply. */
  request(parts: readonly Buffer[]): Promise<RawReply> {
    if (this.#pending !== undefined) return Promise.reject(new Error('one request at a time'));
    const socket = this.#socket ?? this.#connect();
    return new Promise<RawReply>((resolve, reject) => {
      this.#pending = { resolve, reject };
      this.#bodyLeft = -1;
      this.#bodyBytes = 0;
      this.#closeAfter = false;
      if (parts.length === 1) socket.write(parts[0] as Buffer);
      else {
        socket.cork();
        for (const p of parts) socket.write(p);
        socket.uncork();
      }
    });
  }

  close(): void {
    this.#socket?.destroy();
    this.#socket = undefined;
  }

  #connect(): net.Socket {
    const socket = net.connect(this.port, this.host);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      if (this.#socket === socket) this.#onData(chunk);
    });
    const fail = (error: Error): void => {
      // A socket this connection already let go (closed after a reply) concerns no request.
      if (this.#socket !== socket) return;
      this.#socket = undefined;
      this.#buffered = undefined;
      const p = this.#pending;
      this.#pending = undefined;
      p?.reject(error);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed')));
    this.#socket = socket;
    return socket;
  }

  #onData(chunk: Buffer): void {
    let data = this.#buffered === undefined ? chunk : Buffer.concat([this.#buffered, chunk]);
    this.#buffered = undefined;
    if (this.#bodyLeft < 0) {
      const end = data.indexOf(HEADER_END);
      if (end < 0) {
        this.#buffered = data;
        return;
      }
      const head = data.toString('latin1', 0, end);
      this.#status = Number(head.slice(9, 12));
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      if (length === null) {
        // Every reply of the servers it measures has a length; anything else is a failed request.
        this.close();
        this.#pending?.reject(new Error('reply without Content-Length'));
        this.#pending = undefined;
        return;
      }
      this.#closeAfter = /\r\nconnection:\s*close/i.test(head);
      this.#bodyLeft = Number(length[1]);
      data = data.subarray(end + 4);
    }
    const take = Math.min(this.#bodyLeft, data.length);
    this.#bodyLeft -= take;
    this.#bodyBytes += take;
    if (this.#bodyLeft > 0) return;
    if (data.length > take) this.#buffered = data.subarray(take);
    this.#finish();
  }

  #finish(): void {
    const p = this.#pending;
    this.#pending = undefined;
    if (this.#closeAfter) this.close();
    p?.resolve({ status: this.#status, bodyBytes: this.#bodyBytes });
  }
}

/**
 * The request bytes of a binary-extension infer POST: one buffer for a small body, the header
 * block and the body for a large one (written corked, no copy).
 */
export function encodeInferPost(
  port: number,
  path: string,
  body: Buffer,
  headerLength: number,
): readonly Buffer[] {
  const head = Buffer.from(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/octet-stream\r\n` +
      `Content-Length: ${body.byteLength}\r\nInference-Header-Content-Length: ${headerLength}\r\n\r\n`,
    'latin1',
  );
  return body.byteLength < 64 * 1024 ? [Buffer.concat([head, body])] : [head, body];
}
