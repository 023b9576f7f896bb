/**
 * Command-line flags of `tritonserver-ts`, named like tritonserver's. Parsing is pure (no I/O) so it
 * can be tested; `cli.ts` runs the server.
 * @packageDocumentation
 */
import { RateLimitFlagError, parseRateLimitFlags, type RateLimitFlags } from './cli-rate-limit.js';
import { compileHeaderForwardPattern } from './core/header-forward.js';
import { parseTraceConfig, type TraceSettings } from './core/trace.js';
import {
  GRPC_MAX_MESSAGE_BYTES,
  GrpcFlagError,
  grpcOptionsFromFlags,
  type GrpcFlagResult,
} from './grpc/cli-options.js';
import { parseRestrictions, type Restrictions } from './http/restricted-api.js';
import {
  PythonBackendConfigError,
  applyPythonBackendConfig,
  type PythonBackendSettings,
} from './runtime/builtin-backends.js';
import type { StartServerOptions } from './start.js';
import {
  MetricsConfigError,
  metricsConfigFrom,
  splitMetricsConfigOption,
  type MetricsConfig,
} from './statistics/metrics-config.js';
import type { ResponseCacheConfig } from './core/response-cache-config.js';

/** A bad command line (exit code 1). */
export class CliUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliUsageError';
  }
}

/** The parsed command line. */
export interface CliOptions {
  readonly help: boolean;
  readonly version: boolean;
  readonly server: StartServerOptions;
  /** Metrics port, or undefined when `--allow-metrics=false`. */
  readonly metricsPort: number | undefined;
  readonly exitOnError: boolean;
  /** Warnings to log at startup (flags accepted without effect). */
  readonly warnings: readonly string[];
}

type Kind = 'string' | 'int' | 'bool' | 'list';

interface FlagSpec {
  readonly kind: Kind;
  readonly arg: string;
  readonly help: string;
  readonly default?: string;
}

/** `--http-header-forward-pattern`, compiled with Triton's case rules (`core/header-forward.ts`). */
function httpHeaderForwardPattern(pattern: string): RegExp {
  try {
    return compileHeaderForwardPattern(pattern, '--http-header-forward-pattern');
  } catch (error) {
    throw new CliUsageError((error as Error).message);
  }
}

