/**
 * The Server-Sent Events reader (`src/http/sse.ts`, entry `@tritonserver-ts/protocol/sse`) on the
 * WHATWG event-stream format's cases: data lines, multi-line data, comments, the `event` / `id` /
 * `retry` fields and unknown ones, CRLF / CR / LF line ends split anywhere across chunks, a
 * byte-order mark, UTF-8 split inside a character, an unterminated last event; the byte-stream
 * reader on async iterables and web streams; and the server's framing read back.
 */
import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { frameServerSentEvent } from '../../src/http/generate.js';
import * as http from '../../src/http/index.js';
import { readServerSentEvents, ServerSentEventReader, type ServerSentEvent } from '../../src/http/sse.js';

/** The events of `text` fed in chunks of `size` characters. */
function parse(text: string, size = text.length): ServerSentEvent[] {
  const reader = new ServerSentEventReader();
  const events: ServerSentEvent[] = [];
  for (let i = 0; i < text.length; i += size) events.push(...reader.push(text.slice(i, i + size)));
  return events;
}

const data = (events: readonly ServerSentEvent[]): string[] => events.map((e) => e.data);
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/** The events' data read from `all` delivered one byte per chunk (each after a turn of the loop). */
async function readBytewise(all: Uint8Array): Promise<string[]> {
  async function* chunks() {
    for (let i = 0; i < all.length; i++) {
      await Promise.resolve();
      yield all.subarray(i, i + 1);
    }
  }
  const out: string[] = [];
  for await (const event of readServerSentEvents(chunks())) out.push(event.data);
  return out;
}

