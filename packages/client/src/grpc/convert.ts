/**
 * gRPC management responses → the client's result types (the same objects the HTTP transport
 * returns: protocol field names, 64-bit counters exact) and settings → gRPC requests.
 * @packageDocumentation
 */
import { toJson } from '@bufbuild/protobuf';
import type {
  CudaSharedMemoryRegion,
  InferResponseStatistics,
  InferenceStatistics,
  LogSettings,
  ModelConfig,
  ModelMetadata,
  ModelStatistics as ModelStatisticsJson,
  RepositoryIndexEntry,
  ServerMetadata,
  StatisticDuration as StatisticDurationJson,
  SystemSharedMemoryRegion,
  TraceSettings,
  TraceSettingsUpdate,
} from '../api-types.js';
import { TritonInvalidArgumentError } from '../errors.js';
import { INT64_AS_NUMBER_PATHS } from '@tritonserver-ts/protocol/http';
import {
  LogSettingsRequest_SettingValueSchema,
  ModelConfigSchema,
  create,
  exactInteger,
  type CudaSharedMemoryStatusResponse,
  type LogSettingsRequest_SettingValue,
  type LogSettingsResponse,
  type ModelConfig as ModelConfigMessage,
  type ModelMetadataResponse,
  type ModelStatistics,
  type ModelStatisticsResponse,
  type RepositoryIndexResponse,
  type ServerMetadataResponse,
  type StatisticDuration,
  type SystemSharedMemoryStatusResponse,
  type TraceSettingResponse,
} from '@tritonserver-ts/protocol/grpc';

/** `ServerMetadataResponse` → `{ name, version, extensions }`. */
export function serverMetadataFromGrpc(m: ServerMetadataResponse): ServerMetadata {
  return { name: m.name, version: m.version, extensions: [...m.extensions] };
}

/** `ModelMetadataResponse` → the HTTP metadata object (shapes as numbers, -1 for variable dims). */
export function modelMetadataFromGrpc(m: ModelMetadataResponse): ModelMetadata {
  const tensor = (t: ModelMetadataResponse['inputs'][number]): ModelMetadata['inputs'][number] => ({
    name: t.name,
    datatype: t.datatype,
    shape: t.shape.map((d) => Number(d)),
  });
  return {
    name: m.name,
    versions: [...m.versions],
    platform: m.platform,
    inputs: m.inputs.map(tensor),
    outputs: m.outputs.map(tensor),
  };
}

/** {@link INT64_AS_NUMBER_PATHS} split into their keys. */
const CONFIG_NUMBER_PATHS: readonly (readonly string[])[] = INT64_AS_NUMBER_PATHS.map((p) => p.split('.'));

function toNumber(value: unknown): unknown {
  if (typeof value === 'string' && /^-?\d+$/.test(value)) {
    const n = BigInt(value);
    return exactInteger(n);
  }
  return Array.isArray(value) ? value.map(toNumber) : value;
}

function numbersAt(node: unknown, path: readonly string[]): void {
  if (node === null || typeof node !== 'object' || path.length === 0) return;
  const [head, ...rest] = path as [string, ...string[]];
  const obj = node as Record<string, unknown>;
  const children = head === '*' ? Object.keys(obj) : [head];
  for (const key of children) {
    if (!Object.hasOwn(obj, key)) continue;
    if (rest.length === 0) obj[key] = toNumber(obj[key]);
    else numbersAt(obj[key], rest);
  }
}

/**
 * `ModelConfig` → the JSON Triton's HTTP endpoint answers: proto field names, every scalar, list and
 * map printed even at its default, enums by name, messages and oneof members only when set, int64
 * as strings except the dims, versions and microsecond fields Triton prints as numbers.
 */
export function modelConfigFromGrpc(config: ModelConfigMessage | undefined): ModelConfig {
  const json = toJson(ModelConfigSchema, config ?? create(ModelConfigSchema), {
    useProtoFieldName: true,
    alwaysEmitImplicit: true,
  }) as Record<string, unknown>;
  for (const path of CONFIG_NUMBER_PATHS) numbersAt(json, path);
  return json as ModelConfig;
}

/** `RepositoryIndexResponse` → `[{ name, version, state, reason }]` (empty fields left out, as over HTTP). */
export function repositoryIndexFromGrpc(m: RepositoryIndexResponse): RepositoryIndexEntry[] {
  return m.models.map((e) => ({
    name: e.name,
    ...(e.version !== '' ? { version: e.version } : {}),
    ...(e.state !== '' ? { state: e.state } : {}),
    ...(e.reason !== '' ? { reason: e.reason } : {}),
  }));
}

function duration(d: StatisticDuration | undefined): StatisticDurationJson {
  return { count: exactInteger(d?.count ?? 0n), ns: exactInteger(d?.ns ?? 0n) };
}

