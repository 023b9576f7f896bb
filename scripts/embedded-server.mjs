// How `npm start` runs the embedded inference server: the command line and the URL the web app uses.
// Kept apart from start.mjs so the deployment tests can check exactly what `npm start` runs.
import { join } from 'node:path';

/**
 * The embedded server's CLI arguments for `npm start`, and the `host:port` the gateway talks to.
 * Only the gateway talks to the inference server, so it (its gRPC service and its metrics) bind to
 * loopback unless TRITON_HTTP_ADDRESS asks otherwise (for example 0.0.0.0 for Prometheus on another
 * host); TRITON_GRPC_ADDRESS defaults to the HTTP address.
 * @param {string} root repository root
 * @param {Record<string, string | undefined>} env environment (TRITON_HTTP_PORT, TRITON_GRPC_PORT,
 *   TRITON_METRICS_PORT, TRITON_HTTP_ADDRESS, TRITON_GRPC_ADDRESS)
 */
export function embeddedServerCommand(root, env) {
  const httpPort = env.TRITON_HTTP_PORT ?? '8000';
  const grpcPort = env.TRITON_GRPC_PORT ?? '8001';
  const metricsPort = env.TRITON_METRICS_PORT ?? '8002';
  const httpAddress = env.TRITON_HTTP_ADDRESS ?? '127.0.0.1';
  const grpcAddress = env.TRITON_GRPC_ADDRESS ?? httpAddress;
  const args = [
    join(root, 'packages/server/dist/cli.js'),
    `--model-repository=${join(root, 'models_staging')}`,
    `--http-port=${httpPort}`,
    `--grpc-port=${grpcPort}`,
    `--metrics-port=${metricsPort}`,
    `--http-address=${httpAddress}`,
    `--grpc-address=${grpcAddress}`,
  ];
  const shown = (address) => {
    const host = address === '0.0.0.0' || address === '::' ? '127.0.0.1' : address;
    return host.includes(':') ? `[${host}]` : host;
  };
  return {
    args,
    tritonUrl: `${shown(httpAddress)}:${httpPort}`,
    tritonGrpcUrl: `${shown(grpcAddress)}:${grpcPort}`,
  };
}