describe('ServerSentEventReader', () => {
  it('reads Triton’s framing: one data line per event, a blank line after each', () => {
    const text = 'data: {"a":1}\n\ndata: {"a":2}\n\n';
    expect(data(parse(text))).toEqual(['{"a":1}', '{"a":2}']);
  });

  it('reads back what the server frames (frameServerSentEvent), in any chunking', () => {
    const json = ['{"TEXT":"Likely","model_name":"m","model_version":"1"}', '{"error":"boom"}'];
    const text = json.map(frameServerSentEvent).join('');
    for (let size = 1; size <= text.length; size++) expect(data(parse(text, size))).toEqual(json);
  });

  it('joins multi-line data with LF; one space after the colon is dropped, not more', () => {
    expect(data(parse('data: line 1\ndata:line 2\ndata:  two spaces\n\n'))).toEqual([
      'line 1\nline 2\n two spaces',
    ]);
  });

  it('ignores comments and unknown fields; reads event, id and retry', () => {
    const reader = new ServerSentEventReader();
    const events = reader.push(': keep-alive\nfoo: bar\nevent: caption\nid: 7\nretry: 1500\ndata: x\n\n');
    expect(events).toEqual([{ data: 'x', event: 'caption', lastEventId: '7' }]);
    expect(reader.retryMs).toBe(1500);
    // The event type resets per event; the last event id stays.
    expect(reader.push('data: y\n\n')).toEqual([{ data: 'y', event: 'message', lastEventId: '7' }]);
  });

  it('an id holding U+0000 and a retry not made only of ASCII digits are ignored; `id` alone clears', () => {
    const reader = new ServerSentEventReader();
    reader.push('id: 1\nretry: 250\ndata: a\n\n');
    expect(reader.push('id: 2\u00003\nretry: 1e3\nretry: -5\nretry:\ndata: b\n\n')).toEqual([
      { data: 'b', event: 'message', lastEventId: '1' },
    ]);
    expect(reader.retryMs).toBe(250);
    // A field name without a colon has an empty value: the last event id becomes ''.
    expect(reader.push('id\ndata: c\n\n')).toEqual([{ data: 'c', event: 'message', lastEventId: '' }]);
  });

  it('the field name is case-sensitive and runs to the first colon', () => {
    expect(data(parse('Data: no\ndata:a:b: c\n\n'))).toEqual(['a:b: c']);
  });

  it('a blank line without data dispatches nothing; `data:` alone is an empty event', () => {
    expect(data(parse('\n\n: only a comment\n\nevent: x\n\ndata:\n\n'))).toEqual(['']);
    expect(data(parse('data\n\n'))).toEqual(['']);
    // An event without data does not carry its type over to the next one.
    expect(parse('event: x\n\ndata: y\n\n')).toEqual([{ data: 'y', event: 'message', lastEventId: '' }]);
  });

  it('CRLF, CR and LF line ends, split across chunks at every position', () => {
    const text = 'data: one\r\n\r\ndata: two\r\rdata: three\n\ndata: a\r\ndata: b\r\n\r\n';
    for (let size = 1; size <= text.length; size++) {
      expect(data(parse(text, size)), `chunks of ${size}`).toEqual(['one', 'two', 'three', 'a\nb']);
    }
  });

  it('splits an event stream in any chunking (LF, CRLF, CR; comments; multi-line data)', () => {
    const stream = 'data: {"a":1}\n\n: comment\r\ndata:{"b":2}\r\n\r\ndata: x\ndata: y\r\rdata: tail';
    const whole = data(new ServerSentEventReader().push(stream));
    expect(whole).toEqual(['{"a":1}', '{"b":2}', 'x\ny']);
    for (let size = 1; size <= 7; size++) expect(data(parse(stream, size))).toEqual(whole);
  });

  it('a CR ending a chunk and a LF starting the next are one line end, also after empty chunks', () => {
    const reader = new ServerSentEventReader();
    const got = [
      ...reader.push('data: a\r'),
      ...reader.push(''),
      ...reader.push('\n'),
      ...reader.push('\r'),
      ...reader.push('\ndata: b\n\n'),
    ];
    expect(data(got)).toEqual(['a', 'b']);
  });

  it('a long line in many small chunks', () => {
    const long = 'x'.repeat(100_000);
    expect(data(parse(`data: ${long}\n\n`, 7))).toEqual([long]);
  });

  it('skips a byte-order mark at the start only', () => {
    expect(data(parse('\ufeffdata: x\n\n'))).toEqual(['x']);
    expect(data(parse('data: \ufeffx\n\n'))).toEqual(['\ufeffx']);
    // One mark only: a second is the start of the first line's field name.
    expect(data(parse('\ufeff\ufeffdata: x\n\ndata: y\n\n'))).toEqual(['y']);
    // The start of the stream is its first character, even after empty chunks.
    const reader = new ServerSentEventReader();
    expect([...reader.push(''), ...reader.push('\ufeffdata: z\n\n')]).toEqual([
      { data: 'z', event: 'message', lastEventId: '' },
    ]);
  });

  it('holds an unterminated event back (pending) and never dispatches it', () => {
    const reader = new ServerSentEventReader();
    expect(reader.pending).toBe(false);
    expect(reader.push('data: complete\n\ndata: cut')).toEqual([
      { data: 'complete', event: 'message', lastEventId: '' },
    ]);
    expect(reader.pending).toBe(true);
    // A whole data line without its blank line is still pending.
    const fields = new ServerSentEventReader();
    fields.push('data: cut\n');
    expect(fields.pending).toBe(true);
  });

  it('is exported by the ./http entry too (one reader)', () => {
    expect(http.ServerSentEventReader).toBe(ServerSentEventReader);
    expect(http.readServerSentEvents).toBe(readServerSentEvents);
  });

  it('its own ./sse entry imports nothing: safe in a browser bundle (no lossless-json, no Buffer)', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      exports: Record<string, { default: string }>;
    };
    expect(pkg.exports['./sse']?.default).toBe('./dist/http/sse.js');
    const source = readFileSync(new URL('../../src/http/sse.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/^\s*(import|export)\b[^;]*\bfrom\s/m);
    expect(source).not.toMatch(/\bimport\(|\brequire\(|\bBuffer\b|\bprocess\./);
  });
});

describe('readServerSentEvents', () => {
  it('decodes UTF-8 split inside a character, from an async iterable of chunks', async () => {
    const all = bytes('data: {"TEXT":"Likely Seafood, 84\u00a0% — ✓ 🍤"}\n\n');
    expect(await readBytewise(all)).toEqual(['{"TEXT":"Likely Seafood, 84\u00a0% — ✓ 🍤"}']);
  });

  it('drops one byte-order mark at the start of the bytes, keeps a second', async () => {
    expect(await readBytewise(bytes('\ufeffdata: x\n\n'))).toEqual(['x']);
    expect(await readBytewise(bytes('\ufeff\ufeffdata: x\n\ndata: y\n\n'))).toEqual(['y']);
  });

  it('replaces bytes that are not UTF-8 and drops an event the stream ends in', async () => {
    const all = Uint8Array.of(...bytes('data: a'), 0xff, ...bytes('b\n\ndata: cut'), 0xe2, 0x82);
    expect(await readBytewise(all)).toEqual(['a\ufffdb']);
  });

  it('reads a web ReadableStream, and cancels it when the consumer stops early', async () => {
    let cancelled: unknown = 'not cancelled';
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes('data: 1\n\ndata: 2\n\n'));
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    for await (const event of readServerSentEvents(stream)) {
      expect(event.data).toBe('1');
      break;
    }
    expect(cancelled).toBeUndefined();
  });

  it('reads a web ReadableStream to its end', async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes('data: 1\n'));
        controller.enqueue(bytes('\ndata: 2\r'));
        controller.enqueue(bytes('\n\r\n'));
        controller.close();
      },
    });
    const seen: string[] = [];
    for await (const event of readServerSentEvents(stream)) seen.push(event.data);
    expect(seen).toEqual(['1', '2']);
  });

  it('passes the body’s error on to the consumer', async () => {
    async function* failing() {
      yield await Promise.resolve(bytes('data: 1\n\n'));
      throw new Error('socket hang up');
    }
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const event of readServerSentEvents(failing())) seen.push(event.data);
      })(),
    ).rejects.toThrow('socket hang up');
    expect(seen).toEqual(['1']);
  });
});
