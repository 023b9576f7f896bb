/**
 * gRPC server addresses.
 * @packageDocumentation
 */
import { TritonInvalidArgumentError } from '../errors.js';

/** Triton's default gRPC port. */
export const DEFAULT_GRPC_PORT = 8001;

/** A parsed gRPC address. */
export interface GrpcAddress {
  /** The grpc-js target, `host:port`. */
  readonly target: string;
  /** Whether TLS was asked for by the url (`grpcs://`) or by `ssl`. */
  readonly secure: boolean;
}

/**
 * Parses `host[:port]`, `grpc://host[:port]` or `grpcs://host[:port]` (IPv6 hosts in brackets). A
 * path is refused: gRPC has none.
 * @throws TritonInvalidArgumentError on anything else.
 */
export function parseGrpcUrl(url: string, ssl = false): GrpcAddress {
  const match = /^(?:(grpcs?):\/\/)?(\[[0-9a-fA-F:.]+\]|[^/:\s[\]]+)(?::(\d{1,5}))?\/?$/.exec(url.trim());
  if (match === null) {
    throw new TritonInvalidArgumentError(
      `invalid gRPC url '${url}': expected host:port, grpc://host:port or grpcs://host:port`,
    );
  }
  const [, scheme, host, portText] = match;
  const port = portText === undefined ? DEFAULT_GRPC_PORT : Number(portText);
  if (port < 1 || port > 65_535) throw new TritonInvalidArgumentError(`invalid port in gRPC url '${url}'`);
  return { target: `${host as string}:${port}`, secure: scheme === 'grpcs' || ssl };
}
