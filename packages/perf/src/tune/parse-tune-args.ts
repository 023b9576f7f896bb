/**
 * The `model-analyzer-ts profile` command line → {@link TuneOptions}. Option names are Model
 * Analyzer's (`--profile-models`, `--run-config-search-max-instance-count`, `--latency-budget`,
 * `--min-throughput`, `--client-protocol`, `--export-path`, …) with short aliases taken from
 * perf_analyzer (`-m`, `-u`, `-i`), plus explicit lists (`--instance-counts 1,2`,
 * `--max-batch-sizes 1,4,8`, `--concurrency 1,2,4,8`). perf_analyzer options for each measurement
 * (`-b`, `-p`, `-s`, `-r`, `--shape`, `--input-data`, …) are forwarded to the perf engine's own
 * parser, as are any options after `--`.
 * @packageDocumentation
 */
import { PerfError } from '../errors.js';
import { parsePerfArgs } from '../options/parse-perf-args.js';
import type { PerfOptions, PerfProtocol } from '../options/perf-options.js';
import { defaultUrl } from '../options/perf-options.js';
import type { DynamicBatchingChoice, LatencyMetric, TuneOptions } from './tune-options.js';
import { LATENCY_METRICS, powersOfTwo, TUNE_DEFAULTS } from './tune-options.js';

/** The parsed command line. */
export interface TuneCliOptions {
  readonly tune: TuneOptions;
  /** `--output-dir` / `-e, --export-path`: where report.html, results.csv and best/config.pbtxt go. */
  readonly outputDir: string;
  readonly verbose: boolean;
  readonly quiet: boolean;
}

/** `-h` / `--help`. */
export interface TuneHelpRequest {
  readonly help: true;
}

/** The default output directory. */
export const DEFAULT_OUTPUT_DIR = 'model-analyzer-ts-results';

interface Spec {
  readonly long: string;
  readonly short?: string;
  readonly value: boolean;
  /** Forwarded to the perf engine's parser. */
  readonly perf?: true;
}

const TUNER_OPTIONS: readonly Spec[] = [
  { long: 'profile-models', short: 'm', value: true },
  { long: 'model-version', short: 'x', value: true },
  { long: 'url', short: 'u', value: true },
  { long: 'triton-http-endpoint', value: true },
  { long: 'triton-grpc-endpoint', value: true },
  { long: 'client-protocol', short: 'i', value: true },
  { long: 'latency-budget', value: true },
  { long: 'latency-metric', value: true },
  { long: 'min-throughput', value: true },
  { long: 'run-config-search-min-instance-count', value: true },
  { long: 'run-config-search-max-instance-count', value: true },
  { long: 'instance-counts', value: true },
  { long: 'run-config-search-min-model-batch-size', value: true },
  { long: 'run-config-search-max-model-batch-size', value: true },
  { long: 'max-batch-sizes', value: true },
  { long: 'run-config-search-min-concurrency', value: true },
  { long: 'run-config-search-max-concurrency', value: true },
  { long: 'concurrency', value: true },
  { long: 'dynamic-batching', value: true },
  { long: 'preferred-batch-sizes', value: true },
  { long: 'max-queue-delay-microseconds', value: true },
  { long: 'intra-op-thread-counts', value: true },
  { long: 'run-config-search-disable', value: false },
  { long: 'max-configs', value: true },
  { long: 'tie-tolerance', value: true },
  { long: 'early-exit-disable', value: false },
  { long: 'allow-unstable', value: false },
  { long: 'export-path', short: 'e', value: true },
  { long: 'verbose', short: 'v', value: false },
  { long: 'quiet', short: 'q', value: false },
  { long: 'help', short: 'h', value: false },
  // perf_analyzer's options for each measurement.
  { long: 'batch-size', short: 'b', value: true, perf: true },
  { long: 'measurement-interval', short: 'p', value: true, perf: true },
  { long: 'stability-percentage', short: 's', value: true, perf: true },
  { long: 'max-trials', short: 'r', value: true, perf: true },
  { long: 'measurement-mode', value: true, perf: true },
  { long: 'measurement-request-count', value: true, perf: true },
  { long: 'percentile', value: true, perf: true },
  { long: 'warmup-request-count', value: true, perf: true },
  { long: 'input-data', value: true, perf: true },
  { long: 'shape', value: true, perf: true },
  { long: 'string-length', value: true, perf: true },
  { long: 'string-data', value: true, perf: true },
  { long: 'header', short: 'H', value: true, perf: true },
  { long: 'shared-memory', value: true, perf: true },
  { long: 'async', short: 'a', value: false, perf: true },
  { long: 'sync', value: false, perf: true },
  { long: 'max-threads', value: true, perf: true },
];