function modelStatistics(s: ModelStatistics): ModelStatisticsJson {
  const i = s.inferenceStats;
  const responseStats: Record<string, InferResponseStatistics> = {};
  for (const [key, r] of Object.entries(s.responseStats)) {
    responseStats[key] = {
      compute_infer: duration(r.computeInfer),
      compute_output: duration(r.computeOutput),
      success: duration(r.success),
      fail: duration(r.fail),
      empty_response: duration(r.emptyResponse),
      cancel: duration(r.cancel),
    };
  }
  return {
    name: s.name,
    version: s.version,
    last_inference: exactInteger(s.lastInference),
    inference_count: exactInteger(s.inferenceCount),
    execution_count: exactInteger(s.executionCount),
    inference_stats: {
      success: duration(i?.success),
      fail: duration(i?.fail),
      queue: duration(i?.queue),
      compute_input: duration(i?.computeInput),
      compute_infer: duration(i?.computeInfer),
      compute_output: duration(i?.computeOutput),
      cache_hit: duration(i?.cacheHit),
      cache_miss: duration(i?.cacheMiss),
    },
    batch_stats: s.batchStats.map((b) => ({
      batch_size: exactInteger(b.batchSize),
      compute_input: duration(b.computeInput),
      compute_infer: duration(b.computeInfer),
      compute_output: duration(b.computeOutput),
    })),
    memory_usage: s.memoryUsage.map((u) => ({
      type: u.type,
      id: exactInteger(u.id),
      byte_size: exactInteger(u.byteSize),
    })),
    response_stats: responseStats,
  };
}

/** `ModelStatisticsResponse` → `{ model_stats }` with counters as number, or bigint beyond 2^53 − 1. */
export function statisticsFromGrpc(m: ModelStatisticsResponse): InferenceStatistics {
  return { model_stats: m.modelStats.map(modelStatistics) };
}

/** `TraceSettingResponse` → settings as Triton's HTTP endpoint reports them (`trace_level` a list). */
export function traceSettingsFromGrpc(m: TraceSettingResponse): TraceSettings {
  const out: TraceSettings = {};
  for (const [key, value] of Object.entries(m.settings)) {
    out[key] = key === 'trace_level' || value.value.length !== 1 ? [...value.value] : (value.value[0] ?? '');
  }
  return out;
}

/** A trace settings update → the request's map (`null` clears a setting: an empty list). */
export function traceSettingsToGrpc(settings: TraceSettingsUpdate): Record<string, { value: string[] }> {
  const out: Record<string, { value: string[] }> = {};
  for (const [key, value] of Object.entries(settings)) {
    if (value === null) out[key] = { value: [] };
    else if (Array.isArray(value)) out[key] = { value: value.map(String) };
    else out[key] = { value: [String(value)] };
  }
  return out;
}

/** `LogSettingsResponse` → `{ log_file, log_info, … }`. */
export function logSettingsFromGrpc(m: LogSettingsResponse): LogSettings {
  const out: LogSettings = {};
  for (const [key, value] of Object.entries(m.settings)) {
    const choice = value.parameterChoice;
    if (choice.case !== undefined) out[key] = choice.value;
  }
  return out;
}

/**
 * Log settings → the request's map: booleans `bool_param`, numbers `uint32_param` (non-negative
 * integers only), strings `string_param`.
 * @throws TritonInvalidArgumentError for other values.
 */
export function logSettingsToGrpc(settings: LogSettings): Record<string, LogSettingsRequest_SettingValue> {
  const out: Record<string, LogSettingsRequest_SettingValue> = {};
  for (const [key, value] of Object.entries(settings)) {
    if (value === undefined) continue;
    let init: LogSettingsRequest_SettingValue['parameterChoice'];
    if (typeof value === 'boolean') init = { case: 'boolParam', value };
    else if (typeof value === 'string') init = { case: 'stringParam', value };
    else if (Number.isInteger(value) && value >= 0 && value <= 0xffff_ffff)
      init = { case: 'uint32Param', value };
    else throw new TritonInvalidArgumentError(`log setting '${key}': ${value} is not a uint32`);
    out[key] = create(LogSettingsRequest_SettingValueSchema, { parameterChoice: init });
  }
  return out;
}

/** `SystemSharedMemoryStatusResponse` → `[{ name, key, offset, byte_size }]`. */
export function systemSharedMemoryFromGrpc(m: SystemSharedMemoryStatusResponse): SystemSharedMemoryRegion[] {
  return Object.values(m.regions).map((r) => ({
    name: r.name,
    key: r.key,
    offset: exactInteger(r.offset),
    byte_size: exactInteger(r.byteSize),
  }));
}

/** `CudaSharedMemoryStatusResponse` → `[{ name, device_id, byte_size }]`. */
export function cudaSharedMemoryFromGrpc(m: CudaSharedMemoryStatusResponse): CudaSharedMemoryRegion[] {
  return Object.values(m.regions).map((r) => ({
    name: r.name,
    device_id: exactInteger(r.deviceId),
    byte_size: exactInteger(r.byteSize),
  }));
}
