/**
 * tritonserver's gRPC flags, read into the gRPC front end's options. Each flag is either applied
 * (grpc-js has the knob), accepted with a warning when it is given a value grpc-js cannot honour, or
 * refused. Pure: no I/O (the TLS files are read when the server starts).
 * @packageDocumentation
 */
import { compileHeaderForwardPattern } from '../core/header-forward.js';
import type { GrpcServerSettings } from './settings.js';

/** tritonserver's fixed gRPC message limit (`MAX_GRPC_MESSAGE_SIZE = INT32_MAX`), our default. */
export const GRPC_MAX_MESSAGE_BYTES = 2_147_483_647;

/** A bad gRPC flag; the message is what the CLI prints. */
export class GrpcFlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GrpcFlagError';
  }
}

/** How the CLI parser exposes the flags it read. */
export interface FlagReader {
  /** Was the flag given on the command line? */
  has(name: string): boolean;
  /** The flag's last value, or its default. */
  string(name: string): string | undefined;
  bool(name: string): boolean;
  int(name: string, min?: number, max?: number): number;
}

/** HTTP/2's initial window (RFC 9113 §6.9.2), the smallest the window flags take, and its largest. */
const HTTP2_MIN_WINDOW = 65_535;
const HTTP2_MAX_WINDOW = 2_147_483_647;

/** The flags whose ping-policy values grpc-js does not enforce, with tritonserver's defaults. */
const PING_POLICY_DEFAULTS: Readonly<Record<string, number | boolean>> = {
  'grpc-keepalive-permit-without-calls': false,
  'grpc-http2-max-pings-without-data': 2,
  'grpc-http2-min-recv-ping-interval-without-data': 300_000,
  'grpc-http2-max-ping-strikes': 2,
};

/** Result of {@link grpcOptionsFromFlags}. */
export interface GrpcFlagResult {
  /** Settings of the gRPC front end (port and address included). */
  readonly settings: GrpcServerSettings;
  /** Startup warnings for flags accepted without effect. */
  readonly warnings: readonly string[];
}

/**
 * Reads `--grpc-*` flags. `--allow-grpc` and `--grpc-restricted-protocol` are read by the caller.
 * @throws GrpcFlagError with tritonserver's message where it has one
 */
