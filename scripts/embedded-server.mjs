// How `npm start` runs the embedded inference server: the command line and the URL the web app uses.
// Kept apart from start.mjs so the deployment tests can check exactly what `npm start` runs.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * What models_staging's Python models (food_classifier, food_preprocess) import beyond the standard
 * library: the table in models_staging/README.md, which packages/deploy/test/python-interpreter.test.ts
 * checks against the files and this list.
 */
export const PYTHON_MODULES = ['numpy', 'PIL'];

/**
 * Whether `interpreter` runs and imports every module of {@link PYTHON_MODULES}.
 * @param {string} interpreter a path or a command on PATH
 * @returns {boolean}
 */
export function pythonHasModules(interpreter) {
  const r = spawnSync(interpreter, ['-c', `import ${PYTHON_MODULES.join(', ')}`], {
    stdio: 'ignore',
    timeout: 20_000,
  });
  return r.status === 0;
}

/**
 * The Python interpreter the embedded server runs models_staging's Python models with:
 * TRITONSERVER_TS_PYTHON when set (used as given), else the first of `python3` on PATH and
 * `/usr/bin/python3` that imports numpy AND Pillow (the server's own discovery asks only for numpy,
 * which a PATH `python3` without Pillow passes, and food_classifier would then fail to load).
 * `undefined` when none does.
 * @param {Record<string, string | undefined>} env
 * @param {(interpreter: string) => boolean} [usable] the probe (tests replace it)
 * @returns {string | undefined}
 */
export function pythonInterpreter(env, usable = pythonHasModules) {
  const explicit = env.TRITONSERVER_TS_PYTHON;
  if (explicit !== undefined && explicit !== '') return explicit;
  return ['python3', '/usr/bin/python3'].find((candidate) => usable(candidate));
}

/**
 * The embedded server's CLI arguments for `npm start`, and the `host:port` the gateway talks to.
 * Only the gateway talks to the inference server, so it (its gRPC service and its metrics) bind to
 * loopback unless TRITON_HTTP_ADDRESS asks otherwise (for example 0.0.0.0 for Prometheus on another
 * host); TRITON_GRPC_ADDRESS defaults to the HTTP address.
 * @param {string} root repository root
 *
 * The Python-backend model (food_classifier) runs with {@link pythonInterpreter}'s choice, passed as
 * `--backend-config=python,python-interpreter=<path>`. When no interpreter has numpy and Pillow, the
 * server is started with `--exit-on-error=false --strict-readiness=false`: food_classifier is listed
 * UNAVAILABLE with the reason, food_classifier_onnx is served, and `pythonMissing` is true.
 * On a loopback address (the default) the server allows client shared memory
 * (`--allow-client-shm=true`), so the gateway's input tensors go through system shared memory.
 * @param {string} root repository root
 * @param {Record<string, string | undefined>} env environment (TRITON_HTTP_PORT, TRITON_GRPC_PORT,
 *   TRITON_METRICS_PORT, TRITON_HTTP_ADDRESS, TRITON_GRPC_ADDRESS, TRITONSERVER_TS_PYTHON)
 * @param {(interpreter: string) => boolean} [usable] the interpreter probe (tests replace it)
 */
/** Whether `address` only accepts connections from this host (127.0.0.0/8, ::1, localhost). */
function isLoopback(address) {
  return address === 'localhost' || address === '::1' || /^127\./.test(address);
}

export function embeddedServerCommand(root, env, usable = pythonHasModules) {
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
  // The gateway on this host sends input tensors through system shared memory (issue 11) when the
  // server lets clients register regions. Only on a loopback server: a region names a /dev/shm file
  // for the server to read, which no other host should be able to ask for.
  if (isLoopback(httpAddress) && isLoopback(grpcAddress)) args.push('--allow-client-shm=true');
  const python = pythonInterpreter(env, usable);
  if (python !== undefined) args.push(`--backend-config=python,python-interpreter=${python}`);
  else args.push('--exit-on-error=false', '--strict-readiness=false');
  const shown = (address) => {
    const host = address === '0.0.0.0' || address === '::' ? '127.0.0.1' : address;
    return host.includes(':') ? `[${host}]` : host;
  };
  return {
    args,
    tritonUrl: `${shown(httpAddress)}:${httpPort}`,
    tritonGrpcUrl: `${shown(grpcAddress)}:${grpcPort}`,
    python,
    pythonMissing: python === undefined,
  };
}
