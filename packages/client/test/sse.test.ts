/**
 * `@tritonserver-ts/client/sse` (src/sse.ts): the protocol's Server-Sent Events reader re-exported,
 * one reader for the client, the server's tests and browsers (its cases: the protocol's
 * test/codec/sse.test.ts, which also checks that the entry imports nothing).
 */
import * as protocolSse from '@tritonserver-ts/protocol/sse';
import { describe, expect, it } from 'vitest';

import * as clientRoot from '../src/index.js';
import * as clientSse from '../src/sse.js';

describe('@tritonserver-ts/client/sse', () => {
  it('is the protocol’s reader, also from the client’s root entry', () => {
    expect(clientSse.ServerSentEventReader).toBe(protocolSse.ServerSentEventReader);
    expect(clientSse.readServerSentEvents).toBe(protocolSse.readServerSentEvents);
    expect(clientRoot.readServerSentEvents).toBe(protocolSse.readServerSentEvents);
  });

  it('reads a fetch-style body through the client entry', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(
          new TextEncoder().encode('data: {"TEXT":"Likely"}\r\n\r\ndata: {"TEXT":" Seafood"}\n\n'),
        );
        controller.close();
      },
    });
    const seen: string[] = [];
    for await (const event of clientSse.readServerSentEvents(body)) seen.push(event.data);
    expect(seen).toEqual(['{"TEXT":"Likely"}', '{"TEXT":" Seafood"}']);
  });
});
