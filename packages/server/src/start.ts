/**
 * `startServer`: the programmatic way to run tritonserver-ts (the CLI, the conformance suite and the
 * web app's tests use it). Loads the models, then serves HTTP, gRPC (when a gRPC port is given) and metrics.
 * @packageDocumentation
 */
import { ServerError } from './common/errors.js';
import { InferenceServer, type InferenceServerOptions } from './core/server.js';
import { startGrpcServer, type GrpcServerHandle } from './grpc/server.js';
import type { GrpcServerSettings } from './grpc/settings.js';
import type { Restrictions } from './http/restricted-api.js';
import { startHttpServer, type HttpServerHandle } from './http/server.js';
import { startMetricsServer, type MetricsServer } from './metrics/server.js';

/** Options of {@link startServer}: the core's options plus the network ones. */
export interface StartServerOptions extends InferenceServerOptions {
  /** HTTP port; 0 = a free port. Default 8000. */
  readonly httpPort?: number;
  /** Address to bind the HTTP (and metrics) server to. Default `127.0.0.1`. */
  readonly httpAddress?: string;
  /** `--allow-http`; default true. When false no HTTP server is started. */
  readonly allowHttp?: boolean;
  /** `--http-max-input-size` in bytes; default 64 MiB. */
  readonly httpMaxInputSize?: number;
  /** `--http-max-inflight-body-bytes` (this project's): request bodies in flight, all connections. Default max(256 MiB, 4 × httpMaxInputSize). */
  readonly httpMaxInflightBodyBytes?: number;
  /** `--http-send-timeout-secs` (this project's): a response not delivered in time closes its connection. Default 60. */
  readonly httpSendTimeoutSecs?: number;
  /** `--http-max-connection-output-bytes` (this project's): unread response bytes one connection may pile up. Default 64 MiB. */
  readonly httpMaxConnectionOutputBytes?: number;
  /** `--http-restricted-api`: API categories that require a header (see `parseRestrictions`). */
  readonly httpRestrictedApi?: Restrictions;
  /**
   * `--http-header-forward-pattern`: request headers this matches become string request parameters
   * (compile it with `compileHeaderForwardPattern` for Triton's case rules).
   */
  readonly httpHeaderForwardPattern?: RegExp;

  /**
   * gRPC port (`inference.GRPCInferenceService`); `undefined` = no gRPC server (the CLI's
   * `--allow-grpc` defaults to true and port 8001). 0 = a free port.
   */
  readonly grpcPort?: number;
  /** `--grpc-address`. Default: {@link StartServerOptions.httpAddress}'s default, `127.0.0.1`. */
  readonly grpcAddress?: string;
  /** The gRPC front end's other settings (restrictions, TLS, keepalive, message size). */
  readonly grpc?: Omit<GrpcServerSettings, 'port' | 'host'>;

  /** Metrics port (`/metrics`); `undefined` = no metrics server. 0 = a free port. */
  readonly metricsPort?: number;
  /** `--metrics-address`: address of the metrics server. Default: {@link StartServerOptions.httpAddress}. */
  readonly metricsAddress?: string;
  /** `--metrics-interval-ms`: how often the `nv_cpu_*` gauges are refreshed. Default 2000. */
  readonly metricsIntervalMs?: number;
  /** `--allow-cpu-metrics`: report the `nv_cpu_*` gauges. Default true. */
  readonly allowCpuMetrics?: boolean;
  /** `--exit-timeout-secs`: how long {@link RunningServer.close} waits for in-flight requests. Default 30. */
  readonly exitTimeoutSecs?: number;
}

/** A running server. */
export interface RunningServer {
  /** `http://host:port` of the HTTP front end. */
  readonly url: string;
  readonly httpPort: number;
  /** `host:port` of the gRPC front end (`''` when none runs). */
  readonly grpcUrl: string;
  /** The gRPC port when a gRPC server runs. */
  readonly grpcPort: number | undefined;
  /** `http://host:port/metrics` when a metrics server runs. */
  readonly metricsUrl: string | undefined;
  readonly metricsPort: number | undefined;
  /** The transport-neutral core. */
  readonly server: InferenceServer;
  /**
   * Graceful shutdown: stop accepting, wait for in-flight requests (up to `exitTimeoutSecs`), drain
   * and unload every model. Resolves `true` when every request finished in time. Idempotent.
   * `liveConnections` (the CLI on SIGINT / SIGTERM): HTTP stops as tritonserver does — the port
   * stays open while the open connections' requests are answered (new connections are reset
   * meanwhile), then it closes (see `HttpServerHandle.close`).
   */
  close(options?: { liveConnections?: boolean }): Promise<boolean>;
}

