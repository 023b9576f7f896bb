/**
 * The `request` listener of the HTTP server: routing (404/405), the restricted-API check, reading
 * the body within its limits and the in-flight body budget, cancellation when the client goes away,
 * one log line per request, sending the reply, and the answer-first drain of over-limit bodies.
 * The endpoints ({@link handleRoute}) turn a routed request into a reply.
 * @packageDocumentation
 */
import { setMaxListeners } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

import { INFERENCE_HEADER_CONTENT_LENGTH } from '@tritonserver-ts/protocol/http';

import type { InferenceServer } from '../core/server.js';
import { readBody } from './body.js';
import { SingleRequestConnection } from './client-errors.js';
import { handleRoute } from './endpoints.js';
import { errorReply, json, type HttpFrontEndOptions, type HttpReply, type StreamedBody } from './reply.js';
import { ResponseStream } from './response-writer.js';
import { missingRestrictionHeader } from './restricted-api.js';
import { allowedMethods, matchRoute } from './router.js';
import { HttpRequestTrace } from './trace.js';

/** Where the binary tail of an uncompressed infer body starts (to align it), if known. */
function alignmentOf(req: IncomingMessage): number | undefined {
  if (req.headers['content-encoding'] !== undefined) return undefined;
  const value = req.headers[INFERENCE_HEADER_CONTENT_LENGTH];
  if (typeof value !== 'string' || !/^\d{1,10}$/.test(value)) return undefined;
  return Number(value);
}

/** What the listener keeps per connection. */
interface ConnectionState {
  /** Aborted when the connection closes. */
  readonly signal: AbortSignal;
  /** Requests of the connection whose handler has not finished. */
  inFlight: number;
  /** Requests of the connection seen so far. */
  requests: number;
}

const connections = new WeakMap<Duplex, ConnectionState>();

/**
 * The state of one connection. Its signal is aborted when the connection closes, which is when its
 * client goes away before the replies are written (a request whose reply has been written no longer
 * listens). One per connection rather than one `AbortController` and `close` listener per request:
 * the per-request ones were a measurable share of a small request's cost.
 */
function connectionState(socket: Duplex): ConnectionState {
  let state = connections.get(socket);
  if (state === undefined) {
    const controller = new AbortController();
    // Every queued request of a pipelining client listens to it: no listener-count warning.
    setMaxListeners(0, controller.signal);
    state = { signal: controller.signal, inFlight: 0, requests: 0 };
    connections.set(socket, state);
    // A socket already gone (its close event passed) aborts at once.
    if (socket.destroyed) controller.abort();
    else socket.once('close', () => controller.abort());
  }
  return state;
}

/** Requests of a connection whose handler has not finished (for the parse-error handler). */
export function requestsInFlight(socket: Duplex): number {
  return connections.get(socket)?.inFlight ?? 0;
}

/** Counts requests in flight so shutdown can wait for them. */
export interface InFlightTracker {
  readonly count: number;
  /** Resolves when no request is in flight. */
  idle(): Promise<void>;
}

