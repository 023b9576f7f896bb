/**
 * Response bodies a client does not read are not kept forever (issue 14, item 5). Bodies are written
 * with backpressure (in slices, the next one after `'drain'`); each connection's unsent output is
 * counted, and a connection is closed — which frees what it held — when its client takes nothing for
 * `--http-send-timeout-secs` while output is waiting, or when responses it has not read pile up past
 * `--http-max-connection-output-bytes`. A client that reads, however slowly, makes progress and
 * keeps its connection; one response larger than the cap is still sent when nothing else is waiting.
 * Triton has neither limit; both are this project's.
 * @packageDocumentation
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Default time a connection with output waiting may go without its client taking any of it. */
export const DEFAULT_SEND_TIMEOUT_MS = 60_000;
/** Default cap on one connection's unsent response bytes (beyond a single response). */
export const DEFAULT_MAX_CONNECTION_OUTPUT_BYTES = 64 * 1024 * 1024;
/**
 * Bodies up to this size are written in one call; larger ones in slices of this size, each after the
 * previous one has been taken by the kernel, which is what shows a slow client's progress.
 */
export const RESPONSE_SLICE_BYTES = 256 * 1024;

/** Why a connection was closed with output still unsent. */
export type ConnectionCutCode = 'SEND_TIMEOUT' | 'CONNECTION_OUTPUT_LIMIT';

/** A connection closed because its client did not take its responses (reported, never sent). */
export class ConnectionCutError extends Error {
  /** Stable machine-readable reason. */
  readonly code: ConnectionCutCode;
  /** Response bytes the connection still held when it was closed. */
  readonly unsentBytes: number;

  constructor(code: ConnectionCutCode, unsentBytes: number, limit: number) {
    super(
      code === 'SEND_TIMEOUT'
        ? `connection closed: its client took nothing for ${limit} ms with ${unsentBytes} response bytes waiting (--http-send-timeout-secs)`
        : `connection closed: ${unsentBytes} response bytes would wait unread, over the limit of ${limit} (--http-max-connection-output-bytes)`,
    );
    this.name = 'ConnectionCutError';
    this.code = code;
    this.unsentBytes = unsentBytes;
  }
}

/** Options of {@link ResponseWriter}. */
export interface ResponseWriterOptions {
  /** Time (ms) a connection with output waiting may go without progress before it is closed. */
  readonly sendTimeoutMs: number;
  /** Unsent response bytes one connection may hold beyond a single response. */
  readonly maxConnectionOutputBytes: number;
  /** Told about each connection closed by these limits (for the log). */
  readonly onCut?: (error: ConnectionCutError) => void;
}

/** One connection's output still to be taken by its client. */
interface ConnectionOutput {
  bytes: number;
  timer: NodeJS.Timeout | undefined;
}

/** Writes response bodies within the send limits; one per HTTP server. */
export class ResponseWriter {
  readonly #options: ResponseWriterOptions;
  readonly #connections = new WeakMap<Socket, ConnectionOutput>();
  #cut = 0;
  #unsent = 0;

  constructor(options: ResponseWriterOptions) {
    this.#options = options;
  }

  /** Connections closed so far because their clients did not take their responses. */
  get connectionsCut(): number {
    return this.#cut;
  }

  /** Response bytes handed to connections and not yet taken by their clients, over all connections. */
  get unsentBytes(): number {
    return this.#unsent;
  }

