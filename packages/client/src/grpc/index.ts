/**
 * `@tritonserver-ts/client/grpc`: the gRPC transport (Triton's `inference.GRPCInferenceService`
 * over @grpc/grpc-js, an optional peer dependency: install it to use this entry point), a factory
 * for a `TritonClient` over gRPC, and `ModelStreamInfer` streams.
 * @packageDocumentation
 */
import { TritonClient } from '../client.js';
import type { ClientOptions } from '../options.js';
import { GrpcTransport } from './grpc-transport.js';
import type { GrpcTransportOptions } from './options.js';

export {
  GRPC_REQUEST_BUFFERS,
  GrpcTransport,
  type StreamCallback,
  type StreamRequest,
} from './grpc-transport.js';
export {
  GrpcInferStream,
  streamResponseFrom,
  type StreamInferOptions,
  type StreamOptions,
  type StreamResponse,
} from './stream.js';
export {
  MAX_GRPC_MESSAGE_SIZE,
  channelOptionsFor,
  type GrpcKeepaliveOptions,
  type GrpcTlsOptions,
  type GrpcTransportOptions,
} from './options.js';
export { DEFAULT_GRPC_PORT, parseGrpcUrl, type GrpcAddress } from './url.js';
export { DEFAULT_STALL_PROBE, type StallProbeOptions } from './stall-watch.js';
export { tritonErrorFromGrpc, isServiceError } from './status.js';
export { metadataFromHeaders } from './metadata.js';

/** Options of {@link createGrpcClient}: the client's options (no `transport`) and the transport's. */
export type GrpcClientOptions = Omit<ClientOptions, 'url' | 'transport' | 'ssl' | 'connections'> &
  GrpcTransportOptions;

/**
 * A `TritonClient` over gRPC: the same API, options and errors as over HTTP.
 *
 * ```ts
 * const client = createGrpcClient({ url: 'localhost:8001' });
 * await client.isServerReady();
 * await client.close();
 * ```
 */
export function createGrpcClient(
  options: GrpcClientOptions,
): TritonClient & { readonly transport: GrpcTransport } {
  const {
    url,
    ssl,
    tls,
    keepalive,
    maxSendMessageLength,
    maxReceiveMessageLength,
    channelOptions,
    stallProbe,
    ...clientOptions
  } = options;
  const transport = new GrpcTransport({
    url,
    ...(ssl !== undefined ? { ssl } : {}),
    ...(tls !== undefined ? { tls } : {}),
    ...(keepalive !== undefined ? { keepalive } : {}),
    ...(maxSendMessageLength !== undefined ? { maxSendMessageLength } : {}),
    ...(maxReceiveMessageLength !== undefined ? { maxReceiveMessageLength } : {}),
    ...(channelOptions !== undefined ? { channelOptions } : {}),
    ...(stallProbe !== undefined ? { stallProbe } : {}),
  });
  return new TritonClient({ ...clientOptions, transport }) as TritonClient & {
    readonly transport: GrpcTransport;
  };
}
