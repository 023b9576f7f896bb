/**
 * The perf engine's options: perf_analyzer's command-line options as typed data (names in
 * camelCase, meanings and defaults exactly perf_analyzer's; see `parse-perf-args.ts` for the flag of
 * each). The CLI parses argv into this; the tuner and library users build it with
 * {@link perfOptions}.
 * @packageDocumentation
 */

/** Wire protocol (`-i`). */
export type PerfProtocol = 'http' | 'grpc';

/** `--measurement-mode`. */
export type MeasurementMode = 'time_windows' | 'count_windows';

/** `--request-distribution`. */
export type RequestDistribution = 'constant' | 'poisson';

/** `--shared-memory` (`cuda` is refused: there is no GPU path in Node). */
export type SharedMemoryMode = 'none' | 'system';

/** `--grpc-compression-algorithm`. */
export type GrpcCompression = 'none' | 'gzip' | 'deflate';

/** A `start:end:step` range (`--concurrency-range`, `--request-rate-range`). */
export interface LoadRange {
  readonly start: number;
  /** 0 in a concurrency range: grow until the latency threshold (`-l`) is passed. */
  readonly end: number;
  readonly step: number;
}

/** `--sequence-id-range start:end` (end undefined: unbounded). */
export interface SequenceIdRange {
  readonly start: number;
  readonly end: number | undefined;
}

/** One `--request-parameter name:value:type` (gRPC only, as in perf_analyzer). */
export interface RequestParameter {
  readonly name: string;
  readonly value: string | number | boolean;
}

/** What to load the server with. Exactly one mode per run. */
export type LoadMode =
  | { readonly kind: 'concurrency'; readonly range: LoadRange }
  | {
      readonly kind: 'request_rate';
      readonly range: LoadRange;
      readonly distribution: RequestDistribution;
    }
  | {
      /** `--request-intervals <file>`: one interval in µs per line, replayed in a loop. */
      readonly kind: 'request_intervals';
      readonly intervalsUs: readonly number[];
    };

/** Every option of a perf run. */
export interface PerfOptions {
  /** `-m` */
  readonly modelName: string;
  /** `-x` ('' = the server's choice). */
  readonly modelVersion: string;
  /** `-u` (default `localhost:8000` for HTTP, `localhost:8001` for gRPC). */
  readonly url: string;
  /** `-i` (default http). */
  readonly protocol: PerfProtocol;
  /** `-b` (default 1). */
  readonly batchSize: number;
  readonly load: LoadMode;
  /** `-l` in ms (0 = none). */
  readonly latencyThresholdMs: number;
  /** `--max-threads` (16; 4 with request rate): the number of in-flight requests the rate modes may keep. */
  readonly maxThreads: number;
  /** `-a/--async` vs `--sync` (default sync, as perf_analyzer; the engine is asynchronous either way). */
  readonly async: boolean;
  /** `--streaming` (gRPC only). */
  readonly streaming: boolean;
  /** `-p` (default 5000 ms). */
  readonly measurementIntervalMs: number;
  /** `--measurement-mode` (default time_windows). */
  readonly measurementMode: MeasurementMode;
  /** `--measurement-request-count` (default 50). */
  readonly measurementRequestCount: number;
  /** `-s` (default 10). */
  readonly stabilityPercentage: number;
  /** `-r` (default 10). */
  readonly maxTrials: number;
  /** `--percentile` (undefined = stabilise and report on the average latency). */
  readonly percentile: number | undefined;
  /** `--warmup-request-count` (default 0). */
  readonly warmupRequestCount: number;
  /** `--request-count` (default 0 = no limit): measure exactly this many requests, one window. */
  readonly requestCount: number;
  /** `--input-data` (repeatable; default `random`): `zero`, `random`, a JSON file or a directory. */
  readonly inputData: readonly string[];
  /** `--shape NAME:d1,d2,...` (dims without the batch dimension). */
  readonly shapes: ReadonlyMap<string, readonly number[]>;
  /** `--string-length` (default 128). */
  readonly stringLength: number;
  /** `--string-data` (every BYTES element this string). */
  readonly stringData: string | undefined;
  /** `--shared-memory` (default none). */
  readonly sharedMemory: SharedMemoryMode;
  /** `--output-shared-memory-size` bytes per output (default 102400). */
  readonly outputSharedMemorySize: number;
  /** `-H` headers (repeatable `Name:Value`). */
  readonly headers: Readonly<Record<string, string>>;
  /** `--grpc-compression-algorithm`. */
  readonly grpcCompression: GrpcCompression;
  /** `--request-parameter`. */
  readonly requestParameters: readonly RequestParameter[];
  /** `--input-tensor-format` / `--output-tensor-format` (HTTP: binary extension or JSON). */
  readonly inputTensorFormat: 'binary' | 'json';
  readonly outputTensorFormat: 'binary' | 'json';
  /** `-f` CSV file. */
  readonly latencyReportFile: string | undefined;
  /** `--verbose-csv`. */
  readonly verboseCsv: boolean;
  /** `--profile-export-file`. */
  readonly profileExportFile: string | undefined;
  /** `--collect-metrics`, `--metrics-url` (default `localhost:8002/metrics`), `--metrics-interval` (1000 ms). */
  readonly collectMetrics: boolean;
  readonly metricsUrl: string;
  readonly metricsIntervalMs: number;
  /** `--num-of-sequences` (default 4; rate modes). */
  readonly numOfSequences: number;
  /** `--sequence-length` (default 20). */
  readonly sequenceLength: number;
  /** `--sequence-length-variation` percent (default 20). */
  readonly sequenceLengthVariation: number;
  /** `--sequence-id-range` (default 1:unbounded). */
  readonly sequenceIdRange: SequenceIdRange;
  /** `--serial-sequences`. */
  readonly serialSequences: boolean;
  /** `-v`. */
  readonly verbose: boolean;
  /** `--random-seed`-like determinism for random data and Poisson gaps (ours; default fixed). */
  readonly seed: number;
}

