/**
 * perf_analyzer's command line → {@link PerfOptions}: the same option names (short and long,
 * `--opt value` and `--opt=value`), the same defaults, and the same checks and conflicts as
 * perf_analyzer's parser, with its messages. Options perf_analyzer has that this tool does not
 * implement (other service kinds, CUDA shared memory, SSL, MPI, tracing, …) are refused by name
 * instead of being ignored.
 * @packageDocumentation
 */
import { readFileSync, statSync } from 'node:fs';

import { PerfError } from '../errors.js';
import {
  defaultUrl,
  PERF_DEFAULTS,
  type GrpcCompression,
  type LoadMode,
  type MeasurementMode,
  type PerfOptions,
  type PerfProtocol,
  type RequestDistribution,
  type RequestParameter,
  type SequenceIdRange,
  type SharedMemoryMode,
} from './perf-options.js';

/** The result of `-h` / `--help`: print {@link perfUsage} and exit 0. */
export interface PerfHelpRequest {
  readonly help: true;
}

/** Largest `--request-intervals` file read (one interval per line). */
const MAX_INTERVALS_FILE_BYTES = 64 * 1024 * 1024;

interface OptionSpec {
  /** Long name without `--` (the key everything is stored under). */
  readonly long: string;
  readonly short?: string;
  readonly takesValue: boolean;
}

const SUPPORTED: readonly OptionSpec[] = [
  { long: 'model-name', short: 'm', takesValue: true },
  { long: 'model-version', short: 'x', takesValue: true },
  { long: 'url', short: 'u', takesValue: true },
  { long: 'protocol', short: 'i', takesValue: true },
  { long: 'batch-size', short: 'b', takesValue: true },
  { long: 'concurrency-range', takesValue: true },
  { long: 'request-rate-range', takesValue: true },
  { long: 'request-distribution', takesValue: true },
  { long: 'request-intervals', takesValue: true },
  { long: 'latency-threshold', short: 'l', takesValue: true },
  { long: 'max-threads', takesValue: true },
  { long: 'async', short: 'a', takesValue: false },
  { long: 'sync', takesValue: false },
  { long: 'streaming', takesValue: false },
  { long: 'measurement-interval', short: 'p', takesValue: true },
  { long: 'measurement-mode', takesValue: true },
  { long: 'measurement-request-count', takesValue: true },
  { long: 'stability-percentage', short: 's', takesValue: true },
  { long: 'max-trials', short: 'r', takesValue: true },
  { long: 'percentile', takesValue: true },
  { long: 'warmup-request-count', takesValue: true },
  { long: 'request-count', takesValue: true },
  { long: 'input-data', takesValue: true },
  { long: 'data-directory', takesValue: true },
  { long: 'zero-input', short: 'z', takesValue: false },
  { long: 'shape', takesValue: true },
  { long: 'string-length', takesValue: true },
  { long: 'string-data', takesValue: true },
  { long: 'shared-memory', takesValue: true },
  { long: 'output-shared-memory-size', takesValue: true },
  { long: 'header', short: 'H', takesValue: true },
  { long: 'grpc-compression-algorithm', takesValue: true },
  { long: 'request-parameter', takesValue: true },
  { long: 'input-tensor-format', takesValue: true },
  { long: 'output-tensor-format', takesValue: true },
  { long: 'filename', short: 'f', takesValue: true },
  { long: 'verbose-csv', takesValue: false },
  { long: 'profile-export-file', takesValue: true },
  { long: 'collect-metrics', takesValue: false },
  { long: 'metrics-url', takesValue: true },
  { long: 'metrics-interval', takesValue: true },
  { long: 'num-of-sequences', takesValue: true },
  { long: 'sequence-length', takesValue: true },
  { long: 'sequence-length-variation', takesValue: true },
  { long: 'sequence-id-range', takesValue: true },
  { long: 'serial-sequences', takesValue: false },
  { long: 'verbose', short: 'v', takesValue: false },
  { long: 'seed', takesValue: true },
  { long: 'help', short: 'h', takesValue: false },
];

