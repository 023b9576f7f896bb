/**
 * Command-line flags of `tritonserver-ts`, named like tritonserver's. Parsing is pure (no I/O) so it
 * can be tested; `cli.ts` runs the server.
 * @packageDocumentation
 */
import { parseTraceConfig, type TraceSettings } from './core/trace.js';
import { parseRestrictions, type Restrictions } from './http/restricted-api.js';
import type { StartServerOptions } from './start.js';

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
}

type Kind = 'string' | 'int' | 'bool' | 'list';

interface FlagSpec {
  readonly kind: Kind;
  readonly arg: string;
  readonly help: string;
  readonly default?: string;
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
  'allow-client-shm': {
    kind: 'bool',
    arg: '<bool>',
    help: 'Let clients register system shared-memory regions.',
    default: 'false',
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
  'trace-config': {
    kind: 'list',
    arg: '[<mode>,]<setting>=<value>',
    help: "Initial trace settings, repeatable: level=TIMESTAMPS|OFF, rate=<n>, count=<n>, triton,file=<path>, triton,log-frequency=<n> (Triton's JSON trace file; TENSORS and opentelemetry are not supported).",
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

function restrictions(values: readonly string[]): Restrictions {
  try {
    return parseRestrictions(values);
  } catch (error) {
    // tritonserver's wording: the option, then the reason on its own line.
    throw new CliUsageError(
      `Bad option: "--http-restricted-api".\n${error instanceof Error ? error.message : String(error)}`,
    );
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
    if (name === 'grpc-restricted-protocol') {
      throw new CliUsageError(
        `Bad option: "--grpc-restricted-protocol".\ntritonserver-ts has no gRPC endpoint yet, so there is nothing to restrict; use --http-restricted-api for the HTTP endpoint`,
      );
    }
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
  const logFile = one('log-file');
  const allowMetrics = bool('allow-metrics');
  const metricsPort = int('metrics-port', 0, 65535);
  const exitOnError = bool('exit-on-error');
  // Triton's own check and wording.
  if (int('http-max-input-size', Number.MIN_SAFE_INTEGER) <= 0) {
    throw new CliUsageError('Error: --http-max-input-size must be greater than 0.');
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
    strictReadiness: bool('strict-readiness'),
    exitOnError,
    exitTimeoutSecs: int('exit-timeout-secs', 0),
    allowHttp: bool('allow-http'),
    httpPort: int('http-port', 0, 65535),
    httpAddress: one('http-address') ?? '0.0.0.0',
    httpMaxInputSize: int('http-max-input-size', 1),
    ...(values.has('http-max-inflight-body-bytes')
      ? { httpMaxInflightBodyBytes: int('http-max-inflight-body-bytes', int('http-max-input-size', 1)) }
      : {}),
    httpSendTimeoutSecs: int('http-send-timeout-secs', 1),
    httpMaxConnectionOutputBytes: int('http-max-connection-output-bytes', 1),
    allowClientShm: bool('allow-client-shm'),
    ...(one('metrics-address') !== undefined ? { metricsAddress: one('metrics-address') as string } : {}),
    ...(allowMetrics ? { metricsPort } : {}),
    ...(values.has('trace-config') ? { trace: traceConfig(values.get('trace-config') ?? []) } : {}),
    ...(values.has('http-restricted-api')
      ? { httpRestrictedApi: restrictions(values.get('http-restricted-api') ?? []) }
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
  return { help, version, server, metricsPort: allowMetrics ? metricsPort : undefined, exitOnError };
}
