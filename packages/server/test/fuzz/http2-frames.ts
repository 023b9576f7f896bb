/**
 * HTTP/2 on a raw socket for the gRPC fuzzer: frames built byte by byte (RFC 9113 §4.1; header
 * blocks as HPACK literals without indexing or Huffman, RFC 7541 §6.2.2) so any of them can be
 * wrong, gRPC's 5-byte message prefix, and a connection that reads the server's frames (type,
 * flags, stream) and can stop reading to let the server's replies pile up.
 */
import { connect, type Socket } from 'node:net';

/** The client connection preface. */
export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** Frame types (RFC 9113 §6). */
export const FrameType = {
  DATA: 0,
  HEADERS: 1,
  PRIORITY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PUSH_PROMISE: 5,
  PING: 6,
  GOAWAY: 7,
  WINDOW_UPDATE: 8,
  CONTINUATION: 9,
} as const;

/** Frame flags. */
export const Flag = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

/** A frame; `length` overrides the declared payload length (a lie about the size). */
export function frame(
  type: number,
  flags: number,
  streamId: number,
  payload: Uint8Array = Buffer.alloc(0),
  length = payload.length,
): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(length & 0xffffff, 0, 3);
  head[3] = type & 0xff;
  head[4] = flags & 0xff;
  head.writeUInt32BE(streamId >>> 0, 5);
  return Buffer.concat([head, payload]);
}

/** A SETTINGS frame with these (identifier, value) pairs. */
export function settings(entries: readonly (readonly [number, number])[] = [], ack = false): Buffer {
  const payload = Buffer.alloc(entries.length * 6);
  entries.forEach(([id, value], i) => {
    payload.writeUInt16BE(id & 0xffff, i * 6);
    payload.writeUInt32BE(value >>> 0, i * 6 + 2);
  });
  return frame(FrameType.SETTINGS, ack ? Flag.ACK : 0, 0, payload);
}

/** A WINDOW_UPDATE frame. */
export function windowUpdate(streamId: number, increment: number): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(increment >>> 0);
  return frame(FrameType.WINDOW_UPDATE, 0, streamId, payload);
}

/** An RST_STREAM frame (default CANCEL). */
export function rstStream(streamId: number, code = 8): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(code >>> 0);
  return frame(FrameType.RST_STREAM, 0, streamId, payload);
}

/** A PING frame. */
export function ping(data: Uint8Array = Buffer.alloc(8), ack = false, streamId = 0): Buffer {
  return frame(FrameType.PING, ack ? Flag.ACK : 0, streamId, data);
}

/** An HPACK integer with an `n`-bit prefix (RFC 7541 §5.1), the prefix's high bits in `first`. */
function hpackInt(value: number, n: number, first = 0): Buffer {
  const max = (1 << n) - 1;
  if (value < max) return Buffer.from([first | value]);
  const out = [first | max];
  let v = value - max;
  while (v >= 128) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Buffer.from(out);
}

/** A header block: each header a literal without indexing, new name, no Huffman. */
export function headerBlock(headers: readonly (readonly [string, string])[]): Buffer {
  return Buffer.concat(
    headers.flatMap(([name, value]) => {
      const n = Buffer.from(name, 'latin1');
      const v = Buffer.from(value, 'latin1');
      return [Buffer.from([0x00]), hpackInt(n.length, 7), n, hpackInt(v.length, 7), v];
    }),
  );
}

/** The request headers of a gRPC call to `path`, with `extra` ones after them. */
export function grpcHeaders(
  path: string,
  extra: readonly (readonly [string, string])[] = [],
): [string, string][] {
  return [
    [':method', 'POST'],
    [':scheme', 'http'],
    [':path', path],
    [':authority', 'localhost'],
    ['content-type', 'application/grpc'],
    ['te', 'trailers'],
    ...extra.map(([n, v]): [string, string] => [n, v]),
  ];
}

/** A HEADERS frame (END_HEADERS) carrying `headers`. */
export function headersFrame(
  streamId: number,
  headers: readonly (readonly [string, string])[],
  endStream = false,
): Buffer {
  return frame(
    FrameType.HEADERS,
    Flag.END_HEADERS | (endStream ? Flag.END_STREAM : 0),
    streamId,
    headerBlock(headers),
  );
}