  /**
   * Sends `body` as the rest of `res` (status and headers already written) on `socket`, the
   * request's connection (`res.socket` is not set yet for a pipelined response that waits its turn).
   */
  write(socket: Socket, res: ServerResponse, body: Uint8Array | string): void {
    if (res.destroyed || socket.destroyed) return;
    const size = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    const connection = this.#connection(socket);
    if (connection.bytes > 0 && connection.bytes + size > this.#options.maxConnectionOutputBytes) {
      // Earlier responses still wait for this client: it sends requests faster than it reads.
      this.#cutOff(socket, connection, 'CONNECTION_OUTPUT_LIMIT', connection.bytes + size);
      return;
    }
    if (size <= RESPONSE_SLICE_BYTES) {
      res.end(body);
      // Written through at once (the usual case for a small body on a connection that keeps up):
      // nothing is held, so no accounting, timer or listeners for it.
      if (res.writableLength === 0) return;
      this.#holdUntilSent(socket, res, connection, size);
      return;
    }
    this.#holdUntilSent(socket, res, connection, size);
    const bytes =
      typeof body === 'string'
        ? Buffer.from(body)
        : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    let offset = 0;
    const pump = (): void => {
      while (!res.destroyed) {
        const end = Math.min(offset + RESPONSE_SLICE_BYTES, bytes.byteLength);
        const slice = bytes.subarray(offset, end);
        offset = end;
        if (offset === bytes.byteLength) {
          res.end(slice);
          return;
        }
        if (!res.write(slice)) {
          res.once('drain', pump);
          return;
        }
      }
    };
    res.once('close', () => res.off('drain', pump));
    pump();
  }

  /**
   * Opens a streamed body on `res` (status and headers already written; no `Content-Length`), for
   * Server-Sent Events: each chunk pushed counts as unsent output of the connection until the socket
   * has taken it, so a client that does not read is held to the same limits as for a whole body —
   * closed after `--http-send-timeout-secs` without progress, or as soon as a chunk would make its
   * waiting output exceed `--http-max-connection-output-bytes`. Chunks are written in order, the
   * next one after `'drain'`.
   */
  openStream(socket: Socket, res: ServerResponse): ResponseStream {
    return new ResponseStream(res, {
      connection: this.#connection(socket),
      admit: (connection, size) => {
        if (socket.destroyed || res.destroyed) return false;
        if (connection.bytes > 0 && connection.bytes + size > this.#options.maxConnectionOutputBytes) {
          this.#cutOff(socket, connection, 'CONNECTION_OUTPUT_LIMIT', connection.bytes + size);
          return false;
        }
        this.#hold(socket, connection, size);
        return true;
      },
      release: (connection, size) => this.#release(connection, size),
    });
  }

  /** Counts `size` bytes of `res` as unsent on `connection` until the response finishes or closes. */
  #holdUntilSent(socket: Socket, res: ServerResponse, connection: ConnectionOutput, size: number): void {
    this.#hold(socket, connection, size);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.#release(connection, size);
    };
    res.once('finish', release);
    res.once('close', release);
  }

  #connection(socket: Socket): ConnectionOutput {
    let connection = this.#connections.get(socket);
    if (connection !== undefined) return connection;
    const created: ConnectionOutput = { bytes: 0, timer: undefined };
    this.#connections.set(socket, created);
    // Whatever the kernel takes off the socket's queue is progress: the client is reading.
    socket.on('drain', () => created.timer?.refresh());
    socket.once('close', () => {
      clearTimeout(created.timer);
      created.timer = undefined;
      this.#unsent -= created.bytes;
      created.bytes = 0;
    });
    connection = created;
    return connection;
  }

  #hold(socket: Socket, connection: ConnectionOutput, size: number): void {
    connection.bytes += size;
    this.#unsent += size;
    connection.timer ??= setTimeout(() => {
      this.#cutOff(socket, connection, 'SEND_TIMEOUT', connection.bytes);
    }, this.#options.sendTimeoutMs).unref();
  }

  #release(connection: ConnectionOutput, size: number): void {
    // After a close the socket's own handler has already zeroed the connection.
    if (connection.bytes === 0) return;
    connection.bytes -= size;
    this.#unsent -= size;
    if (connection.bytes > 0) {
      connection.timer?.refresh(); // a response was delivered: progress
      return;
    }
    clearTimeout(connection.timer);
    connection.timer = undefined;
  }

  #cutOff(socket: Socket, connection: ConnectionOutput, code: ConnectionCutCode, unsent: number): void {
    clearTimeout(connection.timer);
    connection.timer = undefined;
    if (socket.destroyed) return;
    this.#cut++;
    const limit =
      code === 'SEND_TIMEOUT' ? this.#options.sendTimeoutMs : this.#options.maxConnectionOutputBytes;
    this.#options.onCut?.(new ConnectionCutError(code, unsent, limit));
    // Its output goes with the connection.
    this.#unsent -= connection.bytes;
    connection.bytes = 0;
    socket.destroy();
  }
}