/** Every accepted flag with its help text. */
export const FLAGS: Readonly<Record<string, FlagSpec>> = {
  'model-repository': {
    kind: 'list',
    arg: '<path>',
    help: 'Model repository directory (repeatable). Required.',
  },
  'model-store': { kind: 'list', arg: '<path>', help: 'Deprecated alias of --model-repository.' },
  'model-control-mode': {
    kind: 'string',
    arg: '<none|explicit|poll>',
    help: 'How models are loaded.',
    default: 'none',
  },
  'load-model': {
    kind: 'list',
    arg: '<name>',
    help: "Model to load at startup in explicit mode (repeatable; '*' = all).",
  },
  'backend-config': {
    kind: 'list',
    arg: '<backend>,<key>=<value>',
    help: "A backend setting (repeatable). python: python-interpreter, stub-timeout-seconds, execute-timeout-seconds (and Triton's shm-* keys, accepted without effect).",
  },
  'cache-config': {
    kind: 'list',
    arg: '<cache>,<key>=<value>',
    help: "The response cache, as Triton's (repeatable per key): only 'local' is built in, with size=<bytes> (e.g. local,size=1048576). Models use it with response_cache { enable: true }.",
  },
  'response-cache-byte-size': {
    kind: 'int',
    arg: '<bytes>',
    help: 'Deprecated: the same as --cache-config=local,size=<bytes>.',
  },
  'cache-directory': {
    kind: 'string',
    arg: '<path>',
    help: "Where Triton looks for cache implementations; only named in the error for a cache other than 'local'.",
  },
  'repository-poll-secs': { kind: 'int', arg: '<secs>', help: 'Poll interval of poll mode.', default: '15' },
  'model-config-name': {
    kind: 'string',
    arg: '<name>',
    help: 'Use <model>/configs/<name>.pbtxt when present.',
  },
  'disable-auto-complete-config': {
    kind: 'bool',
    arg: '',
    help: 'Do not fill missing config fields from the model file.',
  },
  'strict-model-config': {
    kind: 'bool',
    arg: '<bool>',
    help: 'Deprecated: true = --disable-auto-complete-config.',
  },
  'gpu-fallback': {
    kind: 'string',
    arg: '<error|cpu>',
    help: "KIND_GPU instance groups on this GPU-less host: 'error' (model UNAVAILABLE, like Triton) or 'cpu'.",
    default: 'error',
  },
  'rate-limit': {
    kind: 'string',
    arg: '<off|execution_count>',
    help: "Rate limiting: execution_count makes each instance acquire its instance group's rate_limiter resources before executing, the choice weighted by priority and executions; off ignores every rate_limiter section.",
    default: 'off',
  },
  'rate-limit-resource': {
    kind: 'list',
    arg: '<name>:<count>[:<device>]',
    help: 'Count of a rate-limiter resource (repeatable); without <device>, on every device. Default: the largest count any instance asks for. With any given, every resource needs one.',
  },
  'strict-readiness': {
    kind: 'bool',
    arg: '<bool>',
    help: 'Ready only when every model is ready.',
    default: 'true',
  },
  'exit-on-error': {
    kind: 'bool',
    arg: '<bool>',
    help: 'Exit when a model fails to load at startup.',
    default: 'true',
  },
  'exit-timeout-secs': {
    kind: 'int',
    arg: '<secs>',
    help: 'How long shutdown waits for in-flight requests.',
    default: '30',
  },
  'allow-http': { kind: 'bool', arg: '<bool>', help: 'Serve the HTTP/REST API.', default: 'true' },
  'http-port': { kind: 'int', arg: '<port>', help: 'HTTP port (0 = any free port).', default: '8000' },
  'http-address': { kind: 'string', arg: '<address>', help: 'HTTP bind address.', default: '0.0.0.0' },
  'http-max-input-size': {
    kind: 'int',
    arg: '<bytes>',
    help: 'Largest accepted HTTP request body, also after decompression.',
    default: String(64 * 1024 * 1024),
  },
  'http-max-inflight-body-bytes': {
    kind: 'int',
    arg: '<bytes>',
    help: 'Request bodies in flight across all connections (tritonserver-ts only; over it: 503 + Retry-After). Default: max(256 MiB, 4 × --http-max-input-size).',
  },
  'http-send-timeout-secs': {
    kind: 'int',
    arg: '<secs>',
    help: 'A connection whose client takes none of its waiting response for this long is closed (tritonserver-ts only).',
    default: '60',
  },
  'http-max-connection-output-bytes': {
    kind: 'int',
    arg: '<bytes>',
    help: 'Unread response bytes one connection may pile up beyond one response; past it the connection is closed (tritonserver-ts only).',
    default: String(64 * 1024 * 1024),
  },
  'allow-metrics': {
    kind: 'bool',
    arg: '<bool>',
    help: 'Serve Prometheus metrics on --metrics-port.',
    default: 'true',
  },
  'metrics-port': { kind: 'int', arg: '<port>', help: 'Metrics port (/metrics).', default: '8002' },
  'allow-cpu-metrics': {
    kind: 'bool',
    arg: '<bool>',
    help: 'Report the nv_cpu_* gauges (host CPU utilization and memory).',
    default: 'true',
  },
  'metrics-interval-ms': {
    kind: 'int',
    arg: '<ms>',
    help: 'How often the polled metrics (nv_cpu_*) are refreshed, in milliseconds.',
    default: '2000',
  },
  'metrics-config': {
    kind: 'list',
    arg: '<setting>=<value>',
    help: 'Metric types (repeatable): counter_latencies=<bool>, summary_latencies=<bool>, summary_quantiles=<q>:<error>[,...], histogram_latencies=<bool>.',
  },
  'allow-client-shm': {
    kind: 'bool',
    arg: '<bool>',
    help: 'Let clients register system shared-memory regions.',
    default: 'false',
  },
  'client-shm-max-regions': {
    kind: 'int',
    arg: '<n>',
    help: 'System shared-memory regions clients may have registered at once; past it a registration is refused (tritonserver-ts only).',
    default: '1024',
  },
  'metrics-address': {
    kind: 'string',
    arg: '<address>',
    help: 'Metrics bind address (default: the HTTP address).',
  },
  'http-restricted-api': {
    kind: 'list',
    arg: '<api>[,<api>...]:<key>=<value>',
    help: 'Require header <key>: <value> for these API categories (health, metadata, inference, shared-memory, model-config, model-repository, statistics, trace, logging); repeatable.',
  },
  'allow-grpc': {
    kind: 'bool',
    arg: '<bool>',
    help: 'Serve the gRPC API (inference.GRPCInferenceService).',
    default: 'true',
  },
  'grpc-port': { kind: 'int', arg: '<port>', help: 'gRPC port (0 = any free port).', default: '8001' },
  'grpc-address': { kind: 'string', arg: '<address>', help: 'gRPC bind address.', default: '0.0.0.0' },
  'reuse-grpc-port': {
    kind: 'bool',
    arg: '<bool>',
    help: 'Share the gRPC port with other processes (SO_REUSEPORT); only false is accepted (grpc-js cannot set it).',
    default: 'false',
  },
  'grpc-restricted-protocol': {
    kind: 'list',
    arg: '<protocol>[,<protocol>...]:<key>=<value>',
    help: 'Require gRPC metadata triton-grpc-protocol-<key>: <value> for these categories (same names as --http-restricted-api); repeatable.',
  },
  'grpc-use-ssl': { kind: 'bool', arg: '<bool>', help: 'Serve gRPC over TLS.', default: 'false' },
  'grpc-use-ssl-mutual': {
    kind: 'bool',
    arg: '<bool>',
    help: 'Serve gRPC over TLS and require a client certificate signed by --grpc-root-cert (implies --grpc-use-ssl).',
    default: 'false',
  },
  'grpc-server-cert': { kind: 'string', arg: '<path>', help: 'PEM certificate (chain) of the gRPC server.' },
  'grpc-server-key': { kind: 'string', arg: '<path>', help: 'PEM private key of the gRPC server.' },
  'grpc-root-cert': {
    kind: 'string',
    arg: '<path>',
    help: 'PEM CA certificates that client certificates must chain to.',
  },
  'grpc-header-forward-pattern': {
    kind: 'string',
    arg: '<regex>',
    help: 'gRPC metadata whose key matches this regex (case-insensitive; a leading (?-i) makes it case-sensitive) is added to inference requests as string parameters.',
  },
  'http-header-forward-pattern': {
    kind: 'string',
    arg: '<regex>',
    help: 'HTTP headers whose name matches this regex (case-insensitive; a leading (?-i) makes it case-sensitive) are added to inference requests as string parameters.',
  },
  'grpc-infer-response-compression-level': {
    kind: 'string',
    arg: '<none|low|medium|high>',
    help: 'Compression of inference responses. Only none: grpc-js does not compress responses (other levels are refused).',
    default: 'none',
  },
  'grpc-keepalive-time': {
    kind: 'int',
    arg: '<ms>',
    help: 'Period after which the server pings an idle transport.',
    default: '7200000',
  },
  'grpc-keepalive-timeout': {
    kind: 'int',
    arg: '<ms>',
    help: 'How long a keepalive ping may go unacknowledged before the connection is closed.',
    default: '20000',
  },
  'grpc-keepalive-permit-without-calls': {
    kind: 'bool',
    arg: '<bool>',
    help: 'Client ping policy; accepted, not enforced (grpc-js servers do not police client pings).',
    default: 'false',
  },
  'grpc-http2-max-pings-without-data': {
    kind: 'int',
    arg: '<n>',
    help: 'Client ping policy; accepted, not enforced (grpc-js).',
    default: '2',
  },
  'grpc-http2-min-recv-ping-interval-without-data': {
    kind: 'int',
    arg: '<ms>',
    help: 'Client ping policy; accepted, not enforced (grpc-js).',
    default: '300000',
  },
  'grpc-http2-max-ping-strikes': {
    kind: 'int',
    arg: '<n>',
    help: 'Client ping policy; accepted, not enforced (grpc-js).',
    default: '2',
  },
  'grpc-max-connection-age': {
    kind: 'int',
    arg: '<ms>',
    help: 'Close a connection (with GOAWAY) after this age; unset = never.',
  },
  'grpc-max-connection-age-grace': {
    kind: 'int',
    arg: '<ms>',
    help: 'After --grpc-max-connection-age, how long calls in flight may finish; unset = no limit.',
  },
  'grpc-infer-thread-count': {
    kind: 'int',
    arg: '<n>',
    help: 'Accepted (2..128) for compatibility; no effect: gRPC calls are served on the event loop.',
    default: '2',
  },
  'grpc-infer-allocation-pool-size': {
    kind: 'int',
    arg: '<n>',
    help: 'Accepted for compatibility; no effect (no per-call state pool).',
    default: '8',
  },
  'grpc-max-response-pool-size': {
    kind: 'int',
    arg: '<n>',
    help: 'Accepted (> 0) for compatibility; no effect: no model answers more than one response per request here.',
  },
  'grpc-max-message-bytes': {
    kind: 'int',
    arg: '<bytes>',
    help: "Largest gRPC message received or sent (tritonserver-ts only; tritonserver's is fixed at 2147483647). Over it: RESOURCE_EXHAUSTED.",
    default: String(GRPC_MAX_MESSAGE_BYTES),
  },
  'grpc-send-timeout-secs': {
    kind: 'int',
    arg: '<secs>',
    help: 'A gRPC connection whose client takes none of its waiting answers for this long is closed, cancelling its calls (tritonserver-ts only; as --http-send-timeout-secs).',
    default: '60',
  },
  'grpc-max-connection-output-bytes': {
    kind: 'int',
    arg: '<bytes>',
    help: 'Unread answer bytes one gRPC connection (or one stream) may hold; over it new unary calls get RESOURCE_EXHAUSTED and streams stop reading requests (tritonserver-ts only).',
    default: String(64 * 1024 * 1024),
  },
  'grpc-stream-max-inflight-requests': {
    kind: 'int',
    arg: '<count>',
    help: 'Requests one ModelStreamInfer stream may have in flight before it stops reading more; HTTP/2 flow control holds the client (tritonserver-ts only).',
    default: '128',
  },
  'grpc-http2-stream-window-bytes': {
    kind: 'int',
    arg: '<bytes>',
    help: "HTTP/2 receive window of each gRPC call (SETTINGS_INITIAL_WINDOW_SIZE), 65535 to 2147483647; e.g. 4194304 with --grpc-http2-connection-window-bytes=16777216 for image-sized requests (tritonserver-ts only; grpc-js's is HTTP/2's 65535).",
    default: '65535',
  },
  'grpc-http2-connection-window-bytes': {
    kind: 'int',
    arg: '<bytes>',
    help: 'HTTP/2 receive window of each gRPC connection: the request bytes a connection may push ahead of the server reading them, 65535 to 2147483647 (tritonserver-ts only).',
    default: '65535',
  },
  'grpc-max-concurrent-streams': {
    kind: 'int',
    arg: '<count>',
    help: 'HTTP/2 streams (calls) one gRPC connection may have open at once (tritonserver-ts only).',
    default: '1024',
  },
  'trace-config': {
    kind: 'list',
    arg: '[<mode>,]<setting>=<value>',
    help: "Initial trace settings, repeatable: level=TIMESTAMPS|TENSORS|OFF (TIMESTAMPS and TENSORS add up), rate=<n>, count=<n>, triton,file=<path>, triton,log-frequency=<n> (Triton's JSON trace file; opentelemetry is not supported).",
  },
  'log-verbose': {
    kind: 'int',
    arg: '<level>',
    help: 'Verbose log level (1 = one line per HTTP request).',
    default: '0',
  },
  'log-info': { kind: 'bool', arg: '<bool>', help: 'Write info messages.', default: 'true' },
  'log-warning': { kind: 'bool', arg: '<bool>', help: 'Write warnings.', default: 'true' },
  'log-error': { kind: 'bool', arg: '<bool>', help: 'Write errors.', default: 'true' },
  'log-format': { kind: 'string', arg: '<default|ISO8601>', help: 'Log line format.', default: 'default' },
  'log-file': { kind: 'string', arg: '<path>', help: 'Append log lines to this file instead of stderr.' },
  help: { kind: 'bool', arg: '', help: 'Print this help and exit.' },
  version: { kind: 'bool', arg: '', help: 'Print the version and exit.' },
};

