/**
 * The gRPC front end's listener: a grpc-js server with tritonserver's message-size limit and
 * keepalive settings, plaintext or TLS (optionally mutual) credentials, serving
 * `inference.GRPCInferenceService` and `grpc.health.v1.Health` over the core. Shutdown drains like
 * the HTTP front end: no new calls, calls in flight may finish until the timeout, then the rest are
 * cancelled; open streams stop reading requests at once and end after answering those in flight. Its
 * memory limits (issue 23): unread answers per connection and the send timeout (`output-guard.ts`),
 * streams that stop reading while their answers wait, compressed requests inflated within the
 * in-flight budget shared with HTTP (`inflate.ts`), and a cap on concurrent HTTP/2 streams.
 * @packageDocumentation
 */
import { readFile } from 'node:fs/promises';

import { Server, ServerCredentials, type ChannelOptions } from '@grpc/grpc-js';
import { healthServiceDefinition, serviceDefinition } from '@tritonserver-ts/protocol/grpc';

import type { Http2SecureServer, Http2Server } from 'node:http2';

import type { InferenceServer } from '../core/server.js';
import { DEFAULT_MAX_INFLIGHT_BODY_BYTES, MemoryBudget } from '../http/memory-budget.js';
import { GRPC_MAX_MESSAGE_BYTES } from './cli-options.js';
import { installAlignedMessages } from './aligned-messages.js';
import { applyFlowControl } from './flow-control.js';
import { installBudgetedInflate } from './inflate.js';
import {
  DEFAULT_GRPC_MAX_CONNECTION_OUTPUT_BYTES,
  DEFAULT_GRPC_SEND_TIMEOUT_MS,
  GrpcOutputGuard,
} from './output-guard.js';
import { serverDefinition } from './server-definition.js';
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
  /** Unread answers per connection, and the connections closed for not reading them. */
  readonly outputGuard: GrpcOutputGuard;
  /** The in-flight budget compressed requests are inflated within (shared with HTTP when given). */
  readonly bodyBudget: MemoryBudget;
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

/** Default of `--grpc-max-concurrent-streams`: HTTP/2 streams one connection may have open. */
export const DEFAULT_GRPC_MAX_CONCURRENT_STREAMS = 1024;

/** grpc-js channel options for the settings (tritonserver's values where a setting is absent). */
export function channelOptions(settings: GrpcServerSettings): ChannelOptions {
  const max = settings.maxMessageBytes ?? GRPC_MAX_MESSAGE_BYTES;
  return {
    'grpc.max_concurrent_streams': settings.maxConcurrentStreams ?? DEFAULT_GRPC_MAX_CONCURRENT_STREAMS,
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
  installBudgetedInflate();
  installAlignedMessages();
  const server = new Server(channelOptions(settings));
  const tracker = new CallTracker();
  const maxConnectionOutputBytes =
    settings.maxConnectionOutputBytes ?? DEFAULT_GRPC_MAX_CONNECTION_OUTPUT_BYTES;
  const outputGuard = new GrpcOutputGuard({
    sendTimeoutMs: settings.sendTimeoutMs ?? DEFAULT_GRPC_SEND_TIMEOUT_MS,
    maxConnectionOutputBytes,
    onCut: (error) => core.logger.warn(error.message),
  });
  const bodyBudget = settings.bodyBudget ?? new MemoryBudget(DEFAULT_MAX_INFLIGHT_BODY_BYTES);
  const serviceOptions = {
    ...(settings.restrictions !== undefined ? { restrictions: settings.restrictions } : {}),
    ...(settings.headerForwardPattern !== undefined
      ? { headerForwardPattern: settings.headerForwardPattern }
      : {}),
    outputGuard,
    maxStreamOutputBytes: maxConnectionOutputBytes,
    // Shared-memory inputs count against the message limit and the in-flight budget (issue 23).
    inputLimits: { budget: bodyBudget, maxMessageBytes: settings.maxMessageBytes ?? GRPC_MAX_MESSAGE_BYTES },
    ...(settings.streamMaxInflightRequests !== undefined
      ? { streamMaxInflightRequests: settings.streamMaxInflightRequests }
      : {}),
  };
  // Undecodable requests reach the handlers (answered in gRPC C++'s words, see unparsable.ts);
  // compressed ones are inflated within the in-flight budget (inflate.ts).
  const inference = tolerantDefinition(serverDefinition(serviceDefinition), { budget: bodyBudget });
  const health = tolerantDefinition(healthServiceDefinition, { budget: bodyBudget });
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
  // grpc-js keeps its HTTP/2 servers to itself: the guard watches their sessions.
  const http2Servers = (server as unknown as { http2Servers?: Map<Http2Server | Http2SecureServer, unknown> })
    .http2Servers;
  if (!(http2Servers instanceof Map)) {
    server.forceShutdown();
    throw new GrpcStartError('@grpc/grpc-js keeps no http2Servers map: update src/grpc/server.ts');
  }
  for (const http2Server of http2Servers.keys()) {
    outputGuard.watch(http2Server);
    // Receive windows sized for image-sized requests when asked for (flow-control.ts, issue 31).
    if (settings.flowControl !== undefined) applyFlowControl(http2Server, settings.flowControl);
  }
  let closing: Promise<boolean> | undefined;
  return {
    server,
    port,
    host: settings.host,
    inFlight: tracker,
    outputGuard,
    bodyBudget,
    close(timeoutMs: number): Promise<boolean> {
      closing ??= (async () => {
        // Open streams read no more requests and end once what they took is answered.
        tracker.drain();
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
