/**
 * The metrics endpoint: `GET /metrics` on its own port (`--metrics-port`, default 8002), as Triton
 * serves it. Anything else answers 404 (405 for other methods on `/metrics`).
 * @packageDocumentation
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { CustomMetricsRegistry } from '../statistics/custom-metrics.js';
import type { MetricsConfig } from '../statistics/metrics-config.js';
import type { ModelStatisticsSnapshot } from '../statistics/model-statistics.js';
import type { StatisticsRegistry } from '../statistics/registry.js';
import { METRICS_CONTENT_TYPE, renderMetrics } from './render.js';
import { SystemPoller, SystemSampler, type SystemSample } from './system.js';

/** Triton's default metrics port. */
export const DEFAULT_METRICS_PORT = 8002;

/** Where the metrics come from: a registry, or a function returning the snapshots to report. */
export type MetricsSource = StatisticsRegistry | (() => readonly ModelStatisticsSnapshot[]);

/** Options of {@link createMetricsHandler}. */
export interface MetricsHandlerOptions {
  readonly statistics: MetricsSource;
  /** Report `nv_cpu_*` (Triton's `--allow-cpu-metrics`, default true). */
  readonly cpuMetrics?: boolean;
  /** `--metrics-config` (its `counter_latencies` decides whether the latency counters show). */
  readonly config?: MetricsConfig;
  /** Models' custom metric families, rendered beside the server's. */
  readonly customMetrics?: CustomMetricsRegistry;
  /**
   * Where the `nv_cpu_*` values come from (a background {@link SystemPoller}'s last reading); by
   * default the host is sampled on each scrape.
   */
  readonly systemSample?: () => SystemSample;
}

/** A `node:http` request listener serving `/metrics`. */
export function createMetricsHandler(
  options: MetricsHandlerOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const source = options.statistics;
  const read = typeof source === 'function' ? source : () => source.snapshot();
  let system: (() => SystemSample) | undefined;
  if (options.cpuMetrics !== false) {
    const sampler = options.systemSample === undefined ? new SystemSampler() : undefined;
    system = options.systemSample ?? (() => (sampler as SystemSampler).sample());
  }
  const counterLatencies = options.config?.counterLatencies ?? true;
  const custom = options.customMetrics;
  return (req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not Found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' }).end();
      return;
    }
    let body: string;
    try {
      body = renderMetrics(read(), {
        counterLatencies,
        ...(system !== undefined ? { system: system() } : {}),
        ...(custom !== undefined ? { custom: custom.snapshot() } : {}),
      });
    } catch (error) {
      res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`${String(error)}\n`);
      return;
    }
    res.writeHead(200, {
      'Content-Type': METRICS_CONTENT_TYPE,
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}

/** Options of {@link startMetricsServer}. */
export interface StartMetricsServerOptions extends MetricsHandlerOptions {
  /** Default {@link DEFAULT_METRICS_PORT}; 0 = any free port. */
  readonly port?: number;
  /** Default `0.0.0.0`. */
  readonly host?: string;
  /**
   * `--metrics-interval-ms` (default 2000): how often the `nv_cpu_*` gauges are refreshed, in the
   * background, as Triton's polling thread does (per-request metrics are not affected).
   */
  readonly intervalMs?: number;
}

/** A running metrics server. */
export interface MetricsServer {
  /** The bound port. */
  readonly port: number;
  readonly host: string;
  /** `http://host:port/metrics`. */
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

/** Starts the metrics HTTP server; resolves once it listens, rejects if it cannot bind. */
export function startMetricsServer(options: StartMetricsServerOptions): Promise<MetricsServer> {
  const port = options.port ?? DEFAULT_METRICS_PORT;
  const host = options.host ?? '0.0.0.0';
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    return Promise.reject(new RangeError(`metrics port must be an integer in 0..65535 (got ${port})`));
  }
  const poller = options.cpuMetrics === false ? undefined : new SystemPoller(options.intervalMs);
  const server = createServer(
    createMetricsHandler(poller === undefined ? options : { ...options, systemSample: () => poller.latest }),
  );
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    const failed = (error: Error): void => {
      poller?.stop();
      reject(error);
    };
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      const bound = (server.address() as AddressInfo).port;
      const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
      resolve({
        port: bound,
        host,
        url: `http://${shown}:${bound}/metrics`,
        server,
        close: () =>
          new Promise<void>((done, fail) => {
            poller?.stop();
            server.close((err) => (err === undefined ? done() : fail(err)));
            server.closeIdleConnections();
          }),
      });
    });
  });
}
