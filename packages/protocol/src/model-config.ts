/**
 * The typed `inference.ModelConfig` (Triton's `model_config.proto`), field for field, written once
 * for both ends: the embedded server parses `config.pbtxt` into it, and the client's
 * `getModelConfig` returns it as received ({@link ReceivedModelConfig}) over HTTP and gRPC alike.
 *
 * Field names are the proto field names (snake_case), so the same object is the JSON that
 * Triton's `GET v2/models/{m}/config` returns. Enums are their value names (`'TYPE_FP32'`,
 * `'KIND_GPU'`).
 *
 * Presence follows proto3: scalar fields always hold a value (the proto default when not given),
 * repeated fields are arrays (empty when not given), map fields are plain objects (empty when not
 * given), message fields and oneof members are optional (`undefined` = not set).
 *
 * 64-bit integers: Triton's JSON prints most int64/uint64 fields as strings (protobuf's JSON
 * mapping) but the dims, reshape shapes, versions, microsecond durations and ensemble step versions
 * as numbers. Those are `number` here on both ends. The six others (`priority_levels`,
 * `default_priority_level`, a secondary device's `device_id`, a sequence state's and its initial
 * state's `dims`, a CUDA graph spec shape's `dim`) have the type parameter `I64`: `number` in the
 * server's normalized model (the default; a value that is not a safe integer is rejected by its
 * parsers), `string` as received on the wire.
 * @packageDocumentation
 */
import type { ModelConfigDatatype } from './datatypes.js';

/**
 * How the int64 fields Triton's JSON prints as strings are held: `number` (normalized) or the
 * decimal `string` of the wire.
 */
export type Int64Json = number | string;

/** `DataType` enum names (`TYPE_INVALID`, `TYPE_BOOL`, …, `TYPE_STRING`, `TYPE_BF16`). */
export type DataType = ModelConfigDatatype;

/** `ModelInput.Format`. */
export type TensorFormat = 'FORMAT_NONE' | 'FORMAT_NHWC' | 'FORMAT_NCHW';

/** `ModelInstanceGroup.Kind`. */
export type InstanceGroupKind = 'KIND_AUTO' | 'KIND_GPU' | 'KIND_CPU' | 'KIND_MODEL';

/** `ModelInstanceGroup.SecondaryDevice.SecondaryDeviceKind`. */
export type SecondaryDeviceKind = 'KIND_NVDLA';

/** `ModelQueuePolicy.TimeoutAction`. */
export type TimeoutAction = 'REJECT' | 'DELAY';

/** `ModelOptimizationPolicy.ModelPriority`. */
export type ModelPriority = 'PRIORITY_DEFAULT' | 'PRIORITY_MAX' | 'PRIORITY_MIN';

/** `ModelSequenceBatching.Control.Kind`. */
export type SequenceControlKind =
  'CONTROL_SEQUENCE_START' | 'CONTROL_SEQUENCE_READY' | 'CONTROL_SEQUENCE_END' | 'CONTROL_SEQUENCE_CORRID';

/** `BatchInput.Kind`. */
export type BatchInputKind =
  | 'BATCH_ELEMENT_COUNT'
  | 'BATCH_ACCUMULATED_ELEMENT_COUNT'
  | 'BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO'
  | 'BATCH_MAX_ELEMENT_COUNT_AS_SHAPE'
  | 'BATCH_ITEM_SHAPE'
  | 'BATCH_ITEM_SHAPE_FLATTEN';

/** `BatchOutput.Kind`. */
export type BatchOutputKind = 'BATCH_SCATTER_WITH_INPUT_SHAPE';

/** `ModelTensorReshape`. */
export interface ModelTensorReshape {
  shape: number[];
}

/** `ModelInput`: one input tensor. With `max_batch_size > 0`, `dims` exclude the batch dimension. */
export interface ModelInput {
  name: string;
  data_type: DataType;
  format: TensorFormat;
  /** −1 = variable size. */
  dims: number[];
  reshape?: ModelTensorReshape;
  is_shape_tensor: boolean;
  allow_ragged_batch: boolean;
  optional: boolean;
  is_non_linear_format_io: boolean;
}

