/**
 * The gRPC service implementations: every RPC of `inference.GRPCInferenceService` and
 * `grpc.health.v1.Health/Check`, each behind the `--grpc-restricted-protocol` check, with core
 * errors mapped by the status table, calls counted for a draining shutdown, and one verbose log
 * line per call (`--log-verbose=1`), as the HTTP front end does.
 * @packageDocumentation
 */
import {
  status as GrpcStatus,
  type ServerDuplexStream,
  type ServerUnaryCall,
  type ServiceDefinition,
  type UntypedServiceImplementation,
  type sendUnaryData,
} from '@grpc/grpc-js';
import type { ModelInferRequest, ModelStreamInferResponse } from '@tritonserver-ts/protocol/grpc';

import type { InferenceServer } from '../core/server.js';
import { toServerError } from '../common/errors.js';
import type { Restrictions } from '../http/restricted-api.js';
import { healthCheck, modelReady, serverLive, serverReady } from './handlers/health.js';
import { modelInferHandler, type InferHandlerOptions } from './handlers/infer.js';
import { modelConfig, modelMetadata, serverMetadata } from './handlers/metadata.js';
import { repositoryIndex, repositoryModelLoad, repositoryModelUnload } from './handlers/repository.js';
import { logSettings, traceSetting } from './handlers/settings.js';
import {
  cudaSharedMemoryRegister,
  cudaSharedMemoryStatus,
  cudaSharedMemoryUnregister,
  systemSharedMemoryRegister,
  systemSharedMemoryStatus,
  systemSharedMemoryUnregister,
} from './handlers/shared-memory.js';
import { modelStatistics } from './handlers/statistics.js';
import { serveStream } from './handlers/stream.js';
import type { CallContext, UnaryHandler } from './handlers/types.js';
import { DEFAULT_GRPC_MAX_CONNECTION_OUTPUT_BYTES, type GrpcOutputGuard } from './output-guard.js';
import { isOverBudget, releaseRequestMemory } from './inflate.js';
import { restrictionRefusal } from './restrictions.js';
import { grpcError, grpcErrorFor } from './status.js';
import { isUnparsable, unparsableError } from './unparsable.js';

/** Counts calls in flight so shutdown can wait for them, and drains open streams. */
export class CallTracker {
  #count = 0;
  #waiters: (() => void)[] = [];
  readonly #drains = new Set<() => void>();
  #draining = false;

  /**
   * Registers an open stream's drain, run by {@link CallTracker.drain} (at once when draining
   * already); returns the unregistration.
   */
  onDrain(drain: () => void): () => void {
    if (this.#draining) {
      drain();
      return () => undefined;
    }
    this.#drains.add(drain);
    return () => this.#drains.delete(drain);
  }

  /** Shutdown: every open stream reads no more requests and ends once its answers are written. */
  drain(): void {
    this.#draining = true;
    const drains = [...this.#drains];
    this.#drains.clear();
    for (const d of drains) d();
  }

  /** Calls (and open streams) in flight. */
  get count(): number {
    return this.#count;
  }

  /** A call started; returns its `done` (idempotent). */
  start(): () => void {
    this.#count++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#count--;
      if (this.#count === 0) {
        const w = this.#waiters;
        this.#waiters = [];
        for (const f of w) f();
      }
    };
  }

  /** Resolves when no call is in flight. */
  idle(): Promise<void> {
    return this.#count === 0 ? Promise.resolve() : new Promise((resolve) => this.#waiters.push(resolve));
  }
}

/** Options of {@link createImplementations}. */
export interface ServiceOptions extends InferHandlerOptions {
  readonly restrictions?: Restrictions;
  /** Unread output per connection: calls on a connection over its cap are held back or refused. */
  readonly outputGuard?: GrpcOutputGuard;
  /** `--grpc-stream-max-inflight-requests`: requests one stream may have in flight before it stops reading. */
  readonly streamMaxInflightRequests?: number;
  /** `--grpc-max-connection-output-bytes`: unread answer bytes after which a stream stops reading. */
  readonly maxStreamOutputBytes?: number;
}

/** Default of `--grpc-stream-max-inflight-requests`. */
export const DEFAULT_GRPC_STREAM_MAX_INFLIGHT_REQUESTS = 128;

/** The unary RPCs of `inference.GRPCInferenceService` by name. */
function unaryHandlers(options: ServiceOptions): Record<string, UnaryHandler<never, unknown>> {
  return {
    ServerLive: serverLive,
    ServerReady: serverReady,
    ModelReady: modelReady,
    ServerMetadata: serverMetadata,
    ModelMetadata: modelMetadata,
    ModelInfer: modelInferHandler(options),
    ModelConfig: modelConfig,
    ModelStatistics: modelStatistics,
    RepositoryIndex: repositoryIndex,
    RepositoryModelLoad: repositoryModelLoad,
    RepositoryModelUnload: repositoryModelUnload,
    SystemSharedMemoryStatus: systemSharedMemoryStatus,
    SystemSharedMemoryRegister: systemSharedMemoryRegister,
    SystemSharedMemoryUnregister: systemSharedMemoryUnregister,
    CudaSharedMemoryStatus: cudaSharedMemoryStatus,
    CudaSharedMemoryRegister: cudaSharedMemoryRegister,
    CudaSharedMemoryUnregister: cudaSharedMemoryUnregister,
    TraceSetting: traceSetting,
    LogSettings: logSettings,
  };
}

