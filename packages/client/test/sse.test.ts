/**
 * The Server-Sent Events reader (src/sse.ts) on the event-stream format's cases: data lines,
 * multi-line data, comments, other fields, CRLF / CR / LF line ends split anywhere across chunks, a
 * byte-order mark, UTF-8 split inside a character, and an unterminated last event.
 */
import { describe, expect, it } from 'vitest';
import { readServerSentEvents, ServerSentEventReader, type ServerSentEvent } from '../src/sse.js';

/** The events of `text` fed in chunks of `size` characters. */
function parse(text: string, size = text.length): ServerSentEvent[] {
  const reader = new ServerSentEventReader();
  const events: ServerSentEvent[] = [];
  for (let i = 0; i < text.length; i += size) events.push(...reader.push(text.slice(i, i + size)));
  return events;
}

const data = (events: readonly ServerSentEvent[]): string[] => events.map((e) => e.data);

describe('ServerSentEventReader', () => {
  it('reads Triton’s framing: one data line per event, a blank line after each', () => {
    const text = 'data: {"a":1}\n\ndata: {"a":2}\n\n';
    expect(data(parse(text))).toEqual(['{"a":1}', '{"a":2}']);
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

  it('a blank line without data dispatches nothing; `data:` alone is an empty event', () => {
    expect(data(parse('\n\n: only a comment\n\nevent: x\n\ndata:\n\n'))).toEqual(['']);
    expect(data(parse('data\n\n'))).toEqual(['']);
  });

  it('CRLF, CR and LF line ends, split across chunks at every position', () => {
    const text = 'data: one\r\n\r\ndata: two\r\rdata: three\n\ndata: a\r\ndata: b\r\n\r\n';
    for (let size = 1; size <= text.length; size++) {
      expect(data(parse(text, size)), `chunks of ${size}`).toEqual(['one', 'two', 'three', 'a\nb']);
    }
  });

  it('skips a byte-order mark at the start only', () => {
    expect(data(parse('\ufeffdata: x\n\n'))).toEqual(['x']);
    expect(data(parse('data: \ufeffx\n\n'))).toEqual(['\ufeffx']);
  });

  it('holds an unterminated event back (pending) and never dispatches it', () => {
    const reader = new ServerSentEventReader();
    expect(reader.push('data: complete\n\ndata: cut')).toEqual([
      { data: 'complete', event: 'message', lastEventId: '' },
    ]);
    expect(reader.pending).toBe(true);
  });
});

describe('readServerSentEvents', () => {
  const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

  it('decodes UTF-8 split inside a character, from an async iterable of chunks', async () => {
    const all = bytes('data: {"TEXT":"Likely Seafood, 84\u00a0% — ✓"}\n\n');
    async function* chunks() {
      for (let i = 0; i < all.length; i++) {
        await Promise.resolve();
        yield all.subarray(i, i + 1);
      }
    }
    const out: string[] = [];
    for await (const event of readServerSentEvents(chunks())) out.push(event.data);
    expect(out).toEqual(['{"TEXT":"Likely Seafood, 84\u00a0% — ✓"}']);
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
