/**
 * One HTTP request whose response body is read as it arrives (for `generate_stream`'s Server-Sent
 * Events), over undici's `request()` streaming body. The exchange in `exchange.ts` reads whole
 * bodies; this one hands the body over once the status is known.
 * @packageDocumentation
 */
import type { Dispatcher } from 'undici';

/** A response whose status and headers arrived; its body not read yet. */
export interface StreamingResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /**
   * The body, read chunk by chunk. Returning early from its iteration (or `signal` firing) destroys
   * it, which closes the connection: the server sees the client go away.
   */
  readonly body: AsyncIterable<Uint8Array> & { text(): Promise<string> };
}

/** What {@link streamingRequest} sends. */
export interface StreamingRequest {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * POSTs `request` through `dispatcher` and resolves when the response's status line and headers
 * arrived. `signal` cancels the request at any time, also while the body is being read. Rejects with
 * undici's error, or with the signal's reason.
 */
export async function streamingRequest(
  dispatcher: Dispatcher,
  request: StreamingRequest,
  signal: AbortSignal,
): Promise<StreamingResponse> {
  const response = await dispatcher.request({
    method: 'POST',
    path: request.path,
    headers: request.headers,
    body: request.body,
    signal,
    // Events may be far apart: the connection's body timeout must not end a slow stream (the
    // caller's timeoutMs bounds it instead).
    bodyTimeout: 0,
  });
  return { status: response.statusCode, headers: response.headers, body: response.body };
}