export function grpcOptionsFromFlags(flags: FlagReader): GrpcFlagResult {
  const warnings: string[] = [];

  // tritonserver's checks and words.
  const level = (flags.string('grpc-infer-response-compression-level') ?? 'none').toLowerCase();
  if (!['none', 'low', 'medium', 'high'].includes(level)) {
    throw new GrpcFlagError('invalid argument for --grpc_infer_response_compression_level');
  }
  if (level !== 'none') {
    throw new GrpcFlagError(
      `--grpc-infer-response-compression-level=${level} is not supported: grpc-js does not compress responses (use none; clients may still send compressed requests)`,
    );
  }
  const threads = flags.int('grpc-infer-thread-count', Number.MIN_SAFE_INTEGER);
  if (threads < 2 || threads > 128) {
    throw new GrpcFlagError('invalid argument for --grpc_infer_thread_count. Must be in the range 2 to 128.');
  }
  if (flags.has('grpc-infer-thread-count')) {
    warnings.push('--grpc-infer-thread-count has no effect: gRPC calls are served on the event loop');
  }
  if (flags.has('grpc-infer-allocation-pool-size')) {
    flags.int('grpc-infer-allocation-pool-size', Number.MIN_SAFE_INTEGER);
    warnings.push(
      '--grpc-infer-allocation-pool-size has no effect: tritonserver-ts keeps no per-call state pool',
    );
  }
  if (flags.has('grpc-max-response-pool-size')) {
    if (flags.int('grpc-max-response-pool-size', Number.MIN_SAFE_INTEGER) <= 0) {
      throw new GrpcFlagError('Error: --grpc-max-response-pool-size must be greater than 0.');
    }
    warnings.push(
      '--grpc-max-response-pool-size has no effect: no model here answers more than one response per request',
    );
  }
  for (const [name, def] of Object.entries(PING_POLICY_DEFAULTS)) {
    if (!flags.has(name)) continue;
    const given = typeof def === 'boolean' ? flags.bool(name) : flags.int(name, 0);
    if (given !== def) {
      warnings.push(`--${name}=${String(given)} is not enforced: grpc-js servers do not police client pings`);
    }
  }

  if (flags.has('reuse-grpc-port') && flags.bool('reuse-grpc-port')) {
    throw new GrpcFlagError(
      '--reuse-grpc-port=true is not supported: grpc-js cannot share a port (SO_REUSEPORT)',
    );
  }

  const useMutual = flags.has('grpc-use-ssl-mutual') && flags.bool('grpc-use-ssl-mutual');
  // As tritonserver: --grpc-use-ssl-mutual implies --grpc-use-ssl.
  const useSsl = useMutual || (flags.has('grpc-use-ssl') && flags.bool('grpc-use-ssl'));
  const serverCert = flags.string('grpc-server-cert');
  const serverKey = flags.string('grpc-server-key');
  const rootCert = flags.string('grpc-root-cert');
  if (useSsl && (serverCert === undefined || serverKey === undefined)) {
    throw new GrpcFlagError('--grpc-use-ssl requires --grpc-server-cert and --grpc-server-key');
  }
  if (useMutual && rootCert === undefined) {
    throw new GrpcFlagError(
      '--grpc-use-ssl-mutual requires --grpc-root-cert (the CA client certificates must chain to)',
    );
  }

  let headerForwardPattern: RegExp | undefined;
  const pattern = flags.string('grpc-header-forward-pattern');
  if (pattern !== undefined) {
    try {
      // Case-insensitive unless the pattern starts with (?-i), as tritonserver matches.
      headerForwardPattern = compileHeaderForwardPattern(pattern, '--grpc-header-forward-pattern');
    } catch (error) {
      throw new GrpcFlagError((error as Error).message);
    }
  }

  const settings: GrpcServerSettings = {
    port: flags.int('grpc-port', 0, 65535),
    host: flags.string('grpc-address') ?? '0.0.0.0',
    keepaliveTimeMs: flags.int('grpc-keepalive-time', 1),
    keepaliveTimeoutMs: flags.int('grpc-keepalive-timeout', 1),
    ...(flags.has('grpc-max-connection-age')
      ? { maxConnectionAgeMs: flags.int('grpc-max-connection-age', 1) }
      : {}),
    ...(flags.has('grpc-max-connection-age-grace')
      ? { maxConnectionAgeGraceMs: flags.int('grpc-max-connection-age-grace', 1) }
      : {}),
    maxMessageBytes: flags.int('grpc-max-message-bytes', 1, GRPC_MAX_MESSAGE_BYTES),
    sendTimeoutMs: flags.int('grpc-send-timeout-secs', 1, 2_147_483) * 1000,
    maxConnectionOutputBytes: flags.int('grpc-max-connection-output-bytes', 1),
    streamMaxInflightRequests: flags.int('grpc-stream-max-inflight-requests', 1),
    maxConcurrentStreams: flags.int('grpc-max-concurrent-streams', 1, 2_147_483_647),
    ...(flags.has('grpc-http2-stream-window-bytes') || flags.has('grpc-http2-connection-window-bytes')
      ? {
          flowControl: {
            streamWindowBytes: flags.int(
              'grpc-http2-stream-window-bytes',
              HTTP2_MIN_WINDOW,
              HTTP2_MAX_WINDOW,
            ),
            connectionWindowBytes: flags.int(
              'grpc-http2-connection-window-bytes',
              HTTP2_MIN_WINDOW,
              HTTP2_MAX_WINDOW,
            ),
          },
        }
      : {}),
    ...(useSsl
      ? {
          tls: {
            serverCertFile: serverCert as string,
            serverKeyFile: serverKey as string,
            ...(rootCert !== undefined ? { rootCertFile: rootCert } : {}),
            mutual: useMutual,
          },
        }
      : {}),
    ...(headerForwardPattern !== undefined ? { headerForwardPattern } : {}),
  };
  return { settings, warnings };
}
