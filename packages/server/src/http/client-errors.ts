/**
 * Requests node:http cannot parse (its `clientError` event), answered as node:http answers them,
 * with one exception: a request with both `Content-Length` and `Transfer-Encoding: chunked`. A caller
 * that chunk-encodes a body itself and sends it with a library that also counts the bytes (Triton's
 * `test_content_encoding_chunked_manually`) sends both; node:http refuses that (400, a guard against
 * request smuggling), while Triton, as RFC 9112 §6.3 says, lets the chunked encoding frame the body.
 *
 * Such a request is served here too, on its own: the `Content-Length` is dropped and the request is
 * parsed again from its first byte on a connection ({@link SingleRequestConnection}) that serves it
 * and nothing after it, then closes (`Connection: close`). So bytes that a proxy in front framed
 * differently can never become a second request. The rest of the connection's data is taken from the
 * socket as it arrives (node:http's own parser, left in its error state, no longer reads it).
 * @packageDocumentation
 */
import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';

/** What node:http passes with `clientError` (`code`, `reason`, `rawPacket` are documented there). */
interface ClientError extends Error {
  readonly code?: string;
  readonly reason?: string;
  /** The bytes being parsed when the error was found. */
  readonly rawPacket?: Buffer;
  /** How far into `rawPacket` the parser got. */
  readonly bytesParsed?: number;
}

/** llhttp's reasons for a request with both framings (which one depends on the header order). */
const BOTH_FRAMINGS = new Set([
  "Transfer-Encoding can't be present with Content-Length",
  "Content-Length can't be present with Transfer-Encoding",
]);

/** node:http's answer to a request it cannot parse (the same bytes it writes). */
function nodeAnswer(code: string | undefined): string {
  const status =
    code === 'HPE_HEADER_OVERFLOW'
      ? 431
      : code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW'
        ? 413
        : code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? 408
          : 400;
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\n\r\n`;
}

/** An HTTP/1.1 request line (a token method, a target). */
const REQUEST_LINE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+ [^ \r\n]+ HTTP\/1\.1$/;

/**
 * The request again, framed by its chunked encoding alone: the header block without `Content-Length`
 * and `Connection` lines, plus `Connection: close`, followed by whatever of the body came with it.
 * `undefined` when the header block of the request that failed (at `errorAt`) is not the first thing
 * in `packet` (it was split across reads, or an earlier request shares the packet), or it is not an
 * HTTP/1.1 request whose last transfer coding is `chunked`: those get node:http's 400.
 */
export function reframe(packet: Buffer, errorAt: number): Buffer | undefined {
  const end = packet.indexOf('\r\n\r\n');
  if (end < 0 || errorAt > end + 4) return undefined;
  const lines = packet.toString('latin1', 0, end).split('\r\n');
  if (!REQUEST_LINE.test(lines[0] ?? '')) return undefined;
  const kept = [lines[0] as string];
  let chunked = false;
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (name === 'content-length' || name === 'connection') continue;
    if (name === 'transfer-encoding') chunked = /(?:^|,)\s*chunked\s*$/i.test(line.slice(colon + 1));
    kept.push(line);
  }
  if (!chunked) return undefined;
  kept.push('Connection: close', '', '');
  return Buffer.concat([Buffer.from(kept.join('\r\n'), 'latin1'), packet.subarray(end + 4)]);
}

/**
 * A connection that carries one reframed request to node:http (`server.emit('connection', …)`): it
 * reads the reframed bytes, then the socket's data; what node:http writes goes to the socket, which
 * is closed once node:http ends the connection. Only its first request is served (see the listener).
 */
export class SingleRequestConnection extends Duplex {
  readonly #socket: Socket;

  constructor(socket: Socket, first: Buffer) {
    super();
    this.#socket = socket;
    this.push(first);
    // A 'data' listener makes node:http stop feeding the socket to its (failed) parser.
    socket.on('data', (chunk: Buffer) => {
      if (!this.push(chunk)) socket.pause();
    });
    socket.on('end', () => this.push(null));
    socket.on('close', () => this.destroy());
  }

  /** The client's address, as on the socket. */
  get remoteAddress(): string | undefined {
    return this.#socket.remoteAddress;
  }

  /** The client's port, as on the socket. */
  get remotePort(): number | undefined {
    return this.#socket.remotePort;
  }

  override _read(): void {
    this.#socket.resume();
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#socket.write(chunk, encoding, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#socket.end(() => this.#socket.destroy());
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#socket.destroy();
    callback(error);
  }
}

/**
 * Answers `server`'s parse errors: a request with both framings is served on a
 * {@link SingleRequestConnection} when no other request is in flight on its connection
 * (`requestsInFlight`: its answer then comes after theirs); every other error gets node:http's
 * answer and the connection is closed.
 */
export function answerClientErrors(server: Server, requestsInFlight: (socket: Duplex) => number): void {
  const taken = new WeakSet<Duplex>();
  server.on('clientError', (error: ClientError, socket: Duplex) => {
    // node:http's parser stays on a taken socket and fails again on each later chunk: ignored.
    if (taken.has(socket)) return;
    // Bytes after the reframed request (llhttp: data after `Connection: close`) are no request:
    // dropped, while the request's answer goes out and the connection closes.
    if (socket instanceof SingleRequestConnection && error.code === 'HPE_CLOSED_CONNECTION') return;
    if (
      requestsInFlight(socket) === 0 &&
      error.reason !== undefined &&
      BOTH_FRAMINGS.has(error.reason) &&
      error.rawPacket !== undefined &&
      !(socket instanceof SingleRequestConnection)
    ) {
      const first = reframe(error.rawPacket, error.bytesParsed ?? error.rawPacket.byteLength);
      if (first !== undefined) {
        taken.add(socket);
        server.emit('connection', new SingleRequestConnection(socket as Socket, first));
        return;
      }
    }
    // As node:http: answered unless a response has started on the connection (its bytes are still
    // queued: ours would cut into it).
    if (socket.writable && socket.writableLength === 0) socket.write(nodeAnswer(error.code));
    socket.destroy();
  });
}