/** Other spellings of an option (ours and the task's), mapped to the option's long name. */
const ALIASES: Readonly<Record<string, string>> = {
  'model-name': 'profile-models',
  protocol: 'client-protocol',
  'latency-budget-ms': 'latency-budget',
  'max-instance-count': 'run-config-search-max-instance-count',
  'intra-op-thread-count': 'intra-op-thread-counts',
  'output-dir': 'export-path',
};

/** perf options the tuner sets itself (refused after `--`). */
const TUNER_OWNED_PERF = new Set([
  '-m',
  '--model-name',
  '-x',
  '--model-version',
  '-u',
  '--url',
  '-i',
  '--protocol',
  '--concurrency-range',
  '--request-rate-range',
  '--request-intervals',
  '-l',
  '--latency-threshold',
  '-f',
  '--filename',
  '--profile-export-file',
]);

const BY_LONG = new Map(TUNER_OPTIONS.map((s) => [s.long, s]));
const BY_SHORT = new Map(
  TUNER_OPTIONS.filter((s) => s.short !== undefined).map((s) => [s.short as string, s]),
);

function usage(message: string): PerfError {
  return new PerfError('USAGE', message);
}

interface Occurrence {
  readonly spec: Spec;
  /** As written (`--shape`, `-b`), for messages and forwarding. */
  readonly flag: string;
  readonly value: string | undefined;
}

function tokenize(argv: readonly string[]): { occurrences: Occurrence[]; passthrough: string[] } {
  const occurrences: Occurrence[] = [];
  let i = 0;
  if (argv[0] === 'profile') i = 1;
  for (; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (arg === '--') return { occurrences, passthrough: argv.slice(i + 1) };
    let spec: Spec | undefined;
    let inline: string | undefined;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = arg.slice(2, eq < 0 ? undefined : eq);
      inline = eq < 0 ? undefined : arg.slice(eq + 1);
      spec = BY_LONG.get(ALIASES[name] ?? name);
      if (spec === undefined) throw usage(`unrecognized option '${arg}'`);
    } else if (arg.startsWith('-') && arg.length > 1) {
      spec = BY_SHORT.get(arg.slice(1, 2));
      if (spec === undefined) throw usage(`unrecognized option '${arg}'`);
      if (arg.length > 2) inline = arg.slice(2);
    } else if (arg === 'profile') {
      throw usage("'profile' must come first");
    } else {
      throw usage(`unexpected argument '${arg}' (model-analyzer-ts has one subcommand: profile)`);
    }
    const flag = arg.startsWith('--') ? `--${spec.long}` : arg.slice(0, 2);
    if (!spec.value) {
      if (inline !== undefined) throw usage(`option '${flag}' takes no value`);
      occurrences.push({ spec, flag, value: undefined });
      continue;
    }
    let value = inline;
    if (value === undefined) {
      value = argv[i + 1];
      if (value === undefined) throw usage(`option '${flag}' needs a value`);
      i += 1;
    }
    occurrences.push({ spec, flag, value });
  }
  return { occurrences, passthrough: [] };
}

function integer(flag: string, text: string, min: number): number {
  if (!/^\s*\d+\s*$/.test(text)) throw usage(`${flag}: '${text}' is not an integer`);
  const n = Number(text.trim());
  if (!Number.isSafeInteger(n) || n < min) throw usage(`${flag}: ${text} must be >= ${String(min)}`);
  return n;
}

function positiveNumber(flag: string, text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n <= 0)
    throw usage(`${flag}: '${text}' is not a positive number`);
  return n;
}

function integerList(flag: string, text: string, min: number): number[] {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.some((p) => p === ''))
    throw usage(`${flag}: '${text}' is not a comma-separated list of integers`);
  return parts.map((p) => integer(flag, p, min));
}

