#!/usr/bin/env node
/**
 * `tritonserver-ts`: run the embedded Triton-compatible server from the command line.
 * Exit codes: 0 after a graceful shutdown (SIGINT / SIGTERM / SIGHUP, the parent that started it
 * with an IPC channel going away, or the npm process of `npx tritonserver-ts` being signalled or
 * exiting: `process/stop-requests.ts`; one during startup stops the server once it has started);
 * 1 on a bad command line, a startup failure (including a model that fails to load with
 * `--exit-on-error=true`), or a second stop request (exit at once).
 * @packageDocumentation
 */
import { readFileSync } from 'node:fs';

import { applyHeapGrowingPercent } from '@tritonserver-ts/protocol';

import { CliUsageError, parseArgs, usage } from './cli-args.js';
import { GrpcStartError } from './grpc/server.js';
import { onStopRequests, type StopRequest } from './process/stop-requests.js';
import { repositoryExposureWarnings } from './repository-exposure.js';
import { startServer, StartupError, type RunningServer } from './start.js';

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  const line = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+`;
  const fmt = (r: readonly string[]): string =>
    `| ${r.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  const [head, ...body] = rows;
  return [line, fmt(head ?? []), line, ...body.map(fmt), line].join('\n');
}

async function main(argv: readonly string[]): Promise<number> {
  let options;
  try {
    options = parseArgs(argv);
  } catch (error) {
    if (error instanceof CliUsageError) {
      process.stderr.write(
        `tritonserver-ts: ${error.message}\nRun 'tritonserver-ts --help' for the list of options.\n`,
      );
      return 1;
    }
    throw error;
  }
  if (options.help) {
    process.stdout.write(usage() + '\n');
    return 0;
  }
  if (options.version) {
    process.stdout.write(`tritonserver-ts ${packageVersion()}\n`);
    return 0;
  }
  // V8's heap growth for image-sized requests (issue 31, `applyHeapGrowingPercent`): full garbage
  // collections every 10–20 food requests otherwise.
  try {
    applyHeapGrowingPercent();
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    process.stderr.write(`tritonserver-ts: ${error.message}\n`);
    return 1;
  }

  // Stop requests are taken from the start. One during startup is served once the models have
  // loaded (exiting while onnxruntime creates a session aborts the process); a second one exits.
  let pending: StopRequest | undefined;
  let onStop = (request: StopRequest): void => {
    if (request.count > 1) {
      process.stderr.write(`tritonserver-ts: ${request.description} during startup, exiting immediately\n`);
      process.exit(1);
    }
    pending = request;
    process.stderr.write(
      `tritonserver-ts: ${request.description} during startup: stopping once it has started\n`,
    );
  };
  const stopWatching = onStopRequests((request) => onStop(request));
  let running: RunningServer;
  try {
    running = await startServer(options.server);
  } catch (error) {
    stopWatching();
    if (error instanceof GrpcStartError) {
      // tritonserver's words when its gRPC service cannot start (e.g. the port is taken).
      process.stderr.write(`failed to start GRPC service: Unavailable - ${error.message}\n`);
      return 1;
    }
    const message =
      error instanceof StartupError ? 'failed to load all models' : String((error as Error).message ?? error);
    process.stderr.write(`error: creating server: Internal - ${message}\n`);
    return 1;
  }
  const core = running.server;
  let stopped: (code: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => (stopped = resolve));
  onStop = (request) => {
    if (request.count > 1) {
      core.logger.warn(`${request.description}: a second stop request, exiting immediately`);
      stopped(1);
      return;
    }
    core.logger.info(
      `${request.description}, waiting for in-flight requests (timeout ${options.server.exitTimeoutSecs ?? 30} s)`,
    );
    // As tritonserver: the HTTP port stays open until the open connections' requests are answered.
    running.close({ liveConnections: true }).then(
      (finished) => {
        if (!finished) core.logger.warn('Exit timeout expired with requests still in flight');
        core.logger.info('Server stopped');
        stopped(0);
      },
      (error: unknown) => {
        core.logger.error(`shutdown failed: ${String(error)}`);
        stopped(1);
      },
    );
  };
  if (pending !== undefined) {
    onStop(pending);
    return done;
  }
  const index = await core.repositoryIndex();
  if (index.length > 0) {
    const rows = [
      ['Model', 'Version', 'Status'],
      ...index.map((e) => [
        e.name,
        e.version ?? '-',
        e.state === undefined ? '-' : e.state === 'READY' ? 'READY' : `${e.state}: ${e.reason ?? ''}`,
      ]),
    ];
    core.logger.info('\n' + table(rows));
  }
  for (const warning of options.warnings) core.logger.warn(warning);
  const exposed = repositoryExposureWarnings(options.server, {
    http: running.url !== '' ? running.httpPort : undefined,
    grpc: running.grpcPort,
  });
  for (const warning of exposed) core.logger.warn(warning);
  // tritonserver's banner lines, gRPC first.
  if (running.grpcPort !== undefined) {
    const host = options.server.grpcAddress ?? '0.0.0.0';
    core.logger.info(`Started GRPCInferenceService at ${host}:${running.grpcPort}`);
  }
  if (running.url !== '')
    core.logger.info(`Started HTTPService at ${options.server.httpAddress ?? '0.0.0.0'}:${running.httpPort}`);
  if (running.metricsPort !== undefined) {
    core.logger.info(
      `Started Metrics Service at ${options.server.metricsAddress ?? options.server.httpAddress ?? '0.0.0.0'}:${running.metricsPort}`,
    );
  }

  return done;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `tritonserver-ts: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
