/**
 * Options of the gRPC front end.
 * @packageDocumentation
 */
import type { MemoryBudget } from '../http/memory-budget.js';
import type { GrpcFlowControl } from './flow-control.js';
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
  /**
   * `--grpc-send-timeout-secs` in ms (this project's): a connection with answers waiting whose client
   * takes none of them for this long is closed. Default 60000 (as HTTP's).
   */
  readonly sendTimeoutMs?: number;
  /**
   * `--grpc-max-connection-output-bytes` (this project's): unread answer bytes one connection may hold;
   * over it, new unary calls are refused with RESOURCE_EXHAUSTED and its streams stop reading
   * requests; one stream stops reading past it on its own too. Default 64 MiB.
   */
  readonly maxConnectionOutputBytes?: number;
  /**
   * `--grpc-stream-max-inflight-requests` (this project's): requests one `ModelStreamInfer` stream may
   * have in flight before it stops reading more (HTTP/2 flow control holds the client). Default 128.
   */
  readonly streamMaxInflightRequests?: number;
  /** `--grpc-max-concurrent-streams` (this project's): HTTP/2 streams per connection. Default 1024. */
  readonly maxConcurrentStreams?: number;
  /**
   * The in-flight request budget shared with the HTTP front end (`--http-max-inflight-body-bytes`):
   * compressed messages are inflated within it. Absent: a budget of the HTTP default.
   */
  readonly bodyBudget?: MemoryBudget;
  /**
   * HTTP/2 receive windows set on each connection (`flow-control.ts`, issue 31), e.g.
   * `DEFAULT_GRPC_FLOW_CONTROL` of that module for image-sized requests. Absent: grpc-js's, HTTP/2's 64 KiB.
   */
  readonly flowControl?: GrpcFlowControl;
}
