/**
 * Result and argument shapes of the management APIs. These objects are the server's JSON as the
 * protocol defines it, so they keep the protocol's field names (`max_batch_size`, `model_stats`,
 * `byte_size`, …) and can be compared with Triton's documentation and `curl` output directly.
 *
 * 64-bit counters ({@link Uint64}) are a `number` when exact and a `bigint` when the value is beyond
 * 2^53 − 1, so no counter silently loses precision; `Number(x)` or `BigInt(x)` normalises either.
 * @packageDocumentation
 */
import type { CompressionAlgorithm } from '@tritonserver-ts/protocol';
import type { InferInput } from '@tritonserver-ts/protocol';
import type { HttpInferHints } from '@tritonserver-ts/protocol/http';
import type { NeutralRequestOptions } from '@tritonserver-ts/protocol';

import type {
  ModelInput,
  ModelOutput,
  ReceivedModelConfig,
  ReceivedModelTensor,
} from '@tritonserver-ts/protocol';
import type { ReceivedLogSettings, ReceivedTraceSettings } from '@tritonserver-ts/protocol';
import type { Uint64 } from '@tritonserver-ts/protocol';

/**
 * The statistics messages are defined once, in `@tritonserver-ts/protocol`, and shared
 * with the embedded server (which uses them with `bigint` counters); re-exported here with the
 * client's {@link Uint64} counters.
 */
export type {
  InferBatchStatistics,
  InferResponseStatistics,
  InferStatistics,
  InferenceStatistics,
  MemoryUsage,
  ModelStatistics,
  StatisticDuration,
  Uint64,
} from '@tritonserver-ts/protocol';

/** `GET v2`. */
export interface ServerMetadata {
  name: string;
  version: string;
  extensions: string[];
}

/** An input or output in model metadata (`-1` marks a variable dimension). */
export interface TensorMetadata {
  name: string;
  datatype: string;
  shape: number[];
}

/** `GET v2/models/{m}[/versions/{v}]`. */
export interface ModelMetadata {
  name: string;
  versions?: string[];
  platform: string;
  inputs: TensorMetadata[];
  outputs: TensorMetadata[];
}

/**
 * `GET …/config` (gRPC `ModelConfig` converted to the same JSON): the shared typed
 * `inference.ModelConfig` of `@tritonserver-ts/protocol` as received — proto field names,
 * every field but `name` optional, the int64 fields Triton's JSON prints as strings as strings.
 */
export type ModelConfig = ReceivedModelConfig;

/** An input or output of a received model configuration. */
export type ModelConfigTensor = ReceivedModelTensor<ModelInput> | ReceivedModelTensor<ModelOutput>;

/** One entry of `POST v2/repository/index`. */
export interface RepositoryIndexEntry {
  name: string;
  version?: string;
  state?: string;
  reason?: string;
}

/**
 * Trace settings as the server reports them: the shared message of `@tritonserver-ts/protocol`
 * as received (values are strings, `trace_level` a list; fields optional, unknown keys kept).
 */
export type TraceSettings = ReceivedTraceSettings;

/** A trace settings update: a value to set, `null` clears a setting back to the global value. */
export type { TraceSettingsUpdate } from '@tritonserver-ts/protocol';

/**
 * Log settings (`log_file`, `log_info`, `log_warning`, `log_error`, `log_verbose_level`,
 * `log_format`) as received, and as sent in an update: the shared message of
 * `@tritonserver-ts/protocol`, fields optional, unknown keys kept.
 */
export type LogSettings = ReceivedLogSettings;

/** One registered system shared-memory region. */
export interface SystemSharedMemoryRegion {
  name: string;
  key: string;
  offset: Uint64;
  byte_size: Uint64;
}

/** One registered CUDA shared-memory region. */
export interface CudaSharedMemoryRegion {
  name: string;
  device_id: Uint64;
  byte_size: Uint64;
}

/** Arguments of `loadModel`. */
export interface LoadModelOptions {
  /** Configuration override: a JSON string or an object (stringified for you). */
  readonly config?: string | Record<string, unknown>;
  /**
   * Model files to use with the override, keyed `file:<version>/<name>` (the `file:` prefix is added
   * when missing); contents are sent base64-encoded.
   */
  readonly files?: Record<string, Uint8Array>;
}

/** Everything a transport needs to run one inference. */
export interface InferCall {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly inputs: readonly InferInput[];
  /** The transport-neutral request options. */
  readonly request: NeutralRequestOptions;
  readonly requestCompression: CompressionAlgorithm | undefined;
  readonly responseCompression: CompressionAlgorithm | undefined;
  /**
   * HTTP-only hints (`binary_data_output`, the outputs' `binary_data`, the raw binary request);
   * only the HTTP transport reads them, other transports ignore them.
   */
  readonly http: HttpInferHints;
}

/** What a transport gets for a generate call (`generate` and `generate_stream`). */
export interface GenerateCall {
  readonly modelName: string;
  /** '' for the server's choice. */
  readonly modelVersion: string;
  /** The request's JSON text (inputs by name, `id`, `parameters`). */
  readonly body: string;
}
