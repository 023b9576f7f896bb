/**
 * Which running server the suite targets when TRITON_URL / TRITON_GRPC_URL are set: both
 * transports always run, so a variable left unset is derived from the other one's host and
 * Triton's default port for that protocol (HTTP 8000, gRPC 8001).
 */

/** The endpoints of a server the suite did not start. */
export interface ExternalTarget {
  /** For the HTTP client and raw HTTP requests (`host:port` or `http(s)://host:port`). */
  readonly httpUrl: string;
  /** For the gRPC client (`host:port`, `grpc://host:port` or `grpcs://host:port`). */
  readonly grpcUrl: string;
  /**
   * TRITON_TRACE_FILE: where this host reads the server's trace file (its
   * `--trace-config triton,file=…`, e.g. through a mounted directory); '' when not given.
   */
  readonly traceFile: string;
}

/** tritonserver's default ports. */
export const DEFAULT_HTTP_PORT = 8000;
export const DEFAULT_GRPC_PORT = 8001;

function hostOf(url: string): string {
  const withoutScheme = url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const authority = withoutScheme.split('/')[0] ?? '';
  if (authority.startsWith('[')) return authority.slice(0, authority.indexOf(']') + 1);
  const colon = authority.lastIndexOf(':');
  return colon === -1 ? authority : authority.slice(0, colon);
}

/** The external target the environment names, or `undefined` to start the embedded server. */
export function externalTarget(
  env: Readonly<Record<string, string | undefined>>,
): ExternalTarget | undefined {
  const http = env.TRITON_URL ?? '';
  const grpc = env.TRITON_GRPC_URL ?? '';
  if (http === '' && grpc === '') return undefined;
  return {
    httpUrl: http !== '' ? http : `${hostOf(grpc)}:${DEFAULT_HTTP_PORT}`,
    grpcUrl: grpc !== '' ? grpc : `${hostOf(http)}:${DEFAULT_GRPC_PORT}`,
    traceFile: env.TRITON_TRACE_FILE ?? '',
  };
}
