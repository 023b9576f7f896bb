/**
 * `@tritonserver-ts/client/sse`: the Server-Sent Events reader for browsers and Node, re-exported
 * from `@tritonserver-ts/protocol/sse` (one reader for the client's `generateStream`, the server's
 * tests and web pages). It has no dependency beyond `TextDecoder`, so a page that reads a
 * `generate_stream` (or any event stream) with `fetch` imports only it: `readServerSentEvents(
 * response.body)`. See that module for the event-stream rules it follows.
 * @packageDocumentation
 */
export {
  readServerSentEvents,
  ServerSentEventReader,
  type ServerSentEvent,
} from '@tritonserver-ts/protocol/sse';