/** `ModelOutput`: one output tensor. */
export interface ModelOutput {
  name: string;
  data_type: DataType;
  dims: number[];
  reshape?: ModelTensorReshape;
  /** File in the model directory; line N is the label of class N (classification extension). */
  label_filename: string;
  is_shape_tensor: boolean;
  is_non_linear_format_io: boolean;
}

/** `ModelVersionPolicy.Latest`. */
export interface VersionPolicyLatest {
  num_versions: number;
}

/** `ModelVersionPolicy.All` (no fields). */
export type VersionPolicyAll = Record<string, never>;

/** `ModelVersionPolicy.Specific`. */
export interface VersionPolicySpecific {
  versions: number[];
}

/** `ModelVersionPolicy` (oneof `policy_choice`; none set = latest 1). */
export interface ModelVersionPolicy {
  latest?: VersionPolicyLatest;
  all?: VersionPolicyAll;
  specific?: VersionPolicySpecific;
}

/** `ModelRateLimiter.Resource`. */
export interface RateLimiterResource {
  name: string;
  global: boolean;
  count: number;
}

/** `ModelRateLimiter`. */
export interface ModelRateLimiter {
  resources: RateLimiterResource[];
  priority: number;
}

/** `ModelInstanceGroup.SecondaryDevice`. */
export interface SecondaryDevice<I64 extends Int64Json = number> {
  kind: SecondaryDeviceKind;
  device_id: I64;
}

/** `ModelInstanceGroup`: `count` instances of `kind`. */
export interface ModelInstanceGroup<I64 extends Int64Json = number> {
  name: string;
  kind: InstanceGroupKind;
  count: number;
  rate_limiter?: ModelRateLimiter;
  gpus: number[];
  secondary_devices: SecondaryDevice<I64>[];
  profile: string[];
  passive: boolean;
  host_policy: string;
}

/** `ModelQueuePolicy`. */
export interface ModelQueuePolicy {
  timeout_action: TimeoutAction;
  default_timeout_microseconds: number;
  allow_timeout_override: boolean;
  max_queue_size: number;
}

/** `ModelDynamicBatching`. `priority_queue_policy` keys are priority levels (uint64, as strings). */
export interface ModelDynamicBatching<I64 extends Int64Json = number> {
  preferred_batch_size: number[];
  max_queue_delay_microseconds: number;
  preserve_ordering: boolean;
  priority_levels: I64;
  default_priority_level: I64;
  default_queue_policy?: ModelQueuePolicy;
  priority_queue_policy: Record<string, ModelQueuePolicy>;
}

/** `ModelSequenceBatching.Control`. */
export interface SequenceControl {
  kind: SequenceControlKind;
  int32_false_true: number[];
  fp32_false_true: number[];
  bool_false_true: boolean[];
  data_type: DataType;
}

/** `ModelSequenceBatching.ControlInput`. */
export interface SequenceControlInput {
  name: string;
  control: SequenceControl[];
}

/** `ModelSequenceBatching.InitialState` (oneof `state_data`: `zero_data` | `data_file`). */
export interface SequenceInitialState<I64 extends Int64Json = number> {
  data_type: DataType;
  dims: I64[];
  zero_data?: boolean;
  data_file?: string;
  name: string;
}

/** `ModelSequenceBatching.State`. */
export interface SequenceState<I64 extends Int64Json = number> {
  input_name: string;
  output_name: string;
  data_type: DataType;
  dims: I64[];
  initial_state: SequenceInitialState<I64>[];
  use_same_buffer_for_input_output: boolean;
  use_growable_memory: boolean;
}

/** `ModelSequenceBatching.StrategyDirect`. */
export interface SequenceStrategyDirect {
  max_queue_delay_microseconds: number;
  minimum_slot_utilization: number;
}

