/**
 * `@tritonserver-ts/protocol/sse` (also in `@tritonserver-ts/protocol/http`): a Server-Sent Events
 * reader for `generate_stream` bodies and any other event stream. It has no dependency (no Node
 * API, no DOM API beyond `TextDecoder`, no other module of this package), so the same code reads
 * a stream in Node (undici's body) and in a browser (`fetch`'s `response.body`) without pulling the
 * HTTP wire's JSON codec into a page's bundle. No `EventSource`: that API only does GET without a
 * body, while `generate_stream` is a POST with a JSON body. The writing side is
 * `frameServerSentEvent` (generate.ts).
 *
 * The WHATWG event-stream format ("Server-sent events", *Parsing an event stream* and *Interpreting
 * an event stream*):
 * - the bytes are UTF-8 (a character split across chunks is decoded whole); one byte-order mark at
 *   the very start is dropped, any other U+FEFF is text;
 * - lines end with LF, CRLF or CR, and a CRLF split across two chunks is one line end;
 * - a line starting with `:` is a comment; otherwise the field name runs to the first `:` (the
 *   whole line when there is none) and the value follows it, less one leading space;
 * - `data` appends its value to the event's data (values joined with LF); `event` sets the event's
 *   type (`message` when unset, reset after each event); `id` sets the last event id, which stays
 *   for later events, unless the value holds U+0000; `retry` sets the reconnection time when its
 *   value is only ASCII digits; any other field is ignored;
 * - a blank line dispatches the event, unless it had no `data` field (a `data:` line with an empty
 *   value is an event with empty data);
 * - an event not closed by a blank line when the stream ends is dropped.
 * @packageDocumentation
 */

/** One dispatched event. */
export interface ServerSentEvent {
  /** The `data` fields' values joined with LF. */
  readonly data: string;
  /** The `event` field (`'message'` when the event has none). */
  readonly event: string;
  /** The last `id` field seen so far in the stream (`''` when none). */
  readonly lastEventId: string;
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const BOM = 0xfeff;

/**
 * Incremental event-stream parser: feed it decoded text in any chunking ({@link readServerSentEvents}
 * does the decoding for a byte stream). The decoder must keep a leading byte-order mark
 * (`new TextDecoder('utf-8', { ignoreBOM: true })`): the reader drops exactly one, as the format says.
 */
export class ServerSentEventReader {
  /** The current line's text so far (no line end seen yet). */
  #line = '';
  /** The current event's `data` values; `undefined` until a `data` field. */
  #data: string[] | undefined;
  #event = '';
  #lastEventId = '';
  #retryMs: number | undefined;
  /** The last chunk ended with CR: a LF starting the next one belongs to that line end. */
  #afterCr = false;
  #started = false;

  /** The `retry` field's last valid value in ms, if any (a reconnecting reader would honour it). */
  get retryMs(): number | undefined {
    return this.#retryMs;
  }

  /** Whether a partly read event (or line) is pending: the stream ended now would drop it. */
  get pending(): boolean {
    return this.#line !== '' || this.#data !== undefined;
  }

  /** Adds `text` and returns the events it completed, in order. */
  push(text: string): ServerSentEvent[] {
    if (text === '') return [];
    let start = 0;
    if (!this.#started) {
      this.#started = true;
      if (text.charCodeAt(0) === BOM) start = 1;
    }
    if (this.#afterCr && text.charCodeAt(start) === LF) start += 1;
    this.#afterCr = false;
    const events: ServerSentEvent[] = [];
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== LF && c !== CR) continue;
      const line = this.#line === '' ? text.slice(start, i) : this.#line + text.slice(start, i);
      this.#line = '';
      this.#interpret(line, events);
      if (c === CR) {
        if (i + 1 === text.length) this.#afterCr = true;
        else if (text.charCodeAt(i + 1) === LF) i++;
      }
      start = i + 1;
    }
    if (start < text.length) this.#line += text.slice(start);
    return events;
  }

  #interpret(line: string, events: ServerSentEvent[]): void {
    if (line === '') {
      this.#dispatch(events);
      return;
    }
    if (line.charCodeAt(0) === COLON) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === SPACE) value = value.slice(1);
    switch (field) {
      case 'data':
        (this.#data ??= []).push(value);
        break;
      case 'event':
        this.#event = value;
        break;
      case 'id':
        if (!value.includes('\u0000')) this.#lastEventId = value;
        break;
      case 'retry':
        if (/^[0-9]+$/.test(value)) this.#retryMs = Number(value);
        break;
      default:
        break;
    }
  }

  #dispatch(events: ServerSentEvent[]): void {
    const data = this.#data;
    if (data !== undefined) {
      events.push({ data: data.join('\n'), event: this.#event || 'message', lastEventId: this.#lastEventId });
    }
    this.#data = undefined;
    this.#event = '';
  }
}

/**
 * The events of an event-stream body: a `fetch` `ReadableStream` or any async iterable of bytes
 * (undici's body, a Node stream). Stops reading (and cancels the body) when the consumer stops
 * early; the body's errors (an abort, a broken connection) reach the consumer as they are.
 */
export async function* readServerSentEvents(
  body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
): AsyncGenerator<ServerSentEvent, void, undefined> {
  // ignoreBOM: the reader drops the one leading byte-order mark itself (the decoder would drop it
  // too, and the reader then a second one).
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  const reader = new ServerSentEventReader();
  for await (const chunk of chunksOf(body)) {
    yield* reader.push(decoder.decode(chunk, { stream: true }));
  }
  yield* reader.push(decoder.decode());
}

/** Bytes of a web stream (whose async iteration not every browser has) or of an async iterable. */
async function* chunksOf(
  body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
): AsyncGenerator<Uint8Array, void, undefined> {
  if (!('getReader' in body)) {
    yield* body;
    return;
  }
  const reader = body.getReader();
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) {
        done = true;
        return;
      }
      yield next.value;
    }
  } finally {
    // Stopped early (the consumer returned or threw): cancel the body, which aborts the request.
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
