/**
 * One HTTP request/response over undici's `dispatch`, the response read whole into memory.
 * This is what `Pool.request()` plus reading its body does, without the per-request `Readable`,
 * async iterator, `AbortSignal` listener and `AsyncResource` that the streaming API costs.
 * @packageDocumentation
 */
import type { Dispatcher } from 'undici';
import type { InferTimer } from '../infer-stat.js';
import type { Cancellation, CancellationListener } from '../transport.js';

/** A raw HTTP response. */
export interface HttpResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Uint8Array;
}

/** What {@link exchange} sends. */
interface ExchangeRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The body: one buffer or string, or parts written in order without joining them (then `headers`
   * must carry their total as `content-length`, or undici would send them chunked). undici writes
   * the parts to the socket as they are, so their memory must not change until the exchange
   * settles; an array can be sent again by a later exchange.
   */
  readonly body: Uint8Array | string | readonly Uint8Array[] | null;
  /**
   * A response header (lower-case) whose integer value is an offset into the body that should
   * fall on an 8-byte boundary of the returned body's memory: an infer response's
   * `inference-header-content-length`, so that its binary outputs can be viewed in place instead
   * of copied one by one. Only applied to an uncompressed body of known length.
   */
  readonly alignAt?: string;
}

/** Bodies up to this size are read into one buffer sized from `content-length`. */
const PREALLOCATE_LIMIT = 64 * 1024 * 1024;

/**
 * Response headers as undici's `request()` gives them: names lower-cased, values latin1, a
 * repeated header as an array of its values.
 */
function parseRawHeaders(raw: readonly Buffer[]): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as Buffer).toString('latin1').toLowerCase();
    const value = (raw[i + 1] as Buffer).toString('latin1');
    const seen = Object.hasOwn(headers, name) ? headers[name] : undefined;
    if (seen === undefined) {
      if (name === '__proto__') {
        Object.defineProperty(headers, name, { value, enumerable: true, configurable: true, writable: true });
      } else {
        headers[name] = value;
      }
    } else if (typeof seen === 'string') headers[name] = [seen, value];
    else seen.push(value);
  }
  return headers;
}

/** One header's value from raw headers (repeated values joined with `, `), or `undefined`. */
function rawHeader(raw: readonly Buffer[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i] as Buffer;
    if (key.length !== name.length || key.toString('latin1').toLowerCase() !== name) continue;
    const v = (raw[i + 1] as Buffer).toString('latin1');
    value = value === undefined ? v : `${value}, ${v}`;
  }
  return value;
}

/**
 * The values of a few headers (lower-case names, repeated values joined with `, `), found in one
 * pass over the raw headers; the others are not decoded.
 */
class ScannedHeaders {
  readonly names: readonly string[];
  readonly values: (string | undefined)[];

  constructor(raw: readonly Buffer[], names: readonly string[]) {
    this.names = names;
    const values: (string | undefined)[] = names.map(() => undefined);
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const key = raw[i] as Buffer;
      let lower: string | undefined;
      for (let n = 0; n < names.length; n++) {
        const name = names[n] as string;
        if (key.length !== name.length) continue;
        lower ??= key.toString('latin1').toLowerCase();
        if (lower !== name) continue;
        const v = (raw[i + 1] as Buffer).toString('latin1');
        const seen = values[n];
        values[n] = seen === undefined ? v : `${seen}, ${v}`;
        break;
      }
    }
    this.values = values;
  }

  /** The value of `name` when it is one of the scanned names (`null` when it is not). */
  get(name: string): string | undefined | null {
    const n = this.names.indexOf(name);
    return n < 0 ? null : this.values[n];
  }

  /** A scanned value as a non-negative integer, or `undefined`. */
  integer(name: string): number | undefined {
    const text = this.get(name);
    if (typeof text !== 'string' || !/^\s*\d{1,15}\s*$/.test(text)) return undefined;
    return Number(text);
  }
}

/** A received response; its headers object is made on first use. */
export class ReceivedResponse implements HttpResponse {
  readonly status: number;
  readonly body: Uint8Array;
  readonly #raw: readonly Buffer[];
  readonly #scanned: ScannedHeaders | undefined;
  #headers: Record<string, string | string[]> | undefined;

  constructor(status: number, raw: readonly Buffer[], body: Uint8Array, scanned?: ScannedHeaders) {
    this.status = status;
    this.#raw = raw;
    this.body = body;
    this.#scanned = scanned;
  }