/** `ModelSequenceBatching.StrategyOldest`. */
export interface SequenceStrategyOldest {
  max_candidate_sequences: number;
  preferred_batch_size: number[];
  max_queue_delay_microseconds: number;
  preserve_ordering: boolean;
}

/** `ModelSequenceBatching` (oneof `strategy_choice`: `direct` | `oldest`). */
export interface ModelSequenceBatching<I64 extends Int64Json = number> {
  direct?: SequenceStrategyDirect;
  oldest?: SequenceStrategyOldest;
  max_sequence_idle_microseconds: number;
  control_input: SequenceControlInput[];
  state: SequenceState<I64>[];
  iterative_sequence: boolean;
}

/** `ModelEnsembling.Step`. Map keys are the step model's tensor names; values are ensemble tensor names. */
export interface EnsembleStep {
  model_name: string;
  /** −1 = latest. */
  model_version: number;
  input_map: Record<string, string>;
  output_map: Record<string, string>;
  model_namespace: string;
}

/** `ModelEnsembling`. */
export interface ModelEnsembling {
  step: EnsembleStep[];
  max_inflight_requests: number;
}

/** `ModelOptimizationPolicy.Graph`. */
export interface OptimizationGraph {
  level: number;
}

/** `ModelOptimizationPolicy.Cuda.GraphSpec.Shape`. */
export interface GraphSpecShape<I64 extends Int64Json = number> {
  dim: I64[];
}

/** `ModelOptimizationPolicy.Cuda.GraphSpec.LowerBound`. */
export interface GraphSpecLowerBound<I64 extends Int64Json = number> {
  batch_size: number;
  input: Record<string, GraphSpecShape<I64>>;
}

/** `ModelOptimizationPolicy.Cuda.GraphSpec`. */
export interface GraphSpec<I64 extends Int64Json = number> {
  batch_size: number;
  input: Record<string, GraphSpecShape<I64>>;
  graph_lower_bound?: GraphSpecLowerBound<I64>;
}

/** `ModelOptimizationPolicy.Cuda`. */
export interface OptimizationCuda<I64 extends Int64Json = number> {
  graphs: boolean;
  busy_wait_events: boolean;
  graph_spec: GraphSpec<I64>[];
  output_copy_stream: boolean;
}

/** `ModelOptimizationPolicy.ExecutionAccelerators.Accelerator` (e.g. `tensorrt`, `openvino`). */
export interface ExecutionAccelerator {
  name: string;
  parameters: Record<string, string>;
}

/** `ModelOptimizationPolicy.ExecutionAccelerators`. */
export interface ExecutionAccelerators {
  gpu_execution_accelerator: ExecutionAccelerator[];
  cpu_execution_accelerator: ExecutionAccelerator[];
}

/** `ModelOptimizationPolicy.PinnedMemoryBuffer`. */
export interface PinnedMemoryBuffer {
  enable: boolean;
}

/** `ModelOptimizationPolicy`. */
export interface ModelOptimizationPolicy<I64 extends Int64Json = number> {
  graph?: OptimizationGraph;
  priority: ModelPriority;
  cuda?: OptimizationCuda<I64>;
  execution_accelerators?: ExecutionAccelerators;
  input_pinned_memory?: PinnedMemoryBuffer;
  output_pinned_memory?: PinnedMemoryBuffer;
  gather_kernel_buffer_threshold: number;
  eager_batching: boolean;
}

/** `ModelWarmup.Input` (oneof `input_data_type`: `zero_data` | `random_data` | `input_data_file`). */
export interface WarmupInput {
  data_type: DataType;
  dims: number[];
  zero_data?: boolean;
  random_data?: boolean;
  input_data_file?: string;
}

/** `ModelWarmup`. */
export interface ModelWarmup {
  name: string;
  batch_size: number;
  inputs: Record<string, WarmupInput>;
  count: number;
}

/** `BatchInput`. */
export interface BatchInput {
  kind: BatchInputKind;
  target_name: string[];
  data_type: DataType;
  source_input: string[];
}