function restrictions(
  values: readonly string[],
  flag: 'http-restricted-api' | 'grpc-restricted-protocol' = 'http-restricted-api',
): Restrictions {
  try {
    return parseRestrictions(values, flag);
  } catch (error) {
    // tritonserver's wording: the option, then the reason on its own line.
    throw new CliUsageError(
      `Bad option: "--${flag}".\n${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

function rateLimitFlags(mode: string, resources: readonly string[]): RateLimitFlags {
  try {
    return parseRateLimitFlags(mode, resources);
  } catch (error) {
    if (error instanceof RateLimitFlagError) throw new CliUsageError(error.message);
    throw error;
  }
}

function traceConfig(values: readonly string[]): Partial<TraceSettings> {
  try {
    return parseTraceConfig(values);
  } catch (error) {
    throw new CliUsageError(error instanceof Error ? error.message : String(error));
  }
}

/** The `--help` text. */
export function usage(): string {
  const lines = ['Usage: tritonserver-ts --model-repository=<path> [options]', '', 'Options:'];
  for (const [name, spec] of Object.entries(FLAGS)) {
    const head = `  --${name}${spec.arg === '' ? '' : `=${spec.arg}`}`;
    const def = spec.default === undefined ? '' : ` (default: ${spec.default})`;
    lines.push(`${head}\n      ${spec.help}${def}`);
  }
  return lines.join('\n');
}

function parseBool(name: string, value: string): boolean {
  const v = value.toLowerCase();
  if (['true', '1', 'on', 'yes'].includes(v)) return true;
  if (['false', '0', 'off', 'no'].includes(v)) return false;
  throw new CliUsageError(`invalid value for --${name}: '${value}' (expected true or false)`);
}

function parseInt(name: string, value: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^-?\d+$/.test(value))
    throw new CliUsageError(`invalid value for --${name}: '${value}' (expected an integer)`);
  const n = Number(value);
  if (n < min || n > max)
    throw new CliUsageError(`invalid value for --${name}: ${value} (expected ${min}..${max})`);
  return n;
}

/** Parses `argv` (without `node` and the script). @throws CliUsageError */
export function parseArgs(argv: readonly string[]): CliOptions {
  const values = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-h') {
      values.set('help', ['true']);
      continue;
    }
    if (!arg.startsWith('--')) throw new CliUsageError(`unexpected argument '${arg}'`);
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    const spec = FLAGS[name];
    if (spec === undefined) throw new CliUsageError(`unrecognized option '--${name}'`);
    let value: string;
    if (eq >= 0) value = arg.slice(eq + 1);
    else if (spec.kind === 'bool') {
      const next = argv[i + 1];
      if (next !== undefined && /^(true|false|0|1|on|off|yes|no)$/i.test(next)) {
        value = next;
        i++;
      } else value = 'true';
    } else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--'))
        throw new CliUsageError(`option '--${name}' requires a value`);
      value = next;
      i++;
    }
    const list = values.get(name) ?? [];
    if (spec.kind !== 'list' && list.length > 0) list.length = 0;
    list.push(value);
    values.set(name, list);
  }
  const one = (name: string): string | undefined => values.get(name)?.at(-1) ?? FLAGS[name]?.default;
  const bool = (name: string): boolean => parseBool(name, one(name) ?? 'false');
  const int = (name: string, min?: number, max?: number): number =>
    parseInt(name, one(name) ?? '0', min, max);

  const help = values.has('help') && bool('help');
  const version = values.has('version') && bool('version');
  const repositories = [...(values.get('model-repository') ?? []), ...(values.get('model-store') ?? [])];
  if (!help && !version && repositories.length === 0) {
    throw new CliUsageError('--model-repository must be specified');
  }
  const mode = (one('model-control-mode') ?? 'none').toLowerCase();
  if (mode !== 'none' && mode !== 'explicit' && mode !== 'poll') {
    throw new CliUsageError(
      `invalid value for --model-control-mode: '${mode}' (expected none, explicit or poll)`,
    );
  }
  const loadModels = values.get('load-model') ?? [];
  if (loadModels.length > 0 && mode !== 'explicit') {
    throw new CliUsageError("use of '--load-model' requires setting '--model-control-mode=explicit' as well");
  }
  const gpu = one('gpu-fallback') ?? 'error';
  if (gpu !== 'error' && gpu !== 'cpu') {
    throw new CliUsageError(`invalid value for --gpu-fallback: '${gpu}' (expected error or cpu)`);
  }
  const logFormat = one('log-format') ?? 'default';
  if (logFormat !== 'default' && logFormat !== 'ISO8601') {
    throw new CliUsageError(`invalid value for --log-format: '${logFormat}' (expected default or ISO8601)`);
  }
  const autoComplete = !(
    (values.has('disable-auto-complete-config') && bool('disable-auto-complete-config')) ||
    (values.has('strict-model-config') && bool('strict-model-config'))
  );
  const rateLimit = rateLimitFlags(one('rate-limit') ?? 'off', values.get('rate-limit-resource') ?? []);
  const logFile = one('log-file');
  const allowMetrics = bool('allow-metrics');
  const metricsPort = int('metrics-port', 0, 65535);
  const metricsProblems: string[] = [];
  const metricsConfig = values.has('metrics-config')
    ? metricsConfigOption(values.get('metrics-config') ?? [], (line) => metricsProblems.push(line))
    : undefined;
  const exitOnError = bool('exit-on-error');
  // Triton's own check and wording.
  if (int('http-max-input-size', Number.MIN_SAFE_INTEGER) <= 0) {
    throw new CliUsageError('Error: --http-max-input-size must be greater than 0.');
  }
  const allowHttp = bool('allow-http');
  const allowGrpc = bool('allow-grpc');
  let grpc: GrpcFlagResult | undefined;
  try {
    grpc = grpcOptionsFromFlags({
      has: (name) => values.has(name),
      string: one,
      bool,
      int,
    });
  } catch (error) {
    if (error instanceof GrpcFlagError) throw new CliUsageError(error.message);
    throw error;
  }
  const grpcRestrictions = values.has('grpc-restricted-protocol')
    ? restrictions(values.get('grpc-restricted-protocol') ?? [], 'grpc-restricted-protocol')
    : undefined;
  const { port: _grpcPort, host: _grpcHost, ...grpcRest } = grpc.settings;
  const httpPort = int('http-port', 0, 65535);
  const httpAddress = one('http-address') ?? '0.0.0.0';
  // tritonserver's check (port 0 = a free port, never a collision here).
  if (allowHttp && allowGrpc && httpPort !== 0 && httpPort === grpc.settings.port) {
    if (httpAddress === grpc.settings.host) {
      throw new CliUsageError(
        `The server cannot listen to HTTP requests and GRPC requests at the same address and port ${httpAddress}:${httpPort}`,
      );
    }
  }
  const server: StartServerOptions = {
    modelRepositories: repositories,
    modelControlMode: mode,
    loadModels,
    repositoryPollSecs: int('repository-poll-secs', 0),
    ...(one('model-config-name') !== undefined
      ? { modelConfigName: one('model-config-name') as string }
      : {}),
    autoCompleteConfig: autoComplete,
    gpuFallback: gpu,
    ...(rateLimit.rateLimit === 'execution_count'
      ? { rateLimit: rateLimit.rateLimit, rateLimitResources: rateLimit.rateLimitResources }
      : {}),
    strictReadiness: bool('strict-readiness'),
    exitOnError,
    exitTimeoutSecs: int('exit-timeout-secs', 0),
    allowHttp,
    httpPort,
    httpAddress,
    ...(allowGrpc
      ? {
          grpcPort: grpc.settings.port,
          grpcAddress: grpc.settings.host,
          grpc: {
            ...grpcRest,
            ...(grpcRestrictions !== undefined ? { restrictions: grpcRestrictions } : {}),
          },
        }
      : {}),
    httpMaxInputSize: int('http-max-input-size', 1),
    ...(values.has('http-max-inflight-body-bytes')
      ? { httpMaxInflightBodyBytes: int('http-max-inflight-body-bytes', int('http-max-input-size', 1)) }
      : {}),
    httpSendTimeoutSecs: int('http-send-timeout-secs', 1),
    httpMaxConnectionOutputBytes: int('http-max-connection-output-bytes', 1),
    allowClientShm: bool('allow-client-shm'),
    sharedMemoryMaxRegions: int('client-shm-max-regions', 1),
    ...(one('metrics-address') !== undefined ? { metricsAddress: one('metrics-address') as string } : {}),
    ...(allowMetrics ? { metricsPort } : {}),
    ...(metricsConfig !== undefined ? { metricsConfig } : {}),
    metricsIntervalMs: int('metrics-interval-ms', 1),
    allowCpuMetrics: bool('allow-cpu-metrics'),
    ...(values.has('trace-config') ? { trace: traceConfig(values.get('trace-config') ?? []) } : {}),
    ...(values.has('http-restricted-api')
      ? { httpRestrictedApi: restrictions(values.get('http-restricted-api') ?? []) }
      : {}),
    ...(one('http-header-forward-pattern') !== undefined
      ? { httpHeaderForwardPattern: httpHeaderForwardPattern(one('http-header-forward-pattern') as string) }
      : {}),
    log: {
      log_verbose_level: int('log-verbose', 0),
      log_info: bool('log-info'),
      log_warning: bool('log-warning'),
      log_error: bool('log-error'),
      log_format: logFormat,
      ...(logFile !== undefined ? { log_file: logFile } : {}),
    },
  };
  const backendConfig = pythonBackendConfig(values.get('backend-config') ?? []);
  const cache = responseCacheFlags(
    values.get('cache-config') ?? [],
    values.has('response-cache-byte-size') ? one('response-cache-byte-size') : undefined,
    one('cache-directory'),
  );
  return {
    help,
    version,
    server: {
      ...server,
      python: backendConfig.settings,
      ...(cache.config !== undefined ? { responseCache: cache.config } : {}),
    },
    metricsPort: allowMetrics ? metricsPort : undefined,
    exitOnError,
    warnings: [
      ...(allowGrpc ? grpc.warnings : []),
      ...backendConfig.warnings,
      ...cache.warnings,
      ...metricsProblems,
      // tritonserver ignores them silently with --rate-limit=off.
      ...(rateLimit.rateLimit === 'off' && rateLimit.rateLimitResources.length > 0
        ? ['--rate-limit-resource has no effect with --rate-limit=off']
        : []),
    ],
  };
}

/** `--metrics-config` values (tritonserver's format check; Triton's error lines for bad quantiles). */
function metricsConfigOption(values: readonly string[], report: (line: string) => void): MetricsConfig {
  try {
    return metricsConfigFrom(values.map(splitMetricsConfigOption), report);
  } catch (error) {
    if (error instanceof MetricsConfigError) throw new CliUsageError(error.message);
    throw error;
  }
}

/**
 * `--backend-config=<backend>,<key>=<value>` values: the python backend's settings (Triton's syntax).
 * @throws CliUsageError for a malformed value, another backend, or an unknown python key.
 */
function pythonBackendConfig(values: readonly string[]): {
  settings: { -readonly [K in keyof PythonBackendSettings]?: PythonBackendSettings[K] };
  warnings: string[];
} {
  const settings: { -readonly [K in keyof PythonBackendSettings]?: PythonBackendSettings[K] } = {};
  const warnings: string[] = [];
  for (const value of values) {
    const comma = value.indexOf(',');
    const equals = value.indexOf('=', comma + 1);
    if (comma <= 0 || equals < 0) {
      throw new CliUsageError(
        `invalid --backend-config value '${value}': expected <backend>,<setting>=<value>`,
      );
    }
    const backend = value.slice(0, comma);
    const key = value.slice(comma + 1, equals);
    if (backend !== 'python') {
      throw new CliUsageError(
        `--backend-config for backend '${backend}' is not supported by tritonserver-ts (supported: python)`,
      );
    }
    try {
      const warning = applyPythonBackendConfig(settings, key, value.slice(equals + 1));
      if (warning !== undefined) warnings.push(warning);
    } catch (error) {
      if (error instanceof PythonBackendConfigError) throw new CliUsageError(error.message);
      throw error;
    }
  }
  return { settings, warnings };
}

/**
 * `--cache-config <cache>,<key>=<value>` (repeatable), the deprecated `--response-cache-byte-size`
 * and `--cache-directory`: the response cache's configuration, with Triton's parser messages.
 * @throws CliUsageError for a malformed value, both styles together, or two different caches.
 */
function responseCacheFlags(
  values: readonly string[],
  byteSize: string | undefined,
  directory: string | undefined,
): { config?: ResponseCacheConfig; warnings: string[] } {
  const warnings: string[] = [];
  if (byteSize !== undefined && values.length > 0) {
    throw new CliUsageError(
      'Error: Incompatible flags --response-cache-byte-size and --cache-config both provided. Please provide one or the other.',
    );
  }
  const dir = directory !== undefined ? { directory } : {};
  if (byteSize !== undefined) {
    const bytes = String(Number.parseInt(byteSize, 10));
    warnings.push(
      `Warning: '--response-cache-byte-size' has been deprecated! This will default to the 'local' cache implementation with the provided byte size for its config. Please use '--cache-config' instead. The equivalent --cache-config CLI args would be: '--cache-config=local,size=${bytes}'`,
    );
    return { config: { name: 'local', settings: { size: bytes }, ...dir }, warnings };
  }
  if (values.length === 0) return { warnings };
  const settings = new Map<string, Record<string, string>>();
  for (const value of values) {
    const comma = value.indexOf(',');
    if (comma <= 0) {
      throw new CliUsageError(
        `No cache specified. --cache-config option format is <cache name>,<setting>=<value>. Got ${value}`,
      );
    }
    const equals = value.indexOf('=', comma + 1);
    const key = equals < 0 ? '' : value.slice(comma + 1, equals);
    const setting = equals < 0 ? '' : value.slice(equals + 1);
    if (key === '' || setting === '') {
      throw new CliUsageError(
        `--cache-config option format is '<cache name>,<setting>=<value>'. Got ${value}`,
      );
    }
    const name = value.slice(0, comma);
    const entry = settings.get(name) ?? {};
    entry[key] = setting;
    settings.set(name, entry);
  }
  if (settings.size > 1) {
    // tritonserver-ts's wording: Triton also accepts only one cache.
    throw new CliUsageError(
      `Error: multiple cache configurations were given (${[...settings.keys()].join(', ')}); only one cache may be configured`,
    );
  }
  const [[name, entry]] = [...settings.entries()] as [[string, Record<string, string>]];
  return { config: { name, settings: entry, ...dir }, warnings };
}
