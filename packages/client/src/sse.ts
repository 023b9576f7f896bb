/**
 * `@tritonserver-ts/client/sse`: a Server-Sent Events reader with no Node or DOM dependency beyond
 * `TextDecoder`, so the same code reads Triton's `generate_stream` in Node (undici's body) and in a
 * browser (`fetch`'s `response.body`). No `EventSource`: that API only does GET without a body,
 * while `generate_stream` is a POST with a JSON body.
 *
 * The parser follows the WHATWG event-stream format: lines end with LF, CRLF or CR (a CRLF split
 * across two chunks is one line end); `data:` fields (one optional space after the colon) are
 * joined with LF; a line starting with `:` is a comment; `event`, `id` and `retry` are read, other
 * fields ignored; an event is dispatched at a blank line, and an event with no `data` field is not;
 * a byte-order mark at the start is skipped; an event not closed by a blank line when the stream
 * ends is dropped.
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

/** Incremental event-stream parser: feed it decoded text in any chunking. */
export class ServerSentEventReader {
  #tail = '';
  #data: string[] | undefined;
  #event = '';
  #lastEventId = '';
  #afterCr = false;
  #started = false;
  /** The `retry` field's last value in ms, if any (a reconnecting reader would honour it). */
  retryMs: number | undefined;

  /** Adds `text` and returns the events it completed, in order. */
  push(text: string): ServerSentEvent[] {
    let input = text;
    if (!this.#started && input.length > 0) {
      this.#started = true;
      if (input.charCodeAt(0) === 0xfeff) input = input.slice(1);
    }
    if (this.#afterCr && input.charCodeAt(0) === 0x0a) input = input.slice(1);
    this.#afterCr = false;
    const events: ServerSentEvent[] = [];
    const buffer = this.#tail + input;
    let start = 0;
    for (let i = 0; i < buffer.length; i++) {
      const c = buffer.charCodeAt(i);
      if (c !== 0x0a && c !== 0x0d) continue;
      this.#line(buffer.slice(start, i), events);
      if (c === 0x0d) {
        if (i + 1 === buffer.length) this.#afterCr = true;
        else if (buffer.charCodeAt(i + 1) === 0x0a) i++;
      }
      start = i + 1;
    }
    this.#tail = start === 0 ? buffer : buffer.slice(start);
    return events;
  }

  /** Whether a partly read event (or line) is pending: the stream ended in the middle of an event. */
  get pending(): boolean {
    return this.#tail !== '' || this.#data !== undefined;
  }

  #line(line: string, events: ServerSentEvent[]): void {
    if (line === '') {
      const data = this.#data;
      if (data !== undefined) {
        events.push({
          data: data.join('\n'),
          event: this.#event || 'message',
          lastEventId: this.#lastEventId,
        });
      }
      this.#data = undefined;
      this.#event = '';
      return;
    }
    if (line.charCodeAt(0) === 0x3a) return; // ':' comment
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
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
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break;
    }
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
  const decoder = new TextDecoder('utf-8');
  const reader = new ServerSentEventReader();
  for await (const chunk of chunksOf(body)) {
    const events = reader.push(decoder.decode(chunk, { stream: true }));
    for (const event of events) yield event;
  }
  for (const event of reader.push(decoder.decode())) yield event;
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