/** `BatchOutput`. */
export interface BatchOutput {
  target_name: string[];
  kind: BatchOutputKind;
  source_input: string[];
}

/** `ModelParameter`. */
export interface ModelParameter {
  string_value: string;
}

/** `ModelOperations`. */
export interface ModelOperations {
  op_library_filename: string[];
}

/** `ModelTransactionPolicy`. */
export interface ModelTransactionPolicy {
  decoupled: boolean;
}

/** `ModelRepositoryAgents.Agent`. */
export interface RepositoryAgent {
  name: string;
  parameters: Record<string, string>;
}

/** `ModelRepositoryAgents`. */
export interface ModelRepositoryAgents {
  agents: RepositoryAgent[];
}

/** `ModelResponseCache`. */
export interface ModelResponseCache {
  enable: boolean;
}

/** `ModelMetrics.MetricControl.MetricIdentifier`. */
export interface MetricIdentifier {
  family: string;
}

/** `ModelMetrics.MetricControl.HistogramOptions`. */
export interface HistogramOptions {
  buckets: number[];
}

/** `ModelMetrics.MetricControl` (oneof `metric_options`: `histogram_options`). */
export interface MetricControl {
  metric_identifier?: MetricIdentifier;
  histogram_options?: HistogramOptions;
}

/** `ModelMetrics`. */
export interface ModelMetrics {
  metric_control: MetricControl[];
}

/**
 * `inference.ModelConfig`: one model's configuration, as in `config.pbtxt`.
 *
 * Oneof `scheduling_choice`: at most one of `dynamic_batching`, `sequence_batching`,
 * `ensemble_scheduling` is set.
 */
export interface ModelConfig<I64 extends Int64Json = number> {
  name: string;
  platform: string;
  backend: string;
  runtime: string;
  version_policy?: ModelVersionPolicy;
  max_batch_size: number;
  input: ModelInput[];
  output: ModelOutput[];
  batch_input: BatchInput[];
  batch_output: BatchOutput[];
  optimization?: ModelOptimizationPolicy<I64>;
  dynamic_batching?: ModelDynamicBatching<I64>;
  sequence_batching?: ModelSequenceBatching<I64>;
  ensemble_scheduling?: ModelEnsembling;
  instance_group: ModelInstanceGroup<I64>[];
  default_model_filename: string;
  cc_model_filenames: Record<string, string>;
  metric_tags: Record<string, string>;
  parameters: Record<string, ModelParameter>;
  model_warmup: ModelWarmup[];
  model_operations?: ModelOperations;
  model_transaction_policy?: ModelTransactionPolicy;
  model_repository_agents?: ModelRepositoryAgents;
  response_cache?: ModelResponseCache;
  model_metrics?: ModelMetrics;
}

/** Recursively optional (arrays and records keep their element shape, elements become partial). */
export type DeepPartial<T> = T extends (infer E)[]
  ? DeepPartial<E>[]
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

/**
 * An input or output of a {@link ReceivedModelConfig}: `name`, `data_type` and `dims` given (a
 * config without them names no usable tensor), the rest as received.
 */
export type ReceivedModelTensor<T extends ModelInput | ModelOutput> = DeepPartial<T> &
  Pick<T, 'name' | 'data_type' | 'dims'>;

/**
 * A model configuration as `getModelConfig` receives it (`GET v2/models/{m}/config`, or gRPC
 * `ModelConfig` converted to the same JSON): the {@link ModelConfig} message with the int64 fields
 * Triton prints as strings as decimal strings. Triton prints every field (proto3 defaults
 * included), but other KServe servers may leave fields out, so every field except `name` (and
 * each tensor's `name`, `data_type` and `dims`) is optional, nested messages too.
 */
export type ReceivedModelConfig = Omit<DeepPartial<ModelConfig<string>>, 'name' | 'input' | 'output'> & {
  name: string;
  input?: ReceivedModelTensor<ModelInput>[];
  output?: ReceivedModelTensor<ModelOutput>[];
};