/** perf_analyzer options this tool does not implement, and why. */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  'model-signature-name': 'it applies to --service-kind=tfserving only',
  endpoint: 'it applies to --service-kind=openai only',
  'bls-composing-models': 'BLS composing-model statistics are not collected',
  'triton-server-directory': 'the Triton C API service kind is not available in Node',
  'model-repository': 'the Triton C API service kind is not available in Node',
  'periodic-concurrency-range': 'periodic concurrency mode is not implemented',
  'request-period': 'periodic concurrency mode is not implemented',
  'session-concurrency': 'it applies to --service-kind=openai only',
  'binary-search': 'only the linear search of perf_analyzer is implemented',
  schedule: 'fixed schedules are not implemented',
  'fixed-schedule': 'fixed schedules are not implemented',
  'enable-mpi': 'multi-model MPI runs are not available',
  'trace-level': 'server-side tracing options are not implemented',
  'trace-rate': 'server-side tracing options are not implemented',
  'trace-count': 'server-side tracing options are not implemented',
  'log-frequency': 'server-side tracing options are not implemented',
  'ssl-grpc-use-ssl': 'SSL/TLS options are not implemented',
  'ssl-grpc-root-certifications-file': 'SSL/TLS options are not implemented',
  'ssl-grpc-private-key-file': 'SSL/TLS options are not implemented',
  'ssl-grpc-certificate-chain-file': 'SSL/TLS options are not implemented',
  'ssl-https-verify-peer': 'SSL/TLS options are not implemented',
  'ssl-https-verify-host': 'SSL/TLS options are not implemented',
  'ssl-https-ca-certificates-file': 'SSL/TLS options are not implemented',
  'ssl-https-client-certificate-file': 'SSL/TLS options are not implemented',
  'ssl-https-client-certificate-type': 'SSL/TLS options are not implemented',
  'ssl-https-private-key-file': 'SSL/TLS options are not implemented',
  'ssl-https-private-key-type': 'SSL/TLS options are not implemented',
  version: 'there is no perf_analyzer version to report',
};

/** perf_analyzer's deprecated short options, refused (use the named replacement). */
const DEPRECATED_SHORT: Readonly<Record<string, string>> = {
  t: 'the deprecated -t is not supported; use --concurrency-range',
  c: 'the deprecated -c is not supported; use --concurrency-range',
  d: 'the deprecated -d is not supported; use --concurrency-range with end 0 and --latency-threshold',
};

const BY_LONG = new Map(SUPPORTED.map((s) => [s.long, s]));
const BY_SHORT = new Map(SUPPORTED.filter((s) => s.short !== undefined).map((s) => [s.short as string, s]));

/** Long aliases perf_analyzer does not have, kept out of the table above. */
const LONG_ONLY_ALIASES: ReadonlySet<string> = new Set([
  'model-name',
  'model-version',
  'url',
  'protocol',
  'batch-size',
  'zero-input',
  'header',
  'filename',
  'verbose',
]);

/** One option occurrence: its spec, how the user spelled it, and its value. */
interface Occurrence {
  readonly spec: OptionSpec;
  readonly spelled: string;
  readonly value: string | undefined;
}

function usage(message: string): PerfError {
  return new PerfError('USAGE', message);
}

function tokenize(argv: readonly string[]): Occurrence[] {
  const out: Occurrence[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      if (i + 1 < argv.length) throw usage(`unexpected argument '${argv[i + 1] as string}'`);
      break;
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      const inline = eq < 0 ? undefined : arg.slice(eq + 1);
      const spec = LONG_ONLY_ALIASES.has(name) ? undefined : BY_LONG.get(name);
      if (spec === undefined) {
        if (name === 'service-kind') {
          const value = inline ?? argv[++i];
          if (value === 'triton') continue;
          throw usage(
            `--service-kind ${value ?? ''} is not supported: this tool speaks to Triton (and the embedded server) only; ` +
              `the 'openai', 'tfserving', 'torchserve' and 'triton_c_api' service kinds are not available`,
          );
        }
        const why = UNSUPPORTED[name];
        if (why !== undefined) throw usage(`--${name} is not supported: ${why}`);
        throw usage(`unrecognized option '--${name}'`);
      }
      if (!spec.takesValue) {
        if (inline !== undefined) throw usage(`option '--${name}' doesn't allow an argument`);
        out.push({ spec, spelled: `--${name}`, value: undefined });
        continue;
      }
      const value = inline ?? argv[++i];
      if (value === undefined) throw usage(`option '--${name}' requires an argument`);
      out.push({ spec, spelled: `--${name}`, value });
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) {
      // getopt-style: grouped flags (-va), attached values (-b8), or a value in the next argument.
      for (let k = 1; k < arg.length; k++) {
        const letter = arg[k] as string;
        const deprecated = DEPRECATED_SHORT[letter];
        if (deprecated !== undefined) throw usage(deprecated);
        const spec = BY_SHORT.get(letter);
        if (spec === undefined) throw usage(`invalid option -- '${letter}'`);
        if (!spec.takesValue) {
          out.push({ spec, spelled: `-${letter}`, value: undefined });
          continue;
        }
        const rest = arg.slice(k + 1);
        const value = rest.length > 0 ? rest.replace(/^=/, '') : argv[++i];
        if (value === undefined) throw usage(`option requires an argument -- '${letter}'`);
        out.push({ spec, spelled: `-${letter}`, value });
        break;
      }
      continue;
    }
    throw usage(`unexpected argument '${arg}' (options start with '-')`);
  }
  return out;
}

/** How perf_analyzer names an option in its messages: `-b (batch size)`, `--max-trials (-r)`. */
function display(spec: OptionSpec): string {
  if (LONG_ONLY_ALIASES.has(spec.long)) return `-${spec.short as string}`;
  return spec.short === undefined ? `--${spec.long}` : `--${spec.long} (-${spec.short})`;
}