function logCall(core: InferenceServer, method: string, code: string, receivedAt: bigint): void {
  if (!core.logger.isVerbose(1)) return;
  core.logger.verbose(
    1,
    JSON.stringify({ grpc: method, status: code, ms: Number(process.hrtime.bigint() - receivedAt) / 1e6 }),
  );
}

function unary(
  core: InferenceServer,
  method: string,
  restrictionName: string,
  handler: UnaryHandler<never, unknown>,
  options: ServiceOptions,
  tracker: CallTracker,
): (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => void {
  return (call, callback) => {
    if (isUnparsable(call.request)) {
      // gRPC C++ refuses it before tritonserver sees the call (no restriction check, no log line).
      callback(unparsableError());
      return;
    }
    if (isOverBudget(call.request)) {
      // Decoded requests in flight, over both front ends, already fill the budget.
      callback(grpcError(GrpcStatus.UNAVAILABLE, call.request.message));
      return;
    }
    const receivedAt = process.hrtime.bigint();
    const done = tracker.start();
    const controller = new AbortController();
    call.once('cancelled', () => controller.abort());
    const refusal = restrictionRefusal(options.restrictions, restrictionName, call.metadata);
    if (refusal !== undefined) {
      logCall(core, method, 'UNAVAILABLE', receivedAt);
      releaseRequestMemory(call.request);
      done();
      callback(refusal);
      return;
    }
    const guard = options.outputGuard;
    if (guard !== undefined) {
      const peer = call.getPeer();
      if (guard.overCap(peer)) {
        // The client reads none of the answers it already has: it gets no more.
        logCall(core, method, 'RESOURCE_EXHAUSTED', receivedAt);
        releaseRequestMemory(call.request);
        done();
        callback(grpcError(GrpcStatus.RESOURCE_EXHAUSTED, guard.overCapMessage(peer)));
        return;
      }
    }
    const ctx: CallContext = { core, metadata: call.metadata, signal: controller.signal, receivedAt };
    void (async () => {
      try {
        const response = await handler(call.request as never, ctx);
        logCall(core, method, 'OK', receivedAt);
        callback(null, response);
      } catch (error) {
        logCall(core, method, toServerError(error).kind, receivedAt);
        callback(grpcErrorFor(error));
      } finally {
        releaseRequestMemory(call.request);
        done();
      }
    })();
  };
}

/** The rpc name of a method definition (`/inference.GRPCInferenceService/ServerLive` → `ServerLive`). */
function rpcName(definition: { readonly path: string }): string {
  return definition.path.slice(definition.path.lastIndexOf('/') + 1);
}

/**
 * Implementations of `inference.GRPCInferenceService`, keyed like `definition` (whatever its key
 * style), for `server.addService(definition, …)`.
 */
export function createInferenceImplementation(
  core: InferenceServer,
  definition: ServiceDefinition,
  options: ServiceOptions,
  tracker: CallTracker,
): UntypedServiceImplementation {
  const handlers = unaryHandlers(options);
  const impl: UntypedServiceImplementation = {};
  for (const [key, method] of Object.entries(definition)) {
    const name = rpcName(method);
    if (name === 'ModelStreamInfer') {
      impl[key] = (call: ServerDuplexStream<ModelInferRequest, ModelStreamInferResponse>) => {
        const done = tracker.start();
        const refusal = restrictionRefusal(options.restrictions, name, call.metadata);
        if (refusal !== undefined) {
          call.emit('error', refusal);
          done();
          return;
        }
        const guard = options.outputGuard;
        const peer = call.getPeer();
        serveStream(core, call, options, {
          onDone: done,
          registerDrain: (drain) => tracker.onDrain(drain),
          limits: {
            maxInflightRequests:
              options.streamMaxInflightRequests ?? DEFAULT_GRPC_STREAM_MAX_INFLIGHT_REQUESTS,
            maxOutputBytes: options.maxStreamOutputBytes ?? DEFAULT_GRPC_MAX_CONNECTION_OUTPUT_BYTES,
            ...(guard !== undefined ? { connectionOverCap: () => guard.overCap(peer) } : {}),
          },
        });
      };
      continue;
    }
    const handler = handlers[name];
    if (handler === undefined) continue;
    impl[key] = unary(core, name, name, handler, options, tracker);
  }
  return impl;
}

/** The implementation of `grpc.health.v1.Health` (`Check`; `Watch` is left unimplemented, as tritonserver). */
export function createHealthImplementation(
  core: InferenceServer,
  definition: ServiceDefinition,
  options: ServiceOptions,
  tracker: CallTracker,
): UntypedServiceImplementation {
  const impl: UntypedServiceImplementation = {};
  for (const [key, method] of Object.entries(definition)) {
    if (rpcName(method) !== 'Check') continue;
    impl[key] = unary(
      core,
      'grpc.health.v1.Health/Check',
      'grpc.health.v1.Health/Check',
      healthCheck,
      options,
      tracker,
    );
  }
  return impl;
}
