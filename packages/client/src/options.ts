/**
 * Client and per-call options, and the optional logger.
 * @packageDocumentation
 */
import type { QueryParams } from './query-params.js';
import type { Transport } from './transport.js';

export type { QueryParams } from './query-params.js';

/** A minimal structured logger; the client is silent unless one is given. */
export interface Logger {
  debug(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
}

/** Options every call accepts. */
export interface CallOptions {
  /** Aborts the call; a user abort is never retried and throws `TritonAbortError`. */
  readonly signal?: AbortSignal;
  /** Deadline for the whole call including retries (default: the client's `timeoutMs`; 0 or Infinity: none). */
  readonly timeoutMs?: number;
  /** Extra headers (merged over the client's default headers). */
  readonly headers?: Record<string, string>;
  /** Extra query parameters (merged over the client's default ones). */
  readonly queryParams?: QueryParams;
  /** Retries for this call (default: the client's `maxRetries`). */
  readonly maxRetries?: number;
}

/** Options of `new TritonClient(...)`. */
export interface ClientOptions {
  /**
   * Server address: the Python client's `host:port[/base-path]` (http unless `ssl: true`) or a full
   * `http://` / `https://` URL with an optional base path.
   */
  readonly url?: string;
  /** A ready transport to use instead of building the HTTP one from `url` (e.g. gRPC later, or a shared one). */
  readonly transport?: Transport;
  /** Use https for a `host:port` url. */
  readonly ssl?: boolean;
  /** Default deadline per call in milliseconds (default 60000, like the Python client; 0 or Infinity: none). */
  readonly timeoutMs?: number;
  /** Default retries for idempotent calls on connection errors and 503 (default 2). */
  readonly maxRetries?: number;
  /** First backoff delay in ms (default 200); doubles per attempt, with jitter, capped by `maxRetryDelayMs`. */
  readonly retryDelayMs?: number;
  /** Upper bound of one backoff delay, also for `Retry-After` (default 8000). */
  readonly maxRetryDelayMs?: number;
  /** Headers sent with every call. */
  readonly headers?: Record<string, string>;
  /** Query parameters sent with every call. */
  readonly queryParams?: QueryParams;
  /** Maximum pooled keep-alive connections (default 64). */
  readonly connections?: number;
  /** Optional logger (default: silent). */
  readonly logger?: Logger;
  /** A request plugin (see {@link ClientPlugin}); can also be set later with `registerPlugin`. */
  readonly plugin?: ClientPlugin;
}

/** The logger that drops everything. */
export const silentLogger: Logger = {
  debug: () => undefined,
  warn: () => undefined,
};

/**
 * A request plugin, like the Python client's `register_plugin`: called once per call, before it is
 * sent, with the merged headers, which it may change (e.g. to add a fresh auth token).
 */
export type ClientPlugin = (request: { readonly operation: string; headers: Record<string, string> }) => void;

/** A plugin that adds HTTP Basic auth to every request (the Python client's `BasicAuth`). */
export function basicAuthPlugin(username: string, password: string): ClientPlugin {
  const header = basicAuthHeader(username, password);
  return (request) => {
    Object.assign(request.headers, header);
  };
}

/** Builds an `authorization` header for HTTP Basic auth (the Python client's `BasicAuth` plugin). */
export function basicAuthHeader(username: string, password: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}` };
}
