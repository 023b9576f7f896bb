/**
 * Responses a gRPC client does not read are not kept forever (issue 23, item 1), as the HTTP front
 * end already guarantees (`http/response-writer.ts`). grpc-js hands each call's messages to its
 * HTTP/2 stream; data the client does not take (HTTP/2 flow control, a full socket) waits in those
 * streams. This guard watches every HTTP/2 connection of a grpc-js server:
 * - its unsent output is the sum of its streams' buffered bytes;
 * - a connection with output waiting whose client takes none of it for `--grpc-send-timeout-secs` is
 *   closed, which frees what it held and cancels its calls (the handlers see `cancelled`);
 * - while a connection's unsent output is over `--grpc-max-connection-output-bytes`, new unary calls
 *   on it are refused with RESOURCE_EXHAUSTED and its streams stop reading requests
 *   ({@link GrpcOutputGuard.overCap}).
 * Connections are found by peer address (`call.getPeer()`, grpc-js's `address:port`), the only
 * connection identity grpc-js gives a handler. Triton has neither limit; both are this project's.
 * @packageDocumentation
 */
import type { Http2Server, Http2Session, Http2Stream, Http2SecureServer } from 'node:http2';

/** Default time a connection with output waiting may go without its client taking any of it. */
export const DEFAULT_GRPC_SEND_TIMEOUT_MS = 60_000;
/** Default cap on one connection's unsent response bytes. */
export const DEFAULT_GRPC_MAX_CONNECTION_OUTPUT_BYTES = 64 * 1024 * 1024;

/** Why a connection was closed with output still unsent. */
export type GrpcConnectionCutCode = 'SEND_TIMEOUT';

/** A connection closed because its client did not take its responses (reported, never sent). */
export class GrpcConnectionCutError extends Error {
  /** Stable machine-readable reason. */
  readonly code: GrpcConnectionCutCode = 'SEND_TIMEOUT';
  /** Response bytes the connection still held when it was closed. */
  readonly unsentBytes: number;

  constructor(peer: string, unsentBytes: number, limitMs: number) {
    super(
      `gRPC connection ${peer} closed: its client took nothing for ${limitMs} ms with ${unsentBytes} response bytes waiting (--grpc-send-timeout-secs)`,
    );
    this.name = 'GrpcConnectionCutError';
    this.unsentBytes = unsentBytes;
  }
}

/** Options of {@link GrpcOutputGuard}. */
export interface GrpcOutputGuardOptions {
  /** Time (ms) a connection with output waiting may go without progress before it is closed. */
  readonly sendTimeoutMs: number;
  /** Unsent response bytes one connection may hold before its new calls are refused. */
  readonly maxConnectionOutputBytes: number;
  /** Told about each connection closed by the send timeout (for the log). */
  readonly onCut?: (error: GrpcConnectionCutError) => void;
}

/** One HTTP/2 connection and the streams it has open. */
interface Connection {
  readonly session: Http2Session;
  readonly peer: string;
  readonly streams: Set<Http2Stream>;
  /** Each open stream's buffered bytes at the last check (progress = a stream that went down). */
  readonly lastSeen: WeakMap<Http2Stream, number>;
  /** When a check last saw the client take something (or nothing waiting). */
  lastProgress: number;
  timer: NodeJS.Timeout | undefined;
}

/** The `address:port` key grpc-js's `getPeer()` gives calls of this session. */
function peerOf(session: Http2Session): string | undefined {
  const socket = session.socket as { remoteAddress?: string; remotePort?: number } | undefined;
  if (socket?.remoteAddress === undefined) return undefined;
  return socket.remotePort !== undefined
    ? `${socket.remoteAddress}:${socket.remotePort}`
    : socket.remoteAddress;
}

/** Watches the connections of one gRPC server (see the module comment). */
export class GrpcOutputGuard {
  readonly #options: GrpcOutputGuardOptions;
  readonly #byPeer = new Map<string, Connection>();
  readonly #checkMs: number;
  #cut = 0;

