/**
 * A server in its own process for memory tests (`test/http/memory-process.test.ts`), started with
 * `fork(this file, [JSON options], { execArgv: ['--expose-gc', '--import', 'tsx'] })`. It writes the
 * test models named in `models` into a temp directory, serves them with `http` options on 127.0.0.1,
 * sends `{ port }` when listening, and answers each `'stats'` message with the memory it holds after a
 * full garbage collection; `'close'` shuts it down and exits. With `grpc` options it also serves gRPC on
 * 127.0.0.1 (its port sent as `grpcPort`); `core` options go to the core (e.g. shared-memory limits).
 * It keeps V8's own heap growth, as `startServer` does (ADR 18: the `tritonserver-ts` command
 * grows the heap to 4x its live size; with that, peaks under these attacks were the same but the
 * RSS left after an attack varied more: 680–1,189 MiB against 551–770 in item 5).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { InferenceServer, type InferenceServerOptions } from '../../src/core/server.js';
import { startGrpcServer, type GrpcServerHandle } from '../../src/grpc/server.js';
import type { GrpcServerSettings } from '../../src/grpc/settings.js';
import { startHttpServer, type HttpServerOptions } from '../../src/http/server.js';
import { writeTestModelRepository } from '../../src/testing/index.js';

/** What the parent passes (JSON, first argument). */
export interface MemoryServerOptions {
  readonly models: readonly string[];
  readonly http: Omit<HttpServerOptions, 'port' | 'host'>;
  /** Serve gRPC too, with these settings (JSON-able ones only). */
  readonly grpc?: Omit<
    GrpcServerSettings,
    'port' | 'host' | 'headerForwardPattern' | 'restrictions' | 'bodyBudget'
  >;
  /** More options of the core (JSON-able ones only). */
  readonly core?: Partial<Omit<InferenceServerOptions, 'modelRepositories' | 'logSink'>>;
}

/** The answer to `'stats'`. */
export interface MemoryServerStats {
  /** Bytes, after `gc()`. */
  readonly rss: number;
  readonly heapUsed: number;
  readonly external: number;
  readonly arrayBuffers: number;
  readonly bodyBudgetUsed: number;
  readonly unsentResponseBytes: number;
  readonly connectionsCut: number;
  readonly connections: number;
  /** gRPC (when served): unread answer bytes, connections closed by the send timeout, connections open. */
  readonly grpcUnsentBytes?: number;
  readonly grpcConnectionsCut?: number;
  readonly grpcConnections?: number;
}

const options = JSON.parse(process.argv[2] ?? '{}') as MemoryServerOptions;
const dir = await mkdtemp(join(tmpdir(), 'tritonserver-ts-memory-'));
await writeTestModelRepository(dir, { only: options.models });
const core = await InferenceServer.create({
  ...options.core,
  modelRepositories: [dir],
  logSink: () => undefined,
});
const http = await startHttpServer(core, { ...options.http, port: 0, host: '127.0.0.1' });
const grpc: GrpcServerHandle | undefined =
  options.grpc !== undefined
    ? await startGrpcServer(core, {
        ...options.grpc,
        port: 0,
        host: '127.0.0.1',
        bodyBudget: http.bodyBudget,
      })
    : undefined;
const gc = (globalThis as { gc?: () => void }).gc;

process.on('message', (message: unknown) => {
  if (message === 'stats') {
    gc?.();
    gc?.();
    const m = process.memoryUsage();
    http.server.getConnections((_, connections) => {
      const stats: MemoryServerStats = {
        rss: m.rss,
        heapUsed: m.heapUsed,
        external: m.external,
        arrayBuffers: m.arrayBuffers,
        bodyBudgetUsed: http.bodyBudget.used,
        unsentResponseBytes: http.responseWriter.unsentBytes,
        connectionsCut: http.responseWriter.connectionsCut,
        connections,
        ...(grpc !== undefined
          ? {
              grpcUnsentBytes: grpc.outputGuard.unsentBytes,
              grpcConnectionsCut: grpc.outputGuard.connectionsCut,
              grpcConnections: grpc.outputGuard.connections,
            }
          : {}),
      };
      process.send?.(stats);
    });
  } else if (message === 'close') {
    void (async () => {
      await grpc?.close(1000);
      await http.close(1000);
      await core.shutdown();
      await rm(dir, { recursive: true, force: true });
      process.exit(0);
    })();
  }
});
process.send?.({ port: http.port, ...(grpc !== undefined ? { grpcPort: grpc.port } : {}) });