function invalid(spec: OptionSpec, value: string): PerfError {
  return usage(`Failed to parse ${display(spec)}. Invalid value provided: ${value}`);
}

function parseInteger(spec: OptionSpec, value: string): number {
  const trimmed = value.trim();
  if (!/^[+-]?\d+$/.test(trimmed)) throw invalid(spec, value);
  const n = Number(trimmed);
  if (!Number.isSafeInteger(n)) throw invalid(spec, value);
  return n;
}

function parseDecimal(spec: OptionSpec, value: string): number {
  const trimmed = value.trim();
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(trimmed)) throw invalid(spec, value);
  const n = Number(trimmed);
  if (!Number.isFinite(n)) throw invalid(spec, value);
  return n;
}

function choice<T extends string>(
  spec: OptionSpec,
  value: string,
  choices: readonly T[],
  options: { readonly caseInsensitive?: boolean; readonly what: string },
): T {
  const v = options.caseInsensitive === true ? value.toLowerCase() : value;
  const found = choices.find((c) => c === v);
  if (found === undefined) {
    throw usage(
      `Failed to parse ${display(spec)}. Unsupported type provided: '${value}'. The available options are ${options.what}.`,
    );
  }
  return found;
}

function pathKind(path: string): 'file' | 'directory' | undefined {
  try {
    const s = statSync(path);
    if (s.isDirectory()) return 'directory';
    if (s.isFile()) return 'file';
    return undefined;
  } catch {
    return undefined;
  }
}

/** `start[:end[:step]]`, at most three parts. */
function rangeParts(spec: OptionSpec, value: string): string[] {
  const parts = value.split(':');
  if (parts.length > 3 || parts.some((p) => p.trim() === '')) {
    throw usage(`Failed to parse ${display(spec)}. The value does not match <start:end:step>.`);
  }
  return parts;
}

function readIntervals(path: string): number[] {
  const kind = pathKind(path);
  if (kind !== 'file') {
    throw usage('Failed to parse --request-intervals. The value must be a valid file path');
  }
  const size = statSync(path).size;
  if (size > MAX_INTERVALS_FILE_BYTES) {
    throw usage(
      `Failed to parse --request-intervals. The file '${path}' is ${size} bytes, more than the ${MAX_INTERVALS_FILE_BYTES} bytes accepted`,
    );
  }
  const lines = readFileSync(path, 'utf8').split(/\r?\n/);
  const intervals: number[] = [];
  lines.forEach((line, index) => {
    const text = line.trim();
    if (text === '') return;
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
      throw usage(
        `Failed to parse --request-intervals. Line ${index + 1} of '${path}' is not a whole number of microseconds: '${text}'`,
      );
    }
    intervals.push(Number(text));
  });
  if (intervals.length === 0) throw usage(`Failed to parse --request-intervals. file '${path}' is empty`);
  if (intervals.every((us) => us === 0)) {
    throw usage(`Failed to parse --request-intervals. The intervals in '${path}' are all 0 µs`);
  }
  return intervals;
}

function parseHeader(spec: OptionSpec, value: string): [string, string] {
  const colon = value.indexOf(':');
  const name = colon < 0 ? '' : value.slice(0, colon).trim();
  if (colon < 0 || name === '') {
    throw usage(
      `Failed to parse ${display(spec)}. The header must be given as 'Name: value', got '${value}'`,
    );
  }
  return [name, value.slice(colon + 1).trim()];
}

function parseRequestParameter(spec: OptionSpec, value: string): RequestParameter {
  const parts = value.split(':');
  if (parts.length !== 3) {
    throw usage('Failed to parse --request-parameter. The value does not match <name:value:type>.');
  }
  const [name, raw, rawType] = parts as [string, string, string];
  const type = rawType.toLowerCase();
  if (name === '') throw usage('Failed to parse --request-parameter. The name must not be empty.');
  switch (type) {
    case 'bool':
      if (raw !== 'true' && raw !== 'false') {
        throw usage(
          `Failed to parse --request-parameter. The bool value of '${name}' must be true or false.`,
        );
      }
      return { name, value: raw === 'true' };
    case 'int':
      return { name, value: parseInteger(spec, raw) };
    case 'string':
      return { name, value: raw };
    default:
      throw usage(
        `Failed to parse --request-parameter. Unsupported type provided: '${rawType}'. The available options are 'bool', 'int' or 'string'.`,
      );
  }
}

