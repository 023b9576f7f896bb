/**
 * The gRPC front end's listener: a grpc-js server with tritonserver's message-size limit and
 * keepalive settings, plaintext or TLS (optionally mutual) credentials, serving
 * `inference.GRPCInferenceService` and `grpc.health.v1.Health` over the core. Shutdown drains like
 * the HTTP front end: no new calls, calls in flight may finish until the timeout, then the rest are
 * cancelled.
 * @packageDocumentation
 */
import { readFile } from 'node:fs/promises';

import { Server, ServerCredentials, type ChannelOptions } from '@grpc/grpc-js';
import { healthServiceDefinition, serviceDefinition } from '@tritonserver-ts/client/protocol/grpc';

import type { InferenceServer } from '../core/server.js';
import { GRPC_MAX_MESSAGE_BYTES } from './cli-options.js';
import { CallTracker, createHealthImplementation, createInferenceImplementation } from './service.js';
import type { GrpcServerSettings, GrpcTlsFiles } from './settings.js';
import { tolerantDefinition } from './unparsable.js';

/** A listening gRPC front end. */
export interface GrpcServerHandle {
  readonly server: Server;
  /** The bound port (the chosen one when 0 was asked). */
  readonly port: number;
  readonly host: string;
  /** Calls and open streams in flight. */
  readonly inFlight: CallTracker;
  /**
   * Stops accepting calls, waits up to `timeoutMs` for calls in flight, then cancels the rest.
   * Resolves `true` when everything finished in time. Idempotent.
   */
  close(timeoutMs: number): Promise<boolean>;
}

/** A gRPC listener that could not start. */
export class GrpcStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GrpcStartError';
  }
}

async function readPem(path: string, flag: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new GrpcStartError(`unable to read ${flag} '${path}': ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** Server credentials of `--grpc-use-ssl(-mutual)`, or insecure ones. */
export async function serverCredentials(tls: GrpcTlsFiles | undefined): Promise<ServerCredentials> {
  if (tls === undefined) return ServerCredentials.createInsecure();
  const cert = await readPem(tls.serverCertFile, '--grpc-server-cert');
  const key = await readPem(tls.serverKeyFile, '--grpc-server-key');
  const root = tls.rootCertFile !== undefined ? await readPem(tls.rootCertFile, '--grpc-root-cert') : null;
  try {
    return ServerCredentials.createSsl(root, [{ private_key: key, cert_chain: cert }], tls.mutual);
  } catch (error) {
    throw new GrpcStartError(`invalid gRPC TLS configuration: ${(error as Error).message}`, { cause: error });
  }
}

/** grpc-js channel options for the settings (tritonserver's values where a setting is absent). */
export function channelOptions(settings: GrpcServerSettings): ChannelOptions {
  const max = settings.maxMessageBytes ?? GRPC_MAX_MESSAGE_BYTES;
  return {
    'grpc.max_receive_message_length': max,
    'grpc.max_send_message_length': max,
    'grpc.keepalive_time_ms': settings.keepaliveTimeMs ?? 7_200_000,
    'grpc.keepalive_timeout_ms': settings.keepaliveTimeoutMs ?? 20_000,
    ...(settings.maxConnectionAgeMs !== undefined
      ? { 'grpc.max_connection_age_ms': settings.maxConnectionAgeMs }
      : {}),
    ...(settings.maxConnectionAgeGraceMs !== undefined
      ? { 'grpc.max_connection_age_grace_ms': settings.maxConnectionAgeGraceMs }
      : {}),
  };
}

/** `host:port` as gRPC addresses it (IPv6 hosts in brackets). */
export function grpcAddress(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Starts the gRPC front end of `core`. */
export async function startGrpcServer(
  core: InferenceServer,
  settings: GrpcServerSettings,
): Promise<GrpcServerHandle> {
  const credentials = await serverCredentials(settings.tls);
  const server = new Server(channelOptions(settings));
  const tracker = new CallTracker();
  const serviceOptions = {
    ...(settings.restrictions !== undefined ? { restrictions: settings.restrictions } : {}),
    ...(settings.headerForwardPattern !== undefined
      ? { headerForwardPattern: settings.headerForwardPattern }
      : {}),
  };
  // Undecodable requests reach the handlers (answered in gRPC C++'s words, see unparsable.ts).
  const inference = tolerantDefinition(serviceDefinition);
  const health = tolerantDefinition(healthServiceDefinition);
  server.addService(inference, createInferenceImplementation(core, inference, serviceOptions, tracker));
  server.addService(health, createHealthImplementation(core, health, serviceOptions, tracker));
  const address = grpcAddress(settings.host, settings.port);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, credentials, (error, bound) => {
      if (error !== null) {
        // tritonserver's words when the port is taken.
        const message = /EADDRINUSE/.test(error.message)
          ? `Socket '${address}' already in use `
          : `failed to start the gRPC service at ${address}: ${error.message}`;
        reject(new GrpcStartError(message, { cause: error }));
        return;
      }
      resolve(bound);
    });
  });
  let closing: Promise<boolean> | undefined;
  return {
    server,
    port,
    host: settings.host,
    inFlight: tracker,
    close(timeoutMs: number): Promise<boolean> {
      closing ??= (async () => {
        const drained = new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
        let timer: NodeJS.Timeout | undefined;
        const finished = await Promise.race([
          Promise.all([drained, tracker.idle()]).then(() => true),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(false), Math.max(0, timeoutMs));
          }),
        ]);
        if (timer !== undefined) clearTimeout(timer);
        if (!finished) server.forceShutdown();
        return finished;
      })();
      return closing;
    },
  };
}
