/**
 * The HTTP front end: a `node:http` server (keep-alive, no framework) over the core, with graceful
 * shutdown that stops accepting connections and waits for in-flight requests.
 * @packageDocumentation
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

import type { InferenceServer } from '../core/server.js';
import { DEFAULT_MAX_INPUT_SIZE } from './body.js';
import { BodyPool } from './body-pool.js';
import { answerClientErrors } from './client-errors.js';
import { createRequestListener, requestsInFlight, type InFlightTracker } from './listener.js';
import { OffThreadJsonDecoder } from './json-decoder.js';
import type { Restrictions } from './restricted-api.js';
import { DEFAULT_MAX_INFLIGHT_BODY_BYTES, MemoryBudget } from './memory-budget.js';
import {
  DEFAULT_MAX_CONNECTION_OUTPUT_BYTES,
  DEFAULT_SEND_TIMEOUT_MS,
  ResponseWriter,
} from './response-writer.js';

/** Options of {@link startHttpServer}. */
export interface HttpServerOptions {
  /** Port; 0 picks a free one. */
  readonly port: number;
  /** Address to bind. */
  readonly host: string;
  /** Largest request body (and decompressed body) in bytes; default 64 MiB like Triton. */
  readonly maxInputSize?: number;
  /** Idle keep-alive timeout in ms (default 65 s, above common proxy timeouts). */
  readonly keepAliveTimeoutMs?: number;
  /** Request bodies in flight across all connections, in bytes (default max(256 MiB, 4 × maxInputSize)). */
  readonly maxInflightBodyBytes?: number;
  /**
   * How long (ms) a connection with response output waiting may go without its client taking any of
   * it before the connection is closed (default 60 s).
   */
  readonly sendTimeoutMs?: number;
  /** Unsent response bytes one connection may hold beyond a single response (default 64 MiB). */
  readonly maxConnectionOutputBytes?: number;
  /** `--http-restricted-api`: categories that require a header (none by default). */
  readonly restrictions?: Restrictions;
  /** `--http-header-forward-pattern` (`core/header-forward.ts`). */
  readonly headerForwardPattern?: RegExp;
}

/** A listening HTTP front end. */
export interface HttpServerHandle {
  readonly server: Server;
  readonly port: number;
  readonly host: string;
  readonly inFlight: InFlightTracker;
  /** Request-body bytes in flight (a reservation per request, released when it ends). */
  readonly bodyBudget: MemoryBudget;
  /** Reusable buffers that binary infer bodies are received into. */
  readonly bodyPool: BodyPool;
  /** Response output waiting for clients, and the connections closed for not taking it. */
  readonly responseWriter: ResponseWriter;
  /**
   * Stops accepting connections, closes idle keep-alive connections, waits up to `timeoutMs` for
   * in-flight requests, then closes every remaining connection. Resolves `true` when everything
   * finished in time.
   *
   * With `liveConnections` (the CLI's SIGINT / SIGTERM), as tritonserver's `HTTPServer::Stop`: the
   * port stays open while the connections already open finish their requests (a request arriving
   * on one meanwhile is answered too), and a new connection is reset at once; once they are done
   * (or `timeoutMs` passed) the port closes, and only then are new connections refused by the
   * system. Unlike tritonserver, which waits until clients close even idle keep-alive connections,
   * a connection without a request for 200 ms is closed (a client's keep-alive pool would otherwise
   * hold every shutdown for the whole exit timeout).
   */
  close(timeoutMs: number, options?: { liveConnections?: boolean }): Promise<boolean>;
}

/** How long a connection may stay without a request during a `liveConnections` shutdown. */
const IDLE_GRACE_MS = 200;

