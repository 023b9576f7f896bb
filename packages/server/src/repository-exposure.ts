/**
 * The startup warning for a model-repository API anyone on the network can use. In explicit model
 * control mode the load API runs code by design, as in Triton: a `file:1/model.py` override is a
 * Python model the server executes at load. The CLI keeps tritonserver's `0.0.0.0` default, so it
 * says so when a front end that serves that API listens beyond loopback and the
 * `model-repository` category is not restricted (`--http-restricted-api` /
 * `--grpc-restricted-protocol`).
 * @packageDocumentation
 */
import { isIP } from 'node:net';

import type { StartServerOptions } from './start.js';

/** Whether `address` (a bind address or host name) only accepts connections from this host. */
export function isLoopbackAddress(address: string): boolean {
  const host = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (host.toLowerCase() === 'localhost') return true;
  const family = isIP(host);
  if (family === 4) return host.split('.')[0] === '127';
  if (family !== 6) return false;
  // The URL parser writes IPv6 addresses in their canonical compressed form (`::1`, `::ffff:7f00:1`).
  const canonical = new URL(`http://[${host}]/`).hostname.slice(1, -1);
  return canonical === '::1' || /^::ffff:7f[0-9a-f]{2}:/.test(canonical);
}

/** The front ends that run, with the ports they got. */
export interface ListeningPorts {
  /** The HTTP port, when an HTTP server runs. */
  readonly http?: number | undefined;
  /** The gRPC port, when a gRPC server runs. */
  readonly grpc?: number | undefined;
}

/**
 * One warning line per front end whose model-repository API is open to the network: the server runs
 * in explicit model control mode (the only mode whose load API loads anything), the front end binds
 * a non-loopback address, and its restriction flag does not cover `model-repository`.
 */
export function repositoryExposureWarnings(options: StartServerOptions, ports: ListeningPorts): string[] {
  if ((options.modelControlMode ?? 'none') !== 'explicit') return [];
  const warnings: string[] = [];
  const httpAddress = options.httpAddress ?? '127.0.0.1';
  if (
    ports.http !== undefined &&
    !isLoopbackAddress(httpAddress) &&
    options.httpRestrictedApi?.has('model-repository') !== true
  ) {
    warnings.push(
      exposureLine('HTTP', `${httpAddress}:${ports.http}`, '--http-address', '--http-restricted-api'),
    );
  }
  const grpcAddress = options.grpcAddress ?? '127.0.0.1';
  if (
    ports.grpc !== undefined &&
    !isLoopbackAddress(grpcAddress) &&
    options.grpc?.restrictions?.has('model-repository') !== true
  ) {
    warnings.push(
      exposureLine('GRPC', `${grpcAddress}:${ports.grpc}`, '--grpc-address', '--grpc-restricted-protocol'),
    );
  }
  return warnings;
}

function exposureLine(service: string, at: string, addressFlag: string, restrictFlag: string): string {
  return (
    `The model repository API of the ${service} service at ${at} is reachable beyond loopback and is not ` +
    `restricted: any client can load models, and a load with a 'file:' override (e.g. 'file:1/model.py') ` +
    `runs arbitrary code on this host. Bind it to loopback (${addressFlag}=127.0.0.1) or restrict it ` +
    `(${restrictFlag}=model-repository:<key>=<secret>).`
  );
}