  constructor(options: GrpcOutputGuardOptions) {
    this.#options = options;
    this.#checkMs = Math.max(10, Math.min(1000, Math.floor(options.sendTimeoutMs / 4)));
  }

  /** Connections closed so far because their clients did not take their responses. */
  get connectionsCut(): number {
    return this.#cut;
  }

  /** Open connections watched. */
  get connections(): number {
    return this.#byPeer.size;
  }

  /** Response bytes waiting for their clients, over every connection. */
  get unsentBytes(): number {
    let total = 0;
    for (const connection of this.#byPeer.values()) total += this.#unsent(connection);
    return total;
  }

  /** Starts watching the sessions of `server` (one of grpc-js's HTTP/2 servers). */
  watch(server: Http2Server | Http2SecureServer): void {
    server.on('session', (session: Http2Session) => this.#track(session));
  }

  /** The unsent output of the connection of `peer` (`call.getPeer()`); 0 when unknown. */
  unsentFor(peer: string): number {
    const connection = this.#byPeer.get(peer);
    return connection === undefined ? 0 : this.#unsent(connection);
  }

  /** True while the connection of `peer` holds more unsent output than its cap. */
  overCap(peer: string): boolean {
    return this.unsentFor(peer) > this.#options.maxConnectionOutputBytes;
  }

  /** The error a unary call on a connection over its cap is refused with. */
  overCapMessage(peer: string): string {
    return `the connection's unread responses (${this.unsentFor(peer)} bytes) exceed the server's limit of ${this.#options.maxConnectionOutputBytes} bytes (--grpc-max-connection-output-bytes); read the responses already sent`;
  }

  #track(session: Http2Session): void {
    const peer = peerOf(session);
    if (peer === undefined) return;
    const connection: Connection = {
      session,
      peer,
      streams: new Set(),
      lastSeen: new WeakMap(),
      lastProgress: Date.now(),
      timer: undefined,
    };
    this.#byPeer.set(peer, connection);
    session.on('stream', (stream: Http2Stream) => {
      connection.streams.add(stream);
      stream.once('close', () => connection.streams.delete(stream));
      connection.timer ??= this.#startChecks(connection);
    });
    session.once('close', () => {
      clearInterval(connection.timer);
      connection.timer = undefined;
      connection.streams.clear();
      if (this.#byPeer.get(peer) === connection) this.#byPeer.delete(peer);
    });
  }

  #unsent(connection: Connection): number {
    let bytes = 0;
    for (const stream of connection.streams) bytes += stream.writableLength;
    return bytes;
  }

  /** Checks the connection every `#checkMs` while it has streams open. */
  #startChecks(connection: Connection): NodeJS.Timeout {
    connection.lastProgress = Date.now();
    return setInterval(() => this.#check(connection), this.#checkMs).unref();
  }

  #check(connection: Connection): void {
    const now = Date.now();
    if (connection.streams.size === 0) {
      clearInterval(connection.timer);
      connection.timer = undefined;
      return;
    }
    let waiting = 0;
    let progress = false;
    for (const stream of connection.streams) {
      const bytes = stream.writableLength;
      const before = connection.lastSeen.get(stream);
      // A stream whose buffered output went down: the client took some of it.
      if (before !== undefined && bytes < before) progress = true;
      connection.lastSeen.set(stream, bytes);
      waiting += bytes;
    }
    if (waiting === 0 || progress) {
      connection.lastProgress = now;
      return;
    }
    if (now - connection.lastProgress < this.#options.sendTimeoutMs) return;
    this.#cut++;
    clearInterval(connection.timer);
    connection.timer = undefined;
    this.#options.onCut?.(new GrpcConnectionCutError(connection.peer, waiting, this.#options.sendTimeoutMs));
    // Its output goes with the connection; grpc-js cancels its calls.
    connection.session.destroy();
  }
}
