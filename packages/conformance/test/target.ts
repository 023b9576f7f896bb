/**
 * The server under test and clients for it, one per transport. Every case runs over both: each
 * test file wraps its cases in `describe.each(transports)`, and the gRPC client is the public
 * `createGrpcClient` of `@tritonserver-ts/client/grpc`.
 */
import { inject } from 'vitest';
import { TritonClient, type ClientOptions } from '@tritonserver-ts/client';
import { createGrpcClient } from '@tritonserver-ts/client/grpc';

/** The transports every conformance case runs over. */
export const transports = ['http', 'grpc'] as const;
export type TransportName = (typeof transports)[number];

/** `http://host:port` (embedded) or whatever TRITON_URL says. */
export const tritonUrl = inject('tritonUrl');

/** `host:port` (embedded) or whatever TRITON_GRPC_URL says. */
export const tritonGrpcUrl = inject('tritonGrpcUrl');

/** True when the suite started the embedded server itself. */
export const embedded = inject('embedded');

/** Where this host reads the server's trace file ('' when TRITON_TRACE_FILE was not given). */
export const traceFile = inject('traceFile');

/** Client options both transports take (the rest are the transport's own). */
export type CommonClientOptions = Omit<ClientOptions, 'url' | 'transport' | 'ssl' | 'connections'>;

/** A client for the server under test over `transport`; close it in `afterAll`. */
export function newClient(transport: TransportName, options: CommonClientOptions = {}): TritonClient {
  return clientAt(transport, transport === 'http' ? tritonUrl : tritonGrpcUrl, options);
}

/** A client for any `url` over `transport` (`createGrpcClient` for gRPC). */
export function clientAt(
  transport: TransportName,
  url: string,
  options: CommonClientOptions = {},
): TritonClient {
  return transport === 'http' ? new TritonClient({ url, ...options }) : createGrpcClient({ url, ...options });
}

/** The origin to use with raw HTTP (fetch / undici) in tests that check the wire itself. */
export const httpBase = /^https?:\/\//.test(tritonUrl)
  ? tritonUrl.replace(/\/+$/, '')
  : `http://${tritonUrl}`;