  get headers(): Readonly<Record<string, string | string[]>> {
    return (this.#headers ??= parseRawHeaders(this.#raw));
  }

  /** One header's value (lower-case name; repeated values joined with `, `), or `undefined`. */
  header(name: string): string | undefined {
    const scanned = this.#scanned?.get(name);
    return scanned === null ? rawHeader(this.#raw, name) : scanned;
  }
}

const BODY_HEADERS: readonly string[] = ['content-length', 'content-encoding'];
/** The headers scanned for an `alignAt` header name, by that name. */
const scanNames = new Map<string, readonly string[]>();

function namesFor(alignAt: string | undefined): readonly string[] {
  if (alignAt === undefined) return BODY_HEADERS;
  let names = scanNames.get(alignAt);
  if (names === undefined) {
    names = [...BODY_HEADERS, alignAt];
    if (scanNames.size >= 16) scanNames.clear();
    scanNames.set(alignAt, names);
  }
  return names;
}

/** The undici handler of one exchange (legacy handler API, the one undici's core calls directly). */
class Exchange implements Dispatcher.DispatchHandler, CancellationListener {
  readonly #resolve: (response: ReceivedResponse) => void;
  readonly #reject: (error: unknown) => void;
  readonly #cancellation: Cancellation;
  readonly #timer: InferTimer | undefined;
  readonly #alignAt: string | undefined;
  #abort: ((error?: Error) => void) | undefined;
  #status = 0;
  #rawHeaders: Buffer[] = [];
  #scanned: ScannedHeaders | undefined;
  /** The body so far: in `#buffer` from `#start` when its length was known, else in `#chunks`. */
  #buffer: Buffer | undefined;
  #start = 0;
  #chunks: Buffer[] | undefined;
  #size = 0;

  constructor(
    resolve: (response: ReceivedResponse) => void,
    reject: (error: unknown) => void,
    cancellation: Cancellation,
    timer: InferTimer | undefined,
    alignAt: string | undefined,
  ) {
    this.#resolve = resolve;
    this.#reject = reject;
    this.#cancellation = cancellation;
    this.#timer = timer;
    this.#alignAt = alignAt;
  }

  onCallAbort(reason: unknown): void {
    // Before onConnect undici has no abort function yet: onConnect aborts with the reason.
    this.#abort?.(reason as Error);
  }

  onConnect(abort: (error?: Error) => void): void {
    if (this.#cancellation.aborted) {
      abort(this.#cancellation.reason as Error);
      return;
    }
    this.#abort = abort;
  }

  onRequestSent(): void {
    // undici has written the whole request (a body in parts is written after dispatch returns).
    const timer = this.#timer;
    if (timer !== undefined && timer.receiveStart === 0n) timer.sendEnd = process.hrtime.bigint();
  }

  onHeaders(status: number, rawHeaders: Buffer[]): boolean {
    // 1xx informational responses are skipped, as undici's request() does.
    if (status < 200) return true;
    if (this.#timer !== undefined) this.#timer.receiveStart = process.hrtime.bigint();
    this.#status = status;
    this.#rawHeaders = rawHeaders;
    const alignAt = this.#alignAt;
    const scanned = new ScannedHeaders(rawHeaders, namesFor(alignAt));
    this.#scanned = scanned;
    const length = scanned.integer('content-length');
    if (length !== undefined && length <= PREALLOCATE_LIMIT) {
      let pad = 0;
      if (alignAt !== undefined && scanned.get('content-encoding') === undefined) {
        const offset = scanned.integer(alignAt);
        if (offset !== undefined && offset <= length) pad = (8 - (offset % 8)) % 8;
      }
      // allocUnsafe: small bodies come from Node's pool (8-byte aligned slices); every byte of the
      // returned body is written below.
      this.#buffer = Buffer.allocUnsafe(pad + length);
      this.#start = pad;
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    const buffer = this.#buffer;
    if (buffer !== undefined && this.#start + this.#size + chunk.length <= buffer.length) {
      chunk.copy(buffer, this.#start + this.#size);
    } else {
      if (buffer !== undefined) {
        // More than content-length said (undici normally refuses that): collect chunks instead.
        this.#chunks = [buffer.subarray(this.#start, this.#start + this.#size)];
        this.#buffer = undefined;
      }
      (this.#chunks ??= []).push(chunk);
    }
    this.#size += chunk.length;
    return true;
  }

  onComplete(): void {
    this.#cancellation.removeListener(this);
    const size = this.#size;
    const body =
      this.#buffer !== undefined
        ? this.#buffer.subarray(this.#start, this.#start + size)
        : Buffer.concat(this.#chunks ?? [], size);
    this.#resolve(new ReceivedResponse(this.#status, this.#rawHeaders, body, this.#scanned));
  }

  onError(error: Error): void {
    this.#cancellation.removeListener(this);
    this.#reject(error);
  }
}

/**
 * Sends one request through `dispatcher` and reads the whole response. Rejects with undici's
 * error, or with the cancellation's reason when it fires (before or during the exchange). Stamps
 * `timer.sendEnd` once undici has the request (it writes a one-buffer body at once to an idle
 * keep-alive connection), then again when undici has written the whole body (later for a body in
 * parts, or after a new connection was made), and `timer.receiveStart` when the status line and
 * headers arrived.
 */
export function exchange(
  dispatcher: Dispatcher,
  request: ExchangeRequest,
  cancellation: Cancellation,
  timer: InferTimer | undefined,
): Promise<ReceivedResponse> {
  return new Promise<ReceivedResponse>((resolve, reject) => {
    if (cancellation.aborted) {
      // The reason is the client's timeout or abort error (what the AbortSignal carries).
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      reject(cancellation.reason);
      return;
    }
    const handler = new Exchange(resolve, reject, cancellation, timer, request.alignAt);
    cancellation.addListener(handler);
    dispatcher.dispatch(
      {
        method: request.method,
        path: request.path,
        headers: request.headers,
        // undici's typing omits iterables, but its core takes them (`client-h1` `writeIterable`:
        // each part written as is, under the given content-length, a mismatch an error).
        body: request.body as Uint8Array | string | null,
      },
      handler,
    );
    if (timer !== undefined) timer.sendEnd = process.hrtime.bigint();
  });
}