function range(values: number[], min: number, max: number): number[] {
  for (let v = min; v <= max; v += 1) values.push(v);
  return values;
}

/**
 * Parses `model-analyzer-ts [profile] …`.
 * @throws PerfError `USAGE` for an unknown option, a bad value or a missing model
 */
export function parseTuneArgs(argv: readonly string[]): TuneCliOptions | TuneHelpRequest {
  const { occurrences, passthrough } = tokenize(argv);
  if (occurrences.some((o) => o.spec.long === 'help')) return { help: true };
  const last = new Map<string, Occurrence>();
  const all = (long: string): Occurrence[] => occurrences.filter((o) => o.spec.long === long);
  for (const o of occurrences) last.set(o.spec.long, o);
  const get = (long: string): string | undefined => last.get(long)?.value;
  const has = (long: string): boolean => last.has(long);

  const modelName = get('profile-models');
  if (modelName === undefined || modelName.trim() === '') {
    throw usage('the model to profile is missing: give -m / --profile-models <name>');
  }
  if (modelName.includes(',')) {
    throw usage('model-analyzer-ts profiles one model at a time: give a single name to --profile-models');
  }
  const protocolText = get('client-protocol') ?? TUNE_DEFAULTS.protocol;
  if (protocolText !== 'http' && protocolText !== 'grpc') {
    throw usage(`--client-protocol: '${protocolText}' is not http or grpc`);
  }
  const protocol: PerfProtocol = protocolText;
  const url =
    get('url') ??
    (protocol === 'http' ? get('triton-http-endpoint') : get('triton-grpc-endpoint')) ??
    defaultUrl(protocol);
  const modelVersion = get('model-version') ?? '';

  const metricText = get('latency-metric') ?? TUNE_DEFAULTS.latencyMetric;
  if (!(LATENCY_METRICS as readonly string[]).includes(metricText)) {
    throw usage(`--latency-metric: '${metricText}' is not one of ${LATENCY_METRICS.join(', ')}`);
  }
  const latencyMetric = metricText as LatencyMetric;
  const budgetText = get('latency-budget');
  const latencyBudgetMs =
    budgetText === undefined ? undefined : positiveNumber('--latency-budget', budgetText);
  const minText = get('min-throughput');
  const minThroughput = minText === undefined ? undefined : positiveNumber('--min-throughput', minText);

  const d = TUNE_DEFAULTS.space;
  const listOrRange = (
    list: string,
    minFlag: string,
    maxFlag: string,
    defaults: readonly number[],
    expand: (min: number, max: number) => number[],
  ): number[] => {
    const explicit = get(list);
    if (explicit !== undefined) {
      if (has(minFlag) || has(maxFlag))
        throw usage(`--${list} cannot be combined with --${minFlag} / --${maxFlag}`);
      return integerList(`--${list}`, explicit, 1);
    }
    if (!has(minFlag) && !has(maxFlag)) return [...defaults];
    const min = integer(`--${minFlag}`, get(minFlag) ?? '1', 1);
    const max = integer(`--${maxFlag}`, get(maxFlag) ?? String(Math.max(min, ...defaults)), 1);
    if (max < min) throw usage(`--${maxFlag} (${String(max)}) is smaller than --${minFlag} (${String(min)})`);
    const values = expand(min, max);
    if (values.length === 0)
      throw usage(`no value between --${minFlag} ${String(min)} and --${maxFlag} ${String(max)}`);
    return values;
  };
  const instanceCounts = listOrRange(
    'instance-counts',
    'run-config-search-min-instance-count',
    'run-config-search-max-instance-count',
    d.instanceCounts,
    (min, max) => range([], min, max),
  );
  const maxBatchSizes = listOrRange(
    'max-batch-sizes',
    'run-config-search-min-model-batch-size',
    'run-config-search-max-model-batch-size',
    d.maxBatchSizes,
    powersOfTwo,
  );
  const concurrency = listOrRange(
    'concurrency',
    'run-config-search-min-concurrency',
    'run-config-search-max-concurrency',
    d.concurrency,
    powersOfTwo,
  );

  const modes = (get('dynamic-batching') ?? 'off,on').split(',').map((m) => m.trim());
  for (const m of modes) {
    if (m !== 'off' && m !== 'on') throw usage(`--dynamic-batching: '${m}' is not off or on`);
  }
  const preferred = all('preferred-batch-sizes').map((o) =>
    o.value?.trim() === 'none' ? [] : integerList('--preferred-batch-sizes', o.value ?? '', 1),
  );
  const delayText = get('max-queue-delay-microseconds');
  const delays = delayText === undefined ? [0] : integerList('--max-queue-delay-microseconds', delayText, 0);
  if ((preferred.length > 0 || delayText !== undefined) && !modes.includes('on')) {
    throw usage('--preferred-batch-sizes and --max-queue-delay-microseconds need --dynamic-batching on');
  }
  const dynamicBatching: DynamicBatchingChoice[] = [];
  if (modes.includes('off')) dynamicBatching.push({ enabled: false });
  if (modes.includes('on')) {
    for (const preferredBatchSize of preferred.length > 0 ? preferred : [[]]) {
      for (const maxQueueDelayMicroseconds of delays) {
        dynamicBatching.push({ enabled: true, preferredBatchSize, maxQueueDelayMicroseconds });
      }
    }
  }
  const threadsText = get('intra-op-thread-counts');
  const intraOpThreadCounts =
    threadsText === undefined ? [] : integerList('--intra-op-thread-counts', threadsText, 1);
  const maxConfigsText = get('max-configs');
  const maxConfigs =
    maxConfigsText === undefined ? d.maxConfigs : integer('--max-configs', maxConfigsText, 1);
  const tieText = get('tie-tolerance');
  const tieTolerancePercent = tieText === undefined ? TUNE_DEFAULTS.tieTolerancePercent : Number(tieText);
  if (!Number.isFinite(tieTolerancePercent) || tieTolerancePercent < 0 || tieTolerancePercent >= 100) {
    throw usage(`--tie-tolerance: '${tieText ?? ''}' is not a percentage in [0, 100)`);
  }

  // perf_analyzer's options for each measurement, through the perf engine's own parser.
  for (const arg of passthrough) {
    const flag = arg.split('=')[0] as string;
    if (TUNER_OWNED_PERF.has(flag) || (/^-[muixlf]./.test(arg) && !arg.startsWith('--'))) {
      throw usage(`'${arg}' after '--' is set by the tuner itself`);
    }
  }
  const perfArgv: string[] = [];
  for (const o of occurrences) {
    if (o.spec.perf !== true) continue;
    // perf_analyzer's own spelling: the short letter where it has one (it has no --batch-size, --header).
    perfArgv.push(o.spec.short !== undefined ? `-${o.spec.short}` : `--${o.spec.long}`);
    if (o.value !== undefined) perfArgv.push(o.value);
  }
  perfArgv.push(...passthrough);
  const parsed = parsePerfArgs(['-m', modelName, '-u', url, '-i', protocol, ...perfArgv]);
  if ('help' in parsed) return { help: true };
  const perf = perfPart(parsed, perfArgv);

  const tune: TuneOptions = {
    ...TUNE_DEFAULTS,
    modelName,
    modelVersion,
    url,
    protocol,
    latencyBudgetMs,
    latencyMetric,
    minThroughput,
    tieTolerancePercent,
    earlyExit: !has('early-exit-disable'),
    requireStable: !has('allow-unstable'),
    space: {
      instanceCounts,
      maxBatchSizes,
      dynamicBatching,
      intraOpThreadCounts,
      concurrency,
      searchDisabled: has('run-config-search-disable'),
      maxConfigs,
    },
    perf,
  };
  return {
    tune,
    outputDir: get('export-path') ?? DEFAULT_OUTPUT_DIR,
    verbose: has('verbose'),
    quiet: has('quiet'),
  };
}

