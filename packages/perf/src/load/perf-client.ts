/**
 * The client a run sends with: HTTP or gRPC per `-i`, `-u`, `-H`.
 * @packageDocumentation
 */
import { TritonClient } from '@tritonserver-ts/client';

import type { PerfOptions } from '../options/perf-options.js';

/**
 * Deadline of the client's own calls (metadata, config, statistics, shared-memory registration):
 * generous, so a loaded server is not mistaken for a dead one. Inference requests carry no
 * deadline at all (as in perf_analyzer); a run's stop aborts them instead.
 */
export const PERF_CLIENT_TIMEOUT_MS = 120_000;

/**
 * Pooled HTTP connections: one per request in flight, as perf_analyzer opens one per context
 * (opened lazily, so a low concurrency opens few).
 */
const HTTP_CONNECTIONS = 1024;

/**
 * A client for the run's protocol and URL (`-i`, `-u`), sending the `-H` headers with every call.
 * HTTP goes through undici's keep-alive pool; gRPC through `@tritonserver-ts/client/grpc` (one
 * channel, as perf_analyzer shares one per process). Close it with `client.close()`.
 */
export async function createPerfClient(options: PerfOptions): Promise<TritonClient> {
  const headers = { ...options.headers };
  if (options.protocol === 'grpc') {
    const { createGrpcClient } = await import('@tritonserver-ts/client/grpc');
    return createGrpcClient({ url: options.url, headers, timeoutMs: PERF_CLIENT_TIMEOUT_MS });
  }
  return new TritonClient({
    url: options.url,
    headers,
    timeoutMs: PERF_CLIENT_TIMEOUT_MS,
    connections: HTTP_CONNECTIONS,
  });
}
