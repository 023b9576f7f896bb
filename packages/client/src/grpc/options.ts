/**
 * Options of the gRPC transport and the channel arguments built from them, with the defaults of
 * Triton's Python gRPC client.
 * @packageDocumentation
 */
import type { ChannelOptions } from '@grpc/grpc-js';

import type { StallProbeOptions } from './stall-watch.js';

/** Triton's Python client raises both message-size limits to this (grpc-js defaults to 4 MiB receive). */
export const MAX_GRPC_MESSAGE_SIZE = 2 ** 31 - 1;

/** HTTP/2 keepalive pings, as the Python client's `KeepAliveOptions`. */
export interface GrpcKeepaliveOptions {
  /** Interval between pings in ms (`grpc.keepalive_time_ms`; default 2^31 − 1, i.e. off). */
  readonly timeMs?: number;
  /** How long to wait for a ping's acknowledgement in ms (`grpc.keepalive_timeout_ms`; default 20000). */
  readonly timeoutMs?: number;
  /** Ping even without calls in flight (`grpc.keepalive_permit_without_calls`; default false). */
  readonly permitWithoutCalls?: boolean;
  /** Pings allowed without data (`grpc.http2.max_pings_without_data`; default 2). */
  readonly maxPingsWithoutData?: number;
}

/** TLS material, as the Python client's `root_certificates`, `private_key`, `certificate_chain`. */
export interface GrpcTlsOptions {
  /** PEM CA certificates to trust (default: the system roots). */
  readonly rootCertificates?: Uint8Array | string;
  /** PEM private key of the client certificate (mutual TLS). */
  readonly privateKey?: Uint8Array | string;
  /** PEM client certificate chain (mutual TLS). */
  readonly certificateChain?: Uint8Array | string;
}

/** Options of {@link GrpcTransport}. */
export interface GrpcTransportOptions {
  /**
   * Server address: `host:port` (the Python client's form; port 8001 when omitted), or
   * `grpc://host[:port]` (plaintext) / `grpcs://host[:port]` (TLS).
   */
  readonly url: string;
  /** Use TLS for a `host:port` url (implied by `grpcs://` or by any {@link GrpcTransportOptions.tls} field). */
  readonly ssl?: boolean;
  /** Certificates for TLS. */
  readonly tls?: GrpcTlsOptions;
  /** Keepalive pings (defaults: the Python client's). */
  readonly keepalive?: GrpcKeepaliveOptions;
  /** Largest message sent, in bytes (`grpc.max_send_message_length`; default 2^31 − 1). */
  readonly maxSendMessageLength?: number;
  /** Largest message accepted, in bytes (`grpc.max_receive_message_length`; default 2^31 − 1). */
  readonly maxReceiveMessageLength?: number;
  /**
   * Any other channel arguments (`grpc.*`), applied last so they override the ones above, like the
   * Python client's `channel_args`.
   */
  readonly channelOptions?: ChannelOptions;
  /**
   * When a quiet channel is probed to find a connection that died without a word (see
   * {@link StallProbeOptions}); `false` turns the probe off. Not a Python client option.
   */
  readonly stallProbe?: StallProbeOptions | false;
}

/** The channel arguments for `options`: message sizes, keepalive, then the caller's own. */
export function channelOptionsFor(options: GrpcTransportOptions): ChannelOptions {
  const keepalive = options.keepalive ?? {};
  return {
    'grpc.max_send_message_length': options.maxSendMessageLength ?? MAX_GRPC_MESSAGE_SIZE,
    'grpc.max_receive_message_length': options.maxReceiveMessageLength ?? MAX_GRPC_MESSAGE_SIZE,
    'grpc.keepalive_time_ms': keepalive.timeMs ?? MAX_GRPC_MESSAGE_SIZE,
    'grpc.keepalive_timeout_ms': keepalive.timeoutMs ?? 20_000,
    'grpc.keepalive_permit_without_calls': keepalive.permitWithoutCalls === true ? 1 : 0,
    'grpc.http2.max_pings_without_data': keepalive.maxPingsWithoutData ?? 2,
    ...options.channelOptions,
  };
}