/** Thrown when `exitOnError` is set and models failed to load at startup. */
export class StartupError extends ServerError {
  readonly failures: readonly { readonly name: string; readonly reason: string }[];
  constructor(failures: readonly { readonly name: string; readonly reason: string }[]) {
    super('INTERNAL', `failed to load all models: ${failures.map((f) => f.reason).join('; ')}`);
    this.name = 'StartupError';
    this.failures = failures;
  }
}

/** Starts the server: creates the core (loading models), then listens. */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const core = await InferenceServer.create(options);
  if (options.exitOnError === true && core.startupFailures.length > 0) {
    await core.shutdown();
    throw new StartupError(core.startupFailures);
  }
  const host = options.httpAddress ?? '127.0.0.1';
  let http: HttpServerHandle | undefined;
  let grpc: GrpcServerHandle | undefined;
  let metrics: MetricsServer | undefined;
  try {
    if (options.allowHttp !== false) {
      http = await startHttpServer(core, {
        port: options.httpPort ?? 8000,
        host,
        ...(options.httpMaxInputSize !== undefined ? { maxInputSize: options.httpMaxInputSize } : {}),
        ...(options.httpMaxInflightBodyBytes !== undefined
          ? { maxInflightBodyBytes: options.httpMaxInflightBodyBytes }
          : {}),
        ...(options.httpSendTimeoutSecs !== undefined
          ? { sendTimeoutMs: options.httpSendTimeoutSecs * 1000 }
          : {}),
        ...(options.httpMaxConnectionOutputBytes !== undefined
          ? { maxConnectionOutputBytes: options.httpMaxConnectionOutputBytes }
          : {}),
        ...(options.httpRestrictedApi !== undefined ? { restrictions: options.httpRestrictedApi } : {}),
        ...(options.httpHeaderForwardPattern !== undefined
          ? { headerForwardPattern: options.httpHeaderForwardPattern }
          : {}),
      });
    }
    if (options.grpcPort !== undefined) {
      grpc = await startGrpcServer(core, {
        ...options.grpc,
        // One in-flight budget for request bodies of both front ends.
        ...(http !== undefined ? { bodyBudget: http.bodyBudget } : {}),
        port: options.grpcPort,
        host: options.grpcAddress ?? '127.0.0.1',
      });
    }
    if (options.metricsPort !== undefined) {
      metrics = await startMetricsServer({
        statistics: core.statistics,
        customMetrics: core.customMetrics,
        ...(options.metricsConfig !== undefined ? { config: options.metricsConfig } : {}),
        ...(options.metricsIntervalMs !== undefined ? { intervalMs: options.metricsIntervalMs } : {}),
        cpuMetrics: options.allowCpuMetrics !== false,
        port: options.metricsPort,
        host: options.metricsAddress ?? host,
      });
    }
  } catch (error) {
    await http?.close(0);
    await grpc?.close(0);
    await core.shutdown();
    throw error;
  }
  const showHost = (h: string): string =>
    h === '0.0.0.0' || h === '::' ? '127.0.0.1' : h.includes(':') ? `[${h}]` : h;
  const shown = showHost(host);
  let closing: Promise<boolean> | undefined;
  return {
    url: http === undefined ? '' : `http://${shown}:${http.port}`,
    httpPort: http?.port ?? 0,
    grpcUrl: grpc === undefined ? '' : `${showHost(grpc.host)}:${grpc.port}`,
    grpcPort: grpc?.port,
    metricsUrl: metrics?.url,
    metricsPort: metrics?.port,
    server: core,
    close(closeOptions = {}) {
      closing ??= (async () => {
        const timeoutMs = (options.exitTimeoutSecs ?? 30) * 1000;
        const deadline = Date.now() + timeoutMs;
        // Both front ends drain at once, within the same exit timeout.
        const [httpDone, grpcDone] = await Promise.all([
          http === undefined ? true : http.close(timeoutMs, closeOptions),
          grpc === undefined ? true : grpc.close(timeoutMs),
        ]);
        const finished = httpDone && grpcDone;
        await metrics?.close().catch(() => undefined);
        // Unloading drains the schedulers; never wait past the exit timeout for a stuck execution.
        let timer: NodeJS.Timeout | undefined;
        const drained = await Promise.race([
          core.shutdown().then(() => true),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
          }),
        ]);
        if (timer !== undefined) clearTimeout(timer);
        return finished && drained;
      })();
      return closing;
    },
  };
}