function parseShape(value: string): [string, number[]] {
  const colon = value.lastIndexOf(':');
  if (colon < 0) throw usage('Failed to parse --shape. There must be a colon after input name.');
  const name = value.slice(0, colon);
  const dims = value
    .slice(colon + 1)
    .split(',')
    .map((d) => {
      const t = d.trim();
      if (!/^[+-]?\d+$/.test(t)) throw usage(`Failed to parse --shape. Invalid value provided: ${value}`);
      const n = Number(t);
      if (n <= 0 || !Number.isSafeInteger(n)) {
        throw usage('Failed to parse --shape. The dimensions of input tensor must be > 0.');
      }
      return n;
    });
  if (name === '') throw usage('Failed to parse --shape. The input name must not be empty.');
  return [name, dims];
}

/** The default metrics URL when `--collect-metrics` is given without `--metrics-url`: `-u`'s host, port 8002. */
function metricsUrlFor(url: string): string {
  const withoutScheme = url.replace(/^[a-z]+:\/\//i, '');
  const colon = withoutScheme.indexOf(':');
  return colon < 0 ? PERF_DEFAULTS.metricsUrl : `${withoutScheme.slice(0, colon)}:8002/metrics`;
}

/**
 * Parses perf_analyzer's command line (without the program name). `-h`/`--help` anywhere returns
 * `{ help: true }`.
 *
 * ```ts
 * const parsed = parsePerfArgs(['-m', 'simple', '--concurrency-range', '1:8:2', '-p', '2000']);
 * if ('help' in parsed) console.log(perfUsage());
 * ```
 * @throws PerfError `USAGE` with perf_analyzer's message for a bad value, an unknown or unsupported
 *   option, or conflicting options.
 */
export function parsePerfArgs(argv: readonly string[]): PerfOptions | PerfHelpRequest {
  const occurrences = tokenize(argv);
  if (occurrences.some((o) => o.spec.long === 'help')) return { help: true };

  let modelName = '';
  let modelVersion: string = PERF_DEFAULTS.modelVersion;
  let url: string | undefined;
  let protocol: PerfProtocol = PERF_DEFAULTS.protocol;
  let batchSize: number = PERF_DEFAULTS.batchSize;
  let concurrency: { start: number; end: number; step: number } | undefined;
  let rate: { start: number; end: number; step: number } | undefined;
  let distribution: RequestDistribution = 'constant';
  let intervalsUs: number[] | undefined;
  let latencyThresholdMs: number = PERF_DEFAULTS.latencyThresholdMs;
  let maxThreads: number | undefined;
  let async: boolean = PERF_DEFAULTS.async;
  let forcedSync = false;
  let streaming: boolean = PERF_DEFAULTS.streaming;
  let measurementIntervalMs: number = PERF_DEFAULTS.measurementIntervalMs;
  let measurementMode: MeasurementMode = PERF_DEFAULTS.measurementMode;
  let measurementRequestCount: number = PERF_DEFAULTS.measurementRequestCount;
  let stabilityPercentage: number = PERF_DEFAULTS.stabilityPercentage;
  let maxTrials: number = PERF_DEFAULTS.maxTrials;
  let percentile: number | undefined = PERF_DEFAULTS.percentile;
  let warmupRequestCount: number = PERF_DEFAULTS.warmupRequestCount;
  let requestCount: number = PERF_DEFAULTS.requestCount;
  const dataPaths: string[] = [];
  let zeroInput = false;
  const shapes = new Map<string, readonly number[]>();
  let stringLength: number = PERF_DEFAULTS.stringLength;
  let stringData: string | undefined = PERF_DEFAULTS.stringData;
  let sharedMemory: SharedMemoryMode = PERF_DEFAULTS.sharedMemory;
  let outputSharedMemorySize: number = PERF_DEFAULTS.outputSharedMemorySize;
  const headers: Record<string, string> = {};
  let grpcCompression: GrpcCompression = PERF_DEFAULTS.grpcCompression;
  let compressionGiven = false;
  const requestParameters = new Map<string, RequestParameter>();
  let inputTensorFormat: 'binary' | 'json' = PERF_DEFAULTS.inputTensorFormat;
  let outputTensorFormat: 'binary' | 'json' = PERF_DEFAULTS.outputTensorFormat;
  let latencyReportFile: string | undefined;
  let verboseCsv: boolean = PERF_DEFAULTS.verboseCsv;
  let profileExportFile: string | undefined;
  let collectMetrics: boolean = PERF_DEFAULTS.collectMetrics;
  let metricsUrl: string | undefined;
  let metricsIntervalMs: number | undefined;
  let numOfSequences: number = PERF_DEFAULTS.numOfSequences;
  let sequenceLength: number = PERF_DEFAULTS.sequenceLength;
  let sequenceLengthVariation: number = PERF_DEFAULTS.sequenceLengthVariation;
  let sequenceIdRange: SequenceIdRange = PERF_DEFAULTS.sequenceIdRange;
  let serialSequences: boolean = PERF_DEFAULTS.serialSequences;
  let verbose: boolean = PERF_DEFAULTS.verbose;
  let seed: number = PERF_DEFAULTS.seed;

  for (const { spec, value: raw } of occurrences) {
    const value = raw ?? '';
    const mustBe = (ok: boolean, condition: string): void => {
      if (!ok) throw usage(`Failed to parse ${display(spec)}. The value must be ${condition}.`);
    };
    switch (spec.long) {
      case 'model-name':
        modelName = value;
        break;
      case 'model-version':
        modelVersion = value;
        break;
      case 'url':
        url = value;
        break;
      case 'protocol': {
        const p = value.toLowerCase();
        if (p !== 'http' && p !== 'grpc') {
          throw usage('Failed to parse -i (protocol). The value should be either HTTP or gRPC.');
        }
        protocol = p;
        break;
      }
      case 'batch-size': {
        const n = parseInteger(spec, value);
        if (n <= 0) throw usage('Failed to parse -b (batch size). The value must be > 0.');
        batchSize = n;
        break;
      }
      case 'concurrency-range': {
        const parts = rangeParts(spec, value).map((p) => parseInteger(spec, p));
        if (parts.some((n) => n < 0)) throw invalid(spec, value);
        const [start, end, step] = parts as [number, number | undefined, number | undefined];
        concurrency = { start, end: end ?? start, step: step ?? 1 };
        break;
      }
      case 'request-rate-range': {
        const parts = rangeParts(spec, value).map((p) => parseDecimal(spec, p));
        if (parts.some((n) => n < 0)) throw invalid(spec, value);
        const [start, end, step] = parts as [number, number | undefined, number | undefined];
        rate = { start, end: end ?? start, step: step ?? 1 };
        break;
      }
      case 'request-distribution':
        if (value !== 'poisson' && value !== 'constant') {
          throw usage(
            `Failed to parse --request-distribution. Unsupported type provided: '${value}'. Choices are 'poisson' or 'constant'.`,
          );
        }
        distribution = value;
        break;
      case 'request-intervals':
        intervalsUs = readIntervals(value);
        break;
      case 'latency-threshold': {
        const n = parseInteger(spec, value);
        mustBe(n >= 0, '>= 0 msecs');
        latencyThresholdMs = n;
        break;
      }
      case 'max-threads': {
        const n = parseInteger(spec, value);
        mustBe(n > 0, '> 0');
        maxThreads = n;
        break;
      }
      case 'async':
        async = true;
        break;
      case 'sync':
        forcedSync = true;
        break;
      case 'streaming':
        streaming = true;
        break;
      case 'measurement-interval': {
        const n = parseInteger(spec, value);
        mustBe(n > 0, '> 0 msec');
        measurementIntervalMs = n;
        break;
      }
      case 'measurement-mode':
        measurementMode = choice(spec, value, ['time_windows', 'count_windows'] as const, {
          what: "'time_windows' or 'count_windows'",
        });
        break;
      case 'measurement-request-count': {
        const n = parseInteger(spec, value);
        mustBe(n > 0, '> 0');
        measurementRequestCount = n;
        break;
      }
      case 'stability-percentage': {
        const n = parseDecimal(spec, value);
        mustBe(n >= 0, '>= 0.0');
        stabilityPercentage = n;
        break;
      }
      case 'max-trials': {
        const n = parseInteger(spec, value);
        mustBe(n > 0, '> 0');
        maxTrials = n;
        break;
      }
      case 'percentile': {
        const n = parseInteger(spec, value);
        if (n !== -1 && (n > 99 || n < 1)) {
          throw usage(
            'Failed to parse --percentile. The value must be -1 for not reporting or in range (0, 100).',
          );
        }
        percentile = n === -1 ? undefined : n;
        break;
      }
      case 'warmup-request-count': {
        const n = parseInteger(spec, value);
        mustBe(n >= 0, '>= 0');
        warmupRequestCount = n;
        break;
      }
      case 'request-count': {
        const n = parseInteger(spec, value);
        if (n < 0) throw usage('Failed to parse --request-count. The value must be > 0.');
        if (requestCount === 0) requestCount = n;
        break;
      }
      case 'input-data': {
        const kind = pathKind(value);
        if (kind !== undefined) dataPaths.push(value);
        else if (value === 'zero') zeroInput = true;
        else if (value !== 'random') {
          throw usage(
            `Failed to parse --input-data. Unsupported type provided: '${value}'. The available options are 'zero', 'random', path to a directory, or a json file.`,
          );
        }
        break;
      }
      case 'data-directory':
        if (pathKind(value) !== 'directory') {
          throw usage(`Failed to parse --data-directory. '${value}' is not a directory.`);
        }
        dataPaths.push(value);
        break;
      case 'zero-input':
        zeroInput = true;
        break;
      case 'shape': {
        const [name, dims] = parseShape(value);
        shapes.set(name, dims);
        break;
      }
      case 'string-length': {
        const n = parseInteger(spec, value);
        mustBe(n > 0, '> 0');
        stringLength = n;
        break;
      }
      case 'string-data':
        stringData = value;
        break;
      case 'shared-memory': {
        if (value === 'cuda') {
          throw usage(
            '--shared-memory=cuda is not supported: there is no CUDA in Node. Use --shared-memory=system or --shared-memory=none.',
          );
        }
        sharedMemory = choice(spec, value, ['none', 'system'] as const, {
          what: "'system', 'cuda', or 'none' ('cuda' is not supported here)",
        });
        break;
      }
      case 'output-shared-memory-size': {
        const n = parseInteger(spec, value);
        mustBe(n >= 0, '>= 0');
        outputSharedMemorySize = n;
        break;
      }
      case 'header': {
        const [name, headerValue] = parseHeader(spec, value);
        headers[name] = headerValue;
        break;
      }
      case 'grpc-compression-algorithm':
        grpcCompression = choice(spec, value, ['none', 'gzip', 'deflate'] as const, {
          what: "'gzip', 'deflate', or 'none'",
        });
        compressionGiven = true;
        break;
      case 'request-parameter': {
        const parameter = parseRequestParameter(spec, value);
        requestParameters.set(parameter.name, parameter);
        break;
      }
      case 'input-tensor-format':
        inputTensorFormat = choice(spec, value, ['binary', 'json'] as const, {
          caseInsensitive: true,
          what: "'binary' or 'json'",
        });
        break;
      case 'output-tensor-format':
        outputTensorFormat = choice(spec, value, ['binary', 'json'] as const, {
          caseInsensitive: true,
          what: "'binary' or 'json'",
        });
        break;
      case 'filename':
        latencyReportFile = value;
        break;
      case 'verbose-csv':
        verboseCsv = true;
        break;
      case 'profile-export-file':
        if (pathKind(value) !== undefined) {
          throw usage('Failed to parse --profile-export-file. Path must not already exist.');
        }
        profileExportFile = value;
        break;
      case 'collect-metrics':
        collectMetrics = true;
        break;
      case 'metrics-url':
        metricsUrl = value;
        break;
      case 'metrics-interval': {
        const n = parseInteger(spec, value);
        mustBe(n > 0, '> 0 msecs');
        metricsIntervalMs = n;
        break;
      }
      case 'num-of-sequences': {
        const n = parseInteger(spec, value);
        mustBe(n > 0, '> 0');
        numOfSequences = n;
        break;
      }
      case 'sequence-length': {
        const n = parseInteger(spec, value);
        mustBe(n > 0, '> 0');
        sequenceLength = n;
        break;
      }
      case 'sequence-length-variation': {
        const n = parseDecimal(spec, value);
        mustBe(n >= 0, '>= 0.0');
        sequenceLengthVariation = n;
        break;
      }
      case 'sequence-id-range': {
        const parts = value.split(':');
        if (parts.length > 2) {
          throw usage('Failed to parse --sequence-id-range. The value does not match <start:end>.');
        }
        const [start, end] = parts.map((p) => parseInteger(spec, p)) as [number, number | undefined];
        if (start < 0 || (end !== undefined && end < 0)) {
          throw usage('Failed to parse --sequence-id-range. The range values must be >= 0.');
        }
        if (end !== undefined && start > end) {
          throw usage(
            "Failed to parse --sequence-id-range. The 'end' value must be greater than 'start' value.",
          );
        }
        // perf_analyzer: a start id of 0 is invalid and replaced by the default, 1.
        sequenceIdRange = { start: start === 0 ? 1 : start, end };
        break;
      }
      case 'serial-sequences':
        serialSequences = true;
        break;
      case 'verbose':
        verbose = true;
        break;
      case 'seed': {
        const n = parseInteger(spec, value);
        mustBe(n >= 0 && n <= 0xffff_ffff, 'an integer in [0, 4294967295]');
        seed = n;
        break;
      }
      default:
        throw usage(`unrecognized option '${spec.long}'`);
    }
  }

  // --- VerifyOptions, in perf_analyzer's order ---
  if (modelName === '') throw usage('Failed to parse -m (model name). The value must be specified.');
  if (concurrency !== undefined && concurrency.start <= 0) {
    throw usage('The start of the search range must be > 0');
  }
  if (rate !== undefined && rate.start <= 0) {
    throw usage('Failed to parse --request-rate-range. The start of the search range must be > 0.');
  }
  if (streaming && protocol !== 'grpc') throw usage('Streaming is only allowed with gRPC protocol.');
  if (compressionGiven && protocol !== 'grpc') {
    throw usage('Using compression algorithm is only allowed with gRPC protocol.');
  }
  if (zeroInput && dataPaths.length > 0) {
    throw usage(
      '--input-data zero (-z) cannot be combined with a data file or directory given to --input-data.',
    );
  }
  if (async && forcedSync) throw usage('Cannot specify --async and --sync simultaneously.');
  const modes = [concurrency, rate, intervalsUs].filter((m) => m !== undefined).length;
  if (modes > 1) {
    throw usage(
      'Cannot specify more then one inference load mode. Please choose only one of the following modes: --concurrency-range, --request-rate-range, or --request-intervals.',
    );
  }
  if (requestParameters.size > 0 && protocol !== 'grpc') {
    throw usage('The --request-parameter option is currently only supported by gRPC protocol.');
  }
  if (((concurrency?.end ?? 1) === 0 || (rate?.end ?? 1) === 0) && latencyThresholdMs === 0) {
    throw usage(
      'The end of the search range and the latency limit can not be both 0 (or 0.0) simultaneously',
    );
  }
  for (const [range, option] of [
    [concurrency, '--concurrency-range'],
    [rate, '--request-rate-range'],
  ] as const) {
    if (range === undefined) continue;
    if (range.step <= 0) throw usage(`Failed to parse ${option}. The <step> value must be > 0.`);
    if (range.end !== 0 && range.end < range.start) {
      throw usage(`Failed to parse ${option}. The <end> must be >= <start> (or 0 to search up to -l).`);
    }
  }
  if (warmupRequestCount !== 0) {
    if (concurrency !== undefined && concurrency.start !== concurrency.end) {
      throw usage('--warmup-request-count not supported with multiple concurrency values in one run');
    }
    if (rate !== undefined && rate.start !== rate.end) {
      throw usage('--warmup-request-count not supported with multiple request rate values in one run');
    }
  }
  if (requestCount !== 0) {
    if (concurrency !== undefined) {
      if (requestCount < concurrency.start) throw usage('--request-count can not be less than concurrency');
      if (concurrency.start !== concurrency.end) {
        throw usage('--request-count not supported with multiple concurrency values in one run');
      }
    }
    if (rate !== undefined) {
      if (requestCount < Math.trunc(rate.start))
        throw usage('--request-count can not be less than request rate');
      if (rate.start !== rate.end) {
        throw usage('--request-count not supported with multiple request rate values in one run');
      }
    }
    // perf_analyzer: --request-count measures in one count window of that many requests.
    measurementMode = 'count_windows';
    measurementRequestCount = requestCount;
  }
  if (metricsUrl !== undefined && !collectMetrics) {
    throw usage('Must specify --collect-metrics when using the --metrics-url option.');
  }
  if (metricsIntervalMs !== undefined && !collectMetrics) {
    throw usage('Must specify --collect-metrics when using the --metrics-interval option.');
  }

  const finalUrl = url ?? defaultUrl(protocol);
  const load: LoadMode =
    intervalsUs !== undefined
      ? { kind: 'request_intervals', intervalsUs }
      : rate !== undefined
        ? { kind: 'request_rate', range: rate, distribution }
        : { kind: 'concurrency', range: concurrency ?? PERF_DEFAULTS.load.range };
  // perf_analyzer: max_threads defaults to 4; when targeting concurrency, to max(16, end).
  const threads =
    maxThreads ?? (load.kind === 'concurrency' ? Math.max(PERF_DEFAULTS.maxThreads, load.range.end) : 4);

  return {
    modelName,
    modelVersion,
    url: finalUrl,
    protocol,
    batchSize,
    load,
    latencyThresholdMs,
    maxThreads: threads,
    async,
    streaming,
    measurementIntervalMs,
    measurementMode,
    measurementRequestCount,
    stabilityPercentage,
    maxTrials,
    percentile,
    warmupRequestCount,
    requestCount,
    inputData: zeroInput ? ['zero'] : dataPaths.length > 0 ? dataPaths : ['random'],
    shapes,
    stringLength,
    stringData,
    sharedMemory,
    outputSharedMemorySize,
    headers,
    grpcCompression,
    requestParameters: [...requestParameters.values()],
    inputTensorFormat,
    outputTensorFormat,
    latencyReportFile,
    verboseCsv,
    profileExportFile,
    collectMetrics,
    metricsUrl: metricsUrl ?? (collectMetrics ? metricsUrlFor(finalUrl) : PERF_DEFAULTS.metricsUrl),
    metricsIntervalMs: metricsIntervalMs ?? PERF_DEFAULTS.metricsIntervalMs,
    numOfSequences,
    sequenceLength,
    sequenceLengthVariation,
    sequenceIdRange,
    serialSequences,
    verbose,
    seed,
  };
}

const HELP_SECTIONS: readonly (readonly [string, readonly (readonly [string, string])[]])[] = [
  [
    '',
    [
      ['-m <model name>', 'The model to profile (required).'],
      ['-x <model version>', "The model version; default: the server's choice (the highest version)."],
      ['-v', 'Verbose output.'],
      ['-h, --help', 'Print this help and exit.'],
    ],
  ],
  [
    'I. MEASUREMENT PARAMETERS',
    [
      ['--async (-a)', 'Asynchronous mode (the load generator is asynchronous in any case).'],
      ['--sync', 'Synchronous mode (the default).'],
      ['--measurement-interval (-p) <ms>', 'Length of a time window, default 5000 ms.'],
      ['--measurement-mode <time_windows|count_windows>', 'How windows end, default time_windows.'],
      ['--measurement-request-count <n>', 'Requests per count window, default 50.'],
      [
        '--concurrency-range <start:end:step>',
        'Concurrency levels; end 0: grow by step until -l is passed. Default 1.',
      ],
      ['--request-rate-range <start:end:step>', 'Request rates per second (decimals allowed).'],
      ['--request-distribution <constant|poisson>', 'Gaps between requests in rate mode, default constant.'],
      ['--request-intervals <file>', 'One gap in microseconds per line, replayed in a loop.'],
      ['--latency-threshold (-l) <ms>', 'Stop the sweep when latency passes this (0: no limit).'],
      ['--max-threads <n>', 'In-flight requests of the rate modes; default 4 (concurrency: max(16, end)).'],
      ['--stability-percentage (-s) <pct>', 'Allowed deviation of the last 3 windows, default 10.'],
      ['--max-trials (-r) <n>', 'Windows tried per level before giving up on stability, default 10.'],
      ['--percentile <1..99>', 'Stabilise and report on this latency percentile instead of the average.'],
      ['--request-count <n>', 'Measure exactly n requests (one count window).'],
      ['--warmup-request-count <n>', 'Requests sent before measuring.'],
      ['--serial-sequences', 'Send the requests of a sequence one after another.'],
      ['--num-of-sequences <n>', 'Concurrent sequences in the rate modes, default 4.'],
    ],
  ],
  [
    'II. INPUT DATA OPTIONS',
    [
      ['-b <batch size>', 'Batch size of each request, default 1.'],
      [
        '--input-data <zero|random|path>',
        'Data to send: zeros, random (default), a JSON file or a directory; repeatable.',
      ],
      [
        '--shared-memory <none|system>',
        "Send tensors through system shared memory ('cuda' is not available in Node).",
      ],
      ['--output-shared-memory-size <bytes>', 'Shared memory per output, default 102400.'],
      [
        '--shape <name:d1,d2,...>',
        'Shape of a variable-sized input (without the batch dimension); repeatable.',
      ],
      ['--sequence-length <n>', 'Average requests per sequence, default 20.'],
      ['--sequence-length-variation <pct>', 'Variation of the sequence length, default 20.'],
      ['--sequence-id-range <start[:end]>', 'Correlation ids to use, default from 1.'],
      ['--string-length <n>', 'Length of random BYTES elements, default 128.'],
      ['--string-data <string>', 'Send this string as every BYTES element.'],
      ['--input-tensor-format <binary|json>', 'HTTP input encoding, default binary.'],
      ['--output-tensor-format <binary|json>', 'HTTP output encoding, default binary.'],
      ['--seed <n>', 'Seed of random data and Poisson gaps, default 1 (this tool only).'],
    ],
  ],
  [
    'III. SERVER DETAILS',
    [
      ['-u <url>', 'Server address, default localhost:8000 (HTTP) or localhost:8001 (gRPC).'],
      ['-i <http|grpc>', 'Protocol, default HTTP.'],
    ],
  ],
  [
    'IV. OTHER OPTIONS',
    [
      ['-f <file>', 'Write the results as CSV.'],
      ['--verbose-csv', 'Add per-window columns to the CSV.'],
      ['--profile-export-file <path>', 'Write every request timestamp as JSON (the path must not exist).'],
      ['-H <Name: value>', 'HTTP header (gRPC metadata) to send; repeatable.'],
      ['--streaming', 'Use gRPC bidirectional streaming (gRPC only).'],
      ['--grpc-compression-algorithm <none|gzip|deflate>', 'gRPC request compression.'],
      ['--request-parameter <name:value:type>', 'Request parameter (type bool, int or string; gRPC only).'],
      ['--collect-metrics', "Scrape the server's /metrics during each window."],
      ['--metrics-url <url>', 'Metrics address, default <-u host>:8002/metrics.'],
      ['--metrics-interval <ms>', 'Scrape interval, default 1000 ms.'],
    ],
  ],
];

/** The `--help` text: perf_analyzer's options grouped as in its usage, with this tool's defaults. */
export function perfUsage(): string {
  const lines = ['Usage: perf-analyzer-ts -m <model name> [options]', ''];
  for (const [title, entries] of HELP_SECTIONS) {
    if (title !== '') lines.push(`${title}:`);
    for (const [flag, text] of entries) lines.push(`  ${flag.padEnd(50)} ${text}`);
    lines.push('');
  }
  lines.push(
    'Not supported (refused with an error): --service-kind other than triton, --shared-memory=cuda,',
    '--binary-search, --periodic-concurrency-range, --schedule, --session-concurrency, SSL, MPI and',
    'tracing options, and the deprecated -t, -c, -d.',
  );
  return `${lines.join('\n')}\n`;
}
