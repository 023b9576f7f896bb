/**
 * `--profile-export-file`: the JSON perf_analyzer's profile data exporter writes, so tools that
 * read it (genai-perf's parsers, notebooks) read ours:
 *
 * ```json
 * { "experiments": [ { "experiment": { "mode": "concurrency", "value": 4 },
 *                      "requests": [ { "timestamp": 1700000000000000000, "sequence_id": 7,
 *                                      "request_inputs": { "INPUT0": [1, 2] },
 *                                      "response_timestamps": [1700000000000500000] } ],
 *                      "window_boundaries": [1700000000000000000, 1700000005000000000] } ],
 *   "version": "0.1.0", "service_kind": "triton", "endpoint": "" }
 * ```
 *
 * Timestamps are nanoseconds since the epoch, as perf_analyzer's `system_clock`; ours are
 * `process.hrtime.bigint()` (monotonic) shifted by one offset taken when the run starts
 * ({@link epochOffsetNs}). Differences from perf_analyzer: `requests` holds the records of the
 * windows a level reported (perf_analyzer: every window it measured), `response_outputs` is not
 * written (the engine does not keep response data), and `version` is this package's version.
 * @packageDocumentation
 */
import { createRequire } from 'node:module';

import {
  bf16ArrayToFloat32,
  fp16ArrayToFloat32,
  toTensorData,
  type InferInput,
  type TensorData,
} from '@tritonserver-ts/client';

import type { InputDataset, LoadLevelResult, PerfRun, RequestRecord } from '../types.js';

/** A JSON value of one input, as perf_analyzer writes it (scalar for one element, else an array). */
type ExportedValue = number | boolean | string | (number | boolean | string)[];

/** One request of an experiment. */
interface ExportedRequest {
  /** Start, ns since the epoch (a bigint: written as an exact JSON integer). */
  readonly timestamp: bigint;
  /** Only for requests in a sequence (perf_analyzer omits 0). */
  readonly sequence_id?: number;
  readonly request_inputs: Readonly<Record<string, ExportedValue>>;
  /** Each response's arrival, ns since the epoch. */
  readonly response_timestamps: readonly bigint[];
}

/** One load level. */
interface ExportedExperiment {
  readonly experiment: {
    readonly mode: 'concurrency' | 'request_rate';
    readonly value: number;
  };
  readonly requests: readonly ExportedRequest[];
  /** Window starts and ends, ns since the epoch, a shared boundary written once. */
  readonly window_boundaries: readonly bigint[];
}

/** The whole file. */
export interface ProfileExport {
  readonly experiments: readonly ExportedExperiment[];
  readonly version: string;
  readonly service_kind: 'triton';
  readonly endpoint: string;
}

/**
 * The offset that turns `process.hrtime.bigint()` readings into ns since the epoch; take it once,
 * at the start of a run, and use it for every timestamp of that run.
 */
export function epochOffsetNs(): bigint {
  const nowNs = process.hrtime.bigint();
  const epochNs = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)) * 1000n;
  return epochNs - nowNs;
}

function packageVersion(): string {
  try {
    const pkg = createRequire(import.meta.url)('../../package.json') as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

function numbers(data: TensorData): (number | boolean | string)[] {
  if (data instanceof BigInt64Array || data instanceof BigUint64Array) {
    return Array.from(data, (v) => Number(v));
  }
  if (Array.isArray(data)) return data.map((bytes) => Buffer.from(bytes).toString('utf8'));
  return Array.from(data as ArrayLike<number>);
}

/** One input's values as perf_analyzer writes them (BYTES as text, BOOL as booleans, FP16 as numbers). */
export function exportedInputValue(input: InferInput): ExportedValue {
  if (input.data === undefined) return '';
  const data = toTensorData(input.datatype, input.data);
  let values: (number | boolean | string)[];
  switch (input.datatype) {
    case 'BOOL':
      values = Array.from(data as Uint8Array, (v) => v !== 0);
      break;
    case 'FP16':
      values = Array.from(fp16ArrayToFloat32(data as Uint16Array));
      break;
    case 'BF16':
      values = Array.from(bf16ArrayToFloat32(data as Uint16Array));
      break;
    default:
      values = numbers(data);
  }
  if (values.length === 0) return '';
  if (values.length === 1) return values[0] as number | boolean | string;
  return values;
}

function requestInputs(
  record: RequestRecord,
  dataset: InputDataset | undefined,
): Record<string, ExportedValue> {
  const prepared = dataset?.streams[record.stream]?.[record.step];
  const inputs: Record<string, ExportedValue> = {};
  for (const input of prepared?.inputs ?? []) inputs[input.name] = exportedInputValue(input);
  return inputs;
}

function windowBoundaries(result: LoadLevelResult, offset: bigint): bigint[] {
  const given = result.windowBoundariesNs;
  if (given !== undefined && given.length > 0) return given.map((ns) => ns + offset);
  // Without the engine's window times: the span of the reported requests.
  let start: bigint | undefined;
  let end: bigint | undefined;
  for (const record of result.records) {
    if (start === undefined || record.startNs < start) start = record.startNs;
    if (end === undefined || record.endNs > end) end = record.endNs;
  }
  return start === undefined || end === undefined ? [] : [start + offset, end + offset];
}

/**
 * The profile export of a run.
 * @param run - the measured run
 * @param offsetNs - {@link epochOffsetNs}, taken when the run started
 * @param dataset - the data the run sent (for `request_inputs`; `{}` per request without it)
 */
export function buildProfileExport(run: PerfRun, offsetNs: bigint, dataset?: InputDataset): ProfileExport {
  const experiments = run.results.map((result): ExportedExperiment => {
    const requests = result.records.map((record): ExportedRequest => {
      const request = {
        timestamp: record.startNs + offsetNs,
        request_inputs: requestInputs(record, dataset),
        response_timestamps: record.responseNs.map((ns) => ns + offsetNs),
      };
      if (record.sequenceId !== undefined && record.sequenceId !== 0) {
        // Keep perf_analyzer's key order: timestamp, sequence_id, request_inputs, …
        return {
          timestamp: request.timestamp,
          sequence_id: record.sequenceId,
          request_inputs: request.request_inputs,
          response_timestamps: request.response_timestamps,
        };
      }
      return request;
    });
    return {
      experiment:
        result.mode === 'concurrency'
          ? { mode: 'concurrency', value: result.level }
          : { mode: 'request_rate', value: result.level },
      requests,
      window_boundaries: windowBoundaries(result, offsetNs),
    };
  });
  return { experiments, version: packageVersion(), service_kind: 'triton', endpoint: '' };
}

const BIGINT_MARK = '\u0000bigint:';

/** The file's text: compact JSON as perf_analyzer's writer, nanosecond timestamps as exact integers. */
export function formatProfileExport(run: PerfRun, offsetNs: bigint, dataset?: InputDataset): string {
  const text = JSON.stringify(buildProfileExport(run, offsetNs, dataset), (_key, value: unknown) =>
    typeof value === 'bigint' ? `${BIGINT_MARK}${value}` : value,
  );
  return text.replace(/"\\u0000bigint:(-?\d+)"/g, '$1');
}
