/**
 * Options of the gRPC front end.
 * @packageDocumentation
 */
import type { Restrictions } from '../http/restricted-api.js';

/** PEM files of `--grpc-use-ssl` / `--grpc-use-ssl-mutual`. */
export interface GrpcTlsFiles {
  /** `--grpc-server-cert`: the server's certificate (chain). */
  readonly serverCertFile: string;
  /** `--grpc-server-key`: the server's private key. */
  readonly serverKeyFile: string;
  /** `--grpc-root-cert`: CA certificates client certificates must chain to (mutual TLS). */
  readonly rootCertFile?: string;
  /** `--grpc-use-ssl-mutual`: require and verify a client certificate. */
  readonly mutual: boolean;
}

/** Settings of {@link startGrpcServer}. */
export interface GrpcServerSettings {
  /** Port; 0 picks a free one. */
  readonly port: number;
  /** Address to bind (`--grpc-address`). */
  readonly host: string;
  /** `--grpc-restricted-protocol`: categories that require `triton-grpc-protocol-<key>` metadata. */
  readonly restrictions?: Restrictions;
  /** TLS; absent = plaintext (insecure credentials), tritonserver's default. */
  readonly tls?: GrpcTlsFiles;
  /** `--grpc-keepalive-time` in ms (tritonserver: 7200000). */
  readonly keepaliveTimeMs?: number;
  /** `--grpc-keepalive-timeout` in ms (tritonserver: 20000). */
  readonly keepaliveTimeoutMs?: number;
  /** `--grpc-max-connection-age` in ms; absent = unlimited. */
  readonly maxConnectionAgeMs?: number;
  /** `--grpc-max-connection-age-grace` in ms; absent = unlimited. */
  readonly maxConnectionAgeGraceMs?: number;
  /** Largest message received or sent, in bytes (tritonserver: 2147483647, fixed). */
  readonly maxMessageBytes?: number;
  /** `--grpc-header-forward-pattern`: matching metadata becomes string request parameters. */
  readonly headerForwardPattern?: RegExp;
}