/** A gRPC length-prefixed message; `declared` overrides the length, `flag` the compressed flag. */
export function grpcMessage(message: Uint8Array, options: { declared?: number; flag?: number } = {}): Buffer {
  const prefix = Buffer.alloc(5);
  prefix[0] = options.flag ?? 0;
  prefix.writeUInt32BE((options.declared ?? message.length) >>> 0, 1);
  return Buffer.concat([prefix, message]);
}

/** A DATA frame. */
export function dataFrame(streamId: number, payload: Uint8Array, endStream = false): Buffer {
  return frame(FrameType.DATA, endStream ? Flag.END_STREAM : 0, streamId, payload);
}

/** A frame received from the server (its header; the payload only for small frames). */
export interface ReceivedFrame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Buffer;
}

/** A raw HTTP/2 connection to the server. */
export class RawConnection {
  readonly socket: Socket;
  readonly frames: ReceivedFrame[] = [];
  /** Resolves when the socket has closed. */
  readonly closed: Promise<void>;
  /** True once the server sent GOAWAY. */
  goaway = false;
  #buffered: Buffer = Buffer.alloc(0);
  #waiters: (() => void)[] = [];
  #isClosed = false;

  /**
   * Connects to `port`. With `ackSettings` the server's SETTINGS are acknowledged as a client must;
   * without it they are not (a peer that ignores them).
   */
  constructor(
    port: number,
    readonly ackSettings = true,
  ) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.setNoDelay(true);
    this.socket.on('error', () => undefined);
    this.socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    this.closed = new Promise((resolve) =>
      this.socket.once('close', () => {
        this.#isClosed = true;
        this.#wake();
        resolve();
      }),
    );
  }

  /** Whether the socket has closed. */
  get isClosed(): boolean {
    return this.#isClosed;
  }

  #wake(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }

  #onData(chunk: Buffer): void {
    this.#buffered = this.#buffered.length === 0 ? chunk : Buffer.concat([this.#buffered, chunk]);
    while (this.#buffered.length >= 9) {
      const length = this.#buffered.readUIntBE(0, 3);
      if (this.#buffered.length < 9 + length) break;
      const f: ReceivedFrame = {
        type: this.#buffered[3] ?? 0,
        flags: this.#buffered[4] ?? 0,
        streamId: this.#buffered.readUInt32BE(5) & 0x7fffffff,
        payload: length <= 256 ? Buffer.from(this.#buffered.subarray(9, 9 + length)) : Buffer.alloc(0),
      };
      this.#buffered = this.#buffered.subarray(9 + length);
      if (this.frames.length < 10_000) this.frames.push(f);
      if (f.type === FrameType.GOAWAY) this.goaway = true;
      if (
        f.type === FrameType.SETTINGS &&
        (f.flags & Flag.ACK) === 0 &&
        this.ackSettings &&
        !this.socket.destroyed
      ) {
        this.socket.write(settings([], true));
      }
    }
    this.#wake();
  }

  /** Writes `bytes` (ignored once the socket is gone). Resolves when flushed or the socket ended. */
  write(bytes: Uint8Array): Promise<void> {
    if (this.socket.destroyed || this.socket.writableEnded) return Promise.resolve();
    return new Promise((resolve) => {
      const ok = this.socket.write(bytes, () => resolve());
      if (!ok) this.socket.once('close', () => resolve());
    });
  }

  /** Stops reading: the server's replies pile up in its buffers (a peer that does not read). */
  stopReading(): void {
    this.socket.pause();
  }

  /**
   * Waits until `done` holds for the received frames, the socket closes, or `timeoutMs` passes.
   * Resolves true when `done` held.
   */
  async waitFor(done: (frames: readonly ReceivedFrame[]) => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (done(this.frames)) return true;
      if (this.#isClosed) return false;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Whether the server ended `streamId`: trailers (HEADERS with END_STREAM) or RST_STREAM. */
  streamEnded(streamId: number): boolean {
    return this.frames.some(
      (f) =>
        f.streamId === streamId &&
        (f.type === FrameType.RST_STREAM ||
          (f.type === FrameType.HEADERS && (f.flags & Flag.END_STREAM) !== 0)),
    );
  }

  /** Closes the socket at once. */
  destroy(): void {
    this.socket.destroy();
  }
}