/** The perf options of each measurement: parsed ones, with the tuner's shorter defaults for -p and -r. */
function perfPart(parsed: PerfOptions, perfArgv: readonly string[]): TuneOptions['perf'] {
  const given = (long: string, short: string): boolean =>
    perfArgv.some(
      (a) =>
        a === `--${long}` ||
        a.startsWith(`--${long}=`) ||
        a === `-${short}` ||
        (a.startsWith(`-${short}`) && !a.startsWith('--')),
    );
  const { modelName: _m, modelVersion: _x, url: _u, protocol: _i, load: _l, ...rest } = parsed;
  return {
    ...rest,
    measurementIntervalMs: given('measurement-interval', 'p')
      ? parsed.measurementIntervalMs
      : TUNE_DEFAULTS.perf.measurementIntervalMs,
    maxTrials: given('max-trials', 'r') ? parsed.maxTrials : TUNE_DEFAULTS.perf.maxTrials,
  };
}

/** The `--help` text. */
export function tuneUsage(): string {
  const rows: [string, string][] = [
    ['-m, --profile-models <name>', 'The model to profile (one; it must be loaded).'],
    ['-x, --model-version <v>', "The model's version (default: the server's choice)."],
    ['-u, --url <host:port>', 'The server (default localhost:8000 for http, localhost:8001 for grpc).'],
    ['--triton-http-endpoint, --triton-grpc-endpoint', 'Model Analyzer spellings of -u, per protocol.'],
    ['-i, --client-protocol http|grpc', 'The protocol (default http).'],
    ['--latency-budget <ms>', 'Constraint: latency at most this (alias --latency-budget-ms).'],
    ['--latency-metric p50|p90|p95|p99|avg', 'The latency the budget bounds (default p99).'],
    ['--min-throughput <infer/sec>', 'Constraint: throughput at least this.'],
    ['--run-config-search-min-instance-count <n>', 'Instance counts from this (default 1) ...'],
    [
      '--run-config-search-max-instance-count <n>',
      '... to this, every integer (default 2; alias --max-instance-count).',
    ],
    ['--instance-counts <list>', 'Or exactly these instance counts (e.g. 1,2,4).'],
    ['--run-config-search-min-model-batch-size <n>', 'max_batch_size from this (default 1) ...'],
    ['--run-config-search-max-model-batch-size <n>', '... to this, powers of two (default 8).'],
    ['--max-batch-sizes <list>', 'Or exactly these max_batch_size values (e.g. 1,4,8).'],
    ['--run-config-search-min-concurrency <n>', 'Concurrency from this (default 1) ...'],
    ['--run-config-search-max-concurrency <n>', '... to this, powers of two (default 16).'],
    ['--concurrency <list>', 'Or exactly these concurrencies (e.g. 1,2,4,8).'],
    ['--dynamic-batching off,on', 'Dynamic batching choices (default off,on).'],
    ['--preferred-batch-sizes <list|none>', 'A preferred_batch_size choice for "on" (repeatable, e.g. 4,8).'],
    ['--max-queue-delay-microseconds <list>', 'max_queue_delay_microseconds choices for "on" (default 0).'],
    [
      '--intra-op-thread-counts <list>',
      'onnxruntime intra_op_thread_count choices (onnxruntime models only).',
    ],
    ['--run-config-search-disable', "Measure only the model's own configuration."],
    ['--max-configs <n>', 'Refuse a sweep of more configurations (default 64).'],
    ['--tie-tolerance <percent>', 'Throughputs this close are ties, won by fewer resources (default 5).'],
    ['--early-exit-disable', 'Measure every concurrency even past the latency budget.'],
    ['--allow-unstable', 'Let measurements that did not stabilise (within -r trials) win too.'],
    ['-e, --export-path <dir>', `Output directory (default ${DEFAULT_OUTPUT_DIR}; alias --output-dir).`],
    [
      '-b, -p, -s, -r, --shape, --input-data, ...',
      'perf_analyzer options for each measurement (-p default 1000, -r 5).',
    ],
    ['-- <perf_analyzer options>', 'Any other perf_analyzer options for each measurement.'],
    ['-q, --quiet', 'No progress line.'],
    ['-v, --verbose', 'Print each configuration and perf warning; stacks on errors.'],
    ['-h, --help', 'This help.'],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return [
    'Usage: model-analyzer-ts profile -m <model> [-u <host:port>] [-i http|grpc] [options]',
    '',
    "Sweeps instance count x max_batch_size x dynamic batching (x intra_op_thread_count) through the server's",
    'model load API (explicit model control), measures each configuration with the perf engine, and writes',
    'report.html, results.csv and best/config.pbtxt into the output directory.',
    '',
    ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`),
  ].join('\n');
}