/** How a {@link ResponseStream} accounts its chunks (absent: no limits). */
interface StreamAccounting {
  readonly connection: ConnectionOutput;
  /** Counts a chunk as unsent; false when the connection is gone or was cut for it. */
  readonly admit: (connection: ConnectionOutput, size: number) => boolean;
  readonly release: (connection: ConnectionOutput, size: number) => void;
}

/**
 * One response body written as it is produced (see {@link ResponseWriter.openStream}); without a
 * writer ({@link ResponseStream.unlimited}) the same backpressure, without the limits.
 */
export class ResponseStream {
  readonly #res: ServerResponse;
  readonly #accounting: StreamAccounting | undefined;
  readonly #queue: { chunk: string; size: number }[] = [];
  /** Bytes pushed and not yet taken by the socket (queued, or written and waiting for 'drain'). */
  #held = 0;
  #waiting = false;
  #ending = false;
  #gone = false;

  constructor(res: ServerResponse, accounting?: StreamAccounting) {
    this.#res = res;
    this.#accounting = accounting;
    res.once('close', () => {
      this.#gone = true;
      this.#queue.length = 0;
      this.#releaseBytes(this.#held);
    });
  }

  /** A stream on `res` with backpressure but no send limits (a front end without a writer). */
  static unlimited(res: ServerResponse): ResponseStream {
    return new ResponseStream(res);
  }

  /** False once the response can take nothing more (its connection closed or was cut). */
  get open(): boolean {
    return !this.#gone && !this.#res.destroyed;
  }

  /** Calls `listener` once the response closed (at once when it already has). */
  onClose(listener: () => void): void {
    if (this.#gone || this.#res.destroyed) listener();
    else this.#res.once('close', listener);
  }

  /** Queues `chunk`; false (nothing queued) once the connection is gone or a limit cut it. */
  push(chunk: string): boolean {
    if (!this.open || this.#ending) return false;
    const size = Buffer.byteLength(chunk);
    const a = this.#accounting;
    if (a !== undefined && !a.admit(a.connection, size)) return false;
    this.#held += size;
    this.#queue.push({ chunk, size });
    this.#pump();
    return true;
  }

  /** Ends the body after the queued chunks; resolves once the response finished or closed. */
  end(): Promise<void> {
    this.#ending = true;
    const res = this.#res;
    const done = new Promise<void>((resolve) => {
      if (res.writableFinished || res.destroyed) resolve();
      else {
        res.once('finish', () => resolve());
        res.once('close', () => resolve());
      }
    });
    this.#pump();
    return done;
  }

  #pump(): void {
    const res = this.#res;
    while (!this.#waiting && this.open) {
      const next = this.#queue.shift();
      if (next === undefined) {
        if (this.#ending && !res.writableEnded) res.end();
        return;
      }
      if (res.write(next.chunk)) {
        this.#releaseBytes(next.size);
        continue;
      }
      this.#waiting = true;
      res.once('drain', () => {
        this.#waiting = false;
        this.#releaseBytes(next.size);
        this.#pump();
      });
    }
  }

  #releaseBytes(size: number): void {
    const n = Math.min(size, this.#held);
    if (n <= 0) return;
    this.#held -= n;
    const a = this.#accounting;
    if (a !== undefined) a.release(a.connection, n);
  }
}