/** perf_analyzer's defaults. */
export const PERF_DEFAULTS = {
  modelVersion: '',
  protocol: 'http',
  batchSize: 1,
  load: { kind: 'concurrency', range: { start: 1, end: 1, step: 1 } },
  latencyThresholdMs: 0,
  maxThreads: 16,
  async: false,
  streaming: false,
  measurementIntervalMs: 5000,
  measurementMode: 'time_windows',
  measurementRequestCount: 50,
  stabilityPercentage: 10,
  maxTrials: 10,
  percentile: undefined,
  warmupRequestCount: 0,
  requestCount: 0,
  inputData: ['random'],
  shapes: new Map<string, readonly number[]>(),
  stringLength: 128,
  stringData: undefined,
  sharedMemory: 'none',
  outputSharedMemorySize: 102_400,
  headers: {},
  grpcCompression: 'none',
  requestParameters: [],
  inputTensorFormat: 'binary',
  outputTensorFormat: 'binary',
  latencyReportFile: undefined,
  verboseCsv: false,
  profileExportFile: undefined,
  collectMetrics: false,
  metricsUrl: 'localhost:8002/metrics',
  metricsIntervalMs: 1000,
  numOfSequences: 4,
  sequenceLength: 20,
  sequenceLengthVariation: 20,
  sequenceIdRange: { start: 1, end: undefined },
  serialSequences: false,
  verbose: false,
  seed: 1,
} as const satisfies Omit<PerfOptions, 'modelName' | 'url'>;

/** The default `-u` of a protocol. */
export function defaultUrl(protocol: PerfProtocol): string {
  return protocol === 'grpc' ? 'localhost:8001' : 'localhost:8000';
}

/**
 * Complete options from a partial set (perf_analyzer's defaults for everything not given).
 *
 * ```ts
 * const options = perfOptions({ modelName: 'simple', load: { kind: 'concurrency', range: { start: 1, end: 4, step: 1 } } });
 * ```
 */
export function perfOptions(given: Partial<PerfOptions> & { readonly modelName: string }): PerfOptions {
  const protocol = given.protocol ?? PERF_DEFAULTS.protocol;
  return { ...PERF_DEFAULTS, url: defaultUrl(protocol), ...given };
}