/** Starts the HTTP front end of `core`. */
export async function startHttpServer(
  core: InferenceServer,
  options: HttpServerOptions,
): Promise<HttpServerHandle> {
  const maxInputSize = options.maxInputSize ?? DEFAULT_MAX_INPUT_SIZE;
  // By default room for four bodies of the largest accepted size, and never less than 256 MiB.
  const bodyBudget = new MemoryBudget(
    options.maxInflightBodyBytes ?? Math.max(DEFAULT_MAX_INFLIGHT_BODY_BYTES, 4 * maxInputSize),
  );
  const responseWriter = new ResponseWriter({
    sendTimeoutMs: options.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS,
    maxConnectionOutputBytes: options.maxConnectionOutputBytes ?? DEFAULT_MAX_CONNECTION_OUTPUT_BYTES,
    onCut: (error) => {
      if (core.logger.isVerbose(1)) core.logger.verbose(1, error.message);
    },
  });
  const bodyPool = new BodyPool();
  const jsonDecoder = new OffThreadJsonDecoder();
  const { listener, inFlight } = createRequestListener(core, {
    maxInputSize,
    bodyBudget,
    bodyPool,
    responseWriter,
    ...(options.restrictions !== undefined ? { restrictions: options.restrictions } : {}),
    ...(options.headerForwardPattern !== undefined
      ? { headerForwardPattern: options.headerForwardPattern }
      : {}),
    jsonDecoder,
  });
  const server = createServer({ keepAlive: true }, listener);
  // Open connections (requests in progress, last activity), for a shutdown that waits for them;
  // none accepted once it started.
  const connections = new Map<Socket, { busy: number; since: number }>();
  let accepting = true;
  server.prependListener('connection', (socket: Socket) => {
    if (!accepting) {
      socket.resetAndDestroy();
      return;
    }
    connections.set(socket, { busy: 0, since: Date.now() });
    socket.once('close', () => connections.delete(socket));
  });
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const state = connections.get(req.socket);
    if (state === undefined) return;
    state.busy += 1;
    res.once('close', () => {
      state.busy -= 1;
      state.since = Date.now();
    });
  });
  // Parse errors: node:http's answers, and Triton's reading of a body with both framings.
  answerClientErrors(server, requestsInFlight);
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  let closing: Promise<boolean> | undefined;
  return {
    server,
    port: address.port,
    host: options.host,
    inFlight,
    bodyBudget,
    bodyPool,
    responseWriter,
    close(timeoutMs: number, closeOptions: { liveConnections?: boolean } = {}): Promise<boolean> {
      closing ??= (async () => {
        if (closeOptions.liveConnections === true) {
          accepting = false;
          // A connection with no request in progress for IDLE_GRACE_MS is closed: a keep-alive
          // client sending its next request right after an answer is still served.
          const sweep = setInterval(() => {
            const now = Date.now();
            for (const [socket, state] of connections) {
              if (state.busy === 0 && now - state.since >= IDLE_GRACE_MS) socket.destroy();
            }
          }, 20);
          const finished = await waitFor(
            () => connections.size === 0,
            (resolve) => connections.forEach((_, s) => s.once('close', resolve)),
            timeoutMs,
          );
          clearInterval(sweep);
          const closed = new Promise<void>((resolve) => server.close(() => resolve()));
          server.closeAllConnections();
          await closed;
          await jsonDecoder.close();
          return finished;
        }
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        let timer: NodeJS.Timeout | undefined;
        const finished = await Promise.race([
          inFlight.idle().then(() => true),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(false), Math.max(0, timeoutMs));
          }),
        ]);
        if (timer !== undefined) clearTimeout(timer);
        server.closeAllConnections();
        await closed;
        await jsonDecoder.close();
        return finished;
      })();
      return closing;
    },
  };
}

/**
 * Resolves `true` once `done()` holds (checked whenever `watch` signals), `false` after `timeoutMs`.
 */
function waitFor(
  done: () => boolean,
  watch: (signal: () => void) => void,
  timeoutMs: number,
): Promise<boolean> {
  if (done()) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), Math.max(0, timeoutMs));
    watch(() => {
      if (!done()) return;
      clearTimeout(timer);
      resolve(true);
    });
  });
}