/** Creates the `request` listener of the HTTP server. */
export function createRequestListener(
  core: InferenceServer,
  options: HttpFrontEndOptions,
): { listener: (req: IncomingMessage, res: ServerResponse) => void; inFlight: InFlightTracker } {
  let count = 0;
  let waiters: (() => void)[] = [];
  const inFlight: InFlightTracker = {
    get count() {
      return count;
    },
    idle() {
      return count === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
    },
  };
  const done = (): void => {
    count--;
    if (count === 0) {
      const w = waiters;
      waiters = [];
      for (const f of w) f();
    }
  };

  // One async function per request, without a promise chain or per-request closures beyond the
  // connection's close listener: this runs for every request, and its overhead is per request.
  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const receivedAt = process.hrtime.bigint();
    const httpTrace = new HttpRequestTrace(res, receivedAt);
    const connection = connectionState(req.socket);
    connection.inFlight++;
    const signal = connection.signal;
    // The reservation is returned when the handler settles (below), not on close: a request whose
    // client is gone still holds its body until its inference ends.
    const reservation = options.bodyBudget?.open();
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    let bytesIn = 0;
    // A pooled body goes back to the pool when the handler settles, as the reservation does.
    let body: Buffer | undefined;
    try {
      let reply: HttpReply;
      const route = matchRoute(path);
      // As Triton's handlers: the restriction is checked before the method.
      const missing =
        route === undefined || options.restrictions === undefined
          ? undefined
          : missingRestrictionHeader(options.restrictions, route, (n) => req.headers[n]);
      if (route === undefined) reply = json(404, { error: 'Not Found' });
      else if (missing !== undefined)
        reply = json(403, { error: `This API is restricted, expecting header '${missing}'` });
      else if (!allowedMethods(route).includes(req.method ?? ''))
        reply = json(405, { error: 'Method Not Allowed' });
      else {
        try {
          body =
            req.method === 'POST'
              ? await readBody(req, options.maxInputSize, alignmentOf(req), reservation, options.bodyPool)
              : Buffer.alloc(0);
          bytesIn = body.byteLength;
          httpTrace.bodyRead();
          reply = await handleRoute(core, route, {
            req,
            body,
            options,
            signal,
            ...(reservation !== undefined ? { reservation } : {}),
            httpTrace,
          });
        } catch (error) {
          reply = errorReply(error);
        }
      }
      // The body has been turned into the reply: its bytes leave the in-flight budget.
      reservation?.release();
      httpTrace.sending();
      if (reply.stream !== undefined) await sendStream(req, res, reply, reply.stream, options);
      else send(req, res, reply, options);
      if (core.logger.isVerbose(1)) {
        core.logger.verbose(
          1,
          JSON.stringify({
            method: req.method,
            path,
            status: reply.status,
            ms: Number(process.hrtime.bigint() - receivedAt) / 1e6,
            bytes_in: bytesIn,
            bytes_out: reply.body === undefined ? 0 : Buffer.byteLength(reply.body),
          }),
        );
      }
    } catch (error) {
      core.logger.error(`HTTP handler failed: ${String(error)}`);
      if (!res.headersSent) send(req, res, errorReply(error), options);
      else res.destroy();
    } finally {
      reservation?.release();
      if (body !== undefined) options.bodyPool?.give(body);
      connection.inFlight--;
      done();
    }
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    // A reframed request (client-errors.ts) is served alone: anything parsed after it on its
    // connection may be bytes another party framed differently, never a request. It is left
    // unanswered; the connection closes after the first answer (`Connection: close`).
    if (req.socket instanceof SingleRequestConnection && connectionState(req.socket).requests++ > 0) return;
    count++;
    void serve(req, res);
  };
  return { listener, inFlight };
}

/** How much of an unread over-limit body is read and discarded before the connection is closed. */
const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
const DRAIN_MAX_MS = 10_000;

function send(
  req: IncomingMessage,
  res: ServerResponse,
  reply: HttpReply,
  options: HttpFrontEndOptions,
): void {
  if (res.destroyed || res.writableEnded) return;
  const body = reply.body ?? '';
  const headers: Record<string, string | number> = {
    ...reply.headers,
    'Content-Length': Buffer.byteLength(body),
  };
  res.writeHead(reply.status, headers);
  if (options.responseWriter !== undefined) options.responseWriter.write(req.socket, res, body);
  else res.end(body);
  if (!req.complete) {
    if (headers.Connection === 'close') res.once('finish', () => req.destroy());
    else drainAfterAnswer(req, res);
  }
}

/**
 * Sends a streamed reply: status and headers first (chunked), then its chunks as it produces them,
 * within the send limits of the response writer; resolves once the body ended or the connection
 * closed (the request stays in flight until then).
 */
async function sendStream(
  req: IncomingMessage,
  res: ServerResponse,
  reply: HttpReply,
  body: StreamedBody,
  options: HttpFrontEndOptions,
): Promise<void> {
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(reply.status, { ...reply.headers });
  const out =
    options.responseWriter !== undefined
      ? options.responseWriter.openStream(req.socket, res)
      : ResponseStream.unlimited(res);
  await body.pipe(out);
  await out.end();
}

/**
 * A body we refused to read (over a limit) arrives after our answer: the answer goes first, then
 * the rest of the body is read and discarded, so a client that uploads before it reads still gets
 * the answer instead of a reset. Past DRAIN_MAX_BYTES or DRAIN_MAX_MS the connection is closed.
 */
function drainAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  const socket = req.socket;
  let drained = 0;
  const stop = (): void => {
    clearTimeout(timer);
    req.off('data', onData);
  };
  const onData = (chunk: Buffer): void => {
    drained += chunk.byteLength;
    if (drained > DRAIN_MAX_BYTES) {
      stop();
      socket.destroy();
    }
  };
  const timer = setTimeout(() => {
    stop();
    socket.destroy();
  }, DRAIN_MAX_MS).unref();
  req.on('data', onData);
  req.once('end', stop);
  res.once('close', () => {
    if (!req.complete) stop();
  });
  req.resume();
}
