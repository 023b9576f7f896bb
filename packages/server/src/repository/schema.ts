/**
 * Field descriptors of `inference.ModelConfig` and its nested messages (protocol.md §2.17).
 *
 * One schema drives the protobuf text-format parser (`config.pbtxt`), the JSON renderer
 * (`GET .../config`) and the JSON override parser (`POST .../load`).
 * @packageDocumentation
 */
import { MODEL_CONFIG_DATATYPES } from '@tritonserver-ts/protocol';

/** Scalar protobuf types used by the model config. */
export type ScalarType =
  'string' | 'bytes' | 'bool' | 'int32' | 'uint32' | 'int64' | 'uint64' | 'float' | 'double';

/** What a field (or a map value) holds. */
export type ValueType =
  | { readonly kind: 'scalar'; readonly scalar: ScalarType }
  | { readonly kind: 'enum'; readonly enumName: string }
  | { readonly kind: 'message'; readonly messageName: string };

/** One field of a message. */
export interface FieldDescriptor {
  readonly name: string;
  readonly number: number;
  readonly type: ValueType;
  /** `repeated` (not maps). */
  readonly repeated: boolean;
  /** For `map<K, V>` fields: the key type (`type` is then V). */
  readonly mapKey?: ScalarType;
  /** Name of the oneof this field belongs to. */
  readonly oneof?: string;
}

/** One message type. */
export interface MessageDescriptor {
  /** Fully qualified name without package, e.g. `ModelInput` or `ModelVersionPolicy.Latest`. */
  readonly name: string;
  readonly fields: readonly FieldDescriptor[];
}

/** One enum type: value names → numbers. */
export interface EnumDescriptor {
  readonly name: string;
  readonly values: Readonly<Record<string, number>>;
}

/** The full schema. */
export interface Schema {
  readonly messages: ReadonlyMap<string, MessageDescriptor>;
  readonly enums: ReadonlyMap<string, EnumDescriptor>;
}

const S = (scalar: ScalarType): ValueType => ({ kind: 'scalar', scalar });
const E = (enumName: string): ValueType => ({ kind: 'enum', enumName });
const M = (messageName: string): ValueType => ({ kind: 'message', messageName });

interface FieldOpts {
  repeated?: boolean;
  mapKey?: ScalarType;
  oneof?: string;
}

function f(name: string, number: number, type: ValueType, opts: FieldOpts = {}): FieldDescriptor {
  return {
    name,
    number,
    type,
    repeated: opts.repeated ?? false,
    ...(opts.mapKey !== undefined ? { mapKey: opts.mapKey } : {}),
    ...(opts.oneof !== undefined ? { oneof: opts.oneof } : {}),
  };
}
const rep = { repeated: true } as const;
const map = (mapKey: ScalarType): FieldOpts => ({ mapKey });
const oneof = (name: string): FieldOpts => ({ oneof: name });

const ENUMS: readonly EnumDescriptor[] = [
  {
    name: 'DataType',
    values: MODEL_CONFIG_DATATYPES,
  },
  { name: 'ModelInput.Format', values: { FORMAT_NONE: 0, FORMAT_NHWC: 1, FORMAT_NCHW: 2 } },
  { name: 'ModelInstanceGroup.Kind', values: { KIND_AUTO: 0, KIND_GPU: 1, KIND_CPU: 2, KIND_MODEL: 3 } },
  { name: 'ModelInstanceGroup.SecondaryDevice.SecondaryDeviceKind', values: { KIND_NVDLA: 0 } },
  { name: 'ModelQueuePolicy.TimeoutAction', values: { REJECT: 0, DELAY: 1 } },
  {
    name: 'ModelOptimizationPolicy.ModelPriority',
    values: { PRIORITY_DEFAULT: 0, PRIORITY_MAX: 1, PRIORITY_MIN: 2 },
  },
  {
    name: 'ModelSequenceBatching.Control.Kind',
    values: {
      CONTROL_SEQUENCE_START: 0,
      CONTROL_SEQUENCE_READY: 1,
      CONTROL_SEQUENCE_END: 2,
      CONTROL_SEQUENCE_CORRID: 3,
    },
  },
  {
    name: 'BatchInput.Kind',
    values: {
      BATCH_ELEMENT_COUNT: 0,
      BATCH_ACCUMULATED_ELEMENT_COUNT: 1,
      BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO: 2,
      BATCH_MAX_ELEMENT_COUNT_AS_SHAPE: 3,
      BATCH_ITEM_SHAPE: 4,
      BATCH_ITEM_SHAPE_FLATTEN: 5,
    },
  },
  { name: 'BatchOutput.Kind', values: { BATCH_SCATTER_WITH_INPUT_SHAPE: 0 } },
];

const MESSAGES: readonly MessageDescriptor[] = [
  {
    name: 'ModelConfig',
    fields: [
      f('name', 1, S('string')),
      f('platform', 2, S('string')),
      f('backend', 17, S('string')),
      f('runtime', 25, S('string')),
      f('version_policy', 3, M('ModelVersionPolicy')),
      f('max_batch_size', 4, S('int32')),
      f('input', 5, M('ModelInput'), rep),
      f('output', 6, M('ModelOutput'), rep),
      f('batch_input', 20, M('BatchInput'), rep),
      f('batch_output', 21, M('BatchOutput'), rep),
      f('optimization', 12, M('ModelOptimizationPolicy')),
      f('dynamic_batching', 11, M('ModelDynamicBatching'), oneof('scheduling_choice')),
      f('sequence_batching', 13, M('ModelSequenceBatching'), oneof('scheduling_choice')),
      f('ensemble_scheduling', 15, M('ModelEnsembling'), oneof('scheduling_choice')),
      f('instance_group', 7, M('ModelInstanceGroup'), rep),
      f('default_model_filename', 8, S('string')),
      f('cc_model_filenames', 9, S('string'), map('string')),
      f('metric_tags', 10, S('string'), map('string')),
      f('parameters', 14, M('ModelParameter'), map('string')),
      f('model_warmup', 16, M('ModelWarmup'), rep),
      f('model_operations', 18, M('ModelOperations')),
      f('model_transaction_policy', 19, M('ModelTransactionPolicy')),
      f('model_repository_agents', 23, M('ModelRepositoryAgents')),
      f('response_cache', 24, M('ModelResponseCache')),
      f('model_metrics', 26, M('ModelMetrics')),
    ],
  },
  { name: 'ModelTensorReshape', fields: [f('shape', 1, S('int64'), rep)] },
  {
    name: 'ModelInput',
    fields: [
      f('name', 1, S('string')),
      f('data_type', 2, E('DataType')),
      f('format', 3, E('ModelInput.Format')),
      f('dims', 4, S('int64'), rep),
      f('reshape', 5, M('ModelTensorReshape')),
      f('is_shape_tensor', 6, S('bool')),
      f('allow_ragged_batch', 7, S('bool')),
      f('optional', 8, S('bool')),
      f('is_non_linear_format_io', 9, S('bool')),
    ],
  },
  {
    name: 'ModelOutput',
    fields: [
      f('name', 1, S('string')),
      f('data_type', 2, E('DataType')),
      f('dims', 3, S('int64'), rep),
      f('reshape', 5, M('ModelTensorReshape')),
      f('label_filename', 4, S('string')),
      f('is_shape_tensor', 6, S('bool')),
      f('is_non_linear_format_io', 7, S('bool')),
    ],
  },
  {
    name: 'ModelVersionPolicy',
    fields: [
      f('latest', 1, M('ModelVersionPolicy.Latest'), oneof('policy_choice')),
      f('all', 2, M('ModelVersionPolicy.All'), oneof('policy_choice')),
      f('specific', 3, M('ModelVersionPolicy.Specific'), oneof('policy_choice')),
    ],
  },
  { name: 'ModelVersionPolicy.Latest', fields: [f('num_versions', 1, S('uint32'))] },
  { name: 'ModelVersionPolicy.All', fields: [] },
  { name: 'ModelVersionPolicy.Specific', fields: [f('versions', 1, S('int64'), rep)] },
  {
    name: 'ModelInstanceGroup',
    fields: [
      f('name', 1, S('string')),
      f('kind', 4, E('ModelInstanceGroup.Kind')),
      f('count', 2, S('int32')),
      f('rate_limiter', 6, M('ModelRateLimiter')),
      f('gpus', 3, S('int32'), rep),
      f('secondary_devices', 8, M('ModelInstanceGroup.SecondaryDevice'), rep),
      f('profile', 5, S('string'), rep),
      f('passive', 7, S('bool')),
      f('host_policy', 9, S('string')),
    ],
  },
  {
    name: 'ModelInstanceGroup.SecondaryDevice',
    fields: [
      f('kind', 1, E('ModelInstanceGroup.SecondaryDevice.SecondaryDeviceKind')),
      f('device_id', 2, S('int64')),
    ],
  },
  {
    name: 'ModelRateLimiter',
    fields: [f('resources', 1, M('ModelRateLimiter.Resource'), rep), f('priority', 2, S('uint32'))],
  },
  {
    name: 'ModelRateLimiter.Resource',
    fields: [f('name', 1, S('string')), f('global', 2, S('bool')), f('count', 3, S('uint32'))],
  },
  {
    name: 'ModelDynamicBatching',
    fields: [
      f('preferred_batch_size', 1, S('int32'), rep),
      f('max_queue_delay_microseconds', 2, S('uint64')),
      f('preserve_ordering', 3, S('bool')),
      f('priority_levels', 4, S('uint64')),
      f('default_priority_level', 5, S('uint64')),
      f('default_queue_policy', 6, M('ModelQueuePolicy')),
      f('priority_queue_policy', 7, M('ModelQueuePolicy'), map('uint64')),
    ],
  },
  {
    name: 'ModelQueuePolicy',
    fields: [
      f('timeout_action', 1, E('ModelQueuePolicy.TimeoutAction')),
      f('default_timeout_microseconds', 2, S('uint64')),
      f('allow_timeout_override', 3, S('bool')),
      f('max_queue_size', 4, S('uint32')),
    ],
  },
  {
    name: 'ModelSequenceBatching',
    fields: [
      f('direct', 3, M('ModelSequenceBatching.StrategyDirect'), oneof('strategy_choice')),
      f('oldest', 4, M('ModelSequenceBatching.StrategyOldest'), oneof('strategy_choice')),
      f('max_sequence_idle_microseconds', 1, S('uint64')),
      f('control_input', 2, M('ModelSequenceBatching.ControlInput'), rep),
      f('state', 5, M('ModelSequenceBatching.State'), rep),
      f('iterative_sequence', 6, S('bool')),
    ],
  },
  {
    name: 'ModelSequenceBatching.StrategyDirect',
    fields: [f('max_queue_delay_microseconds', 1, S('uint64')), f('minimum_slot_utilization', 2, S('float'))],
  },
  {
    name: 'ModelSequenceBatching.StrategyOldest',
    fields: [
      f('max_candidate_sequences', 1, S('int32')),
      f('preferred_batch_size', 2, S('int32'), rep),
      f('max_queue_delay_microseconds', 3, S('uint64')),
      f('preserve_ordering', 4, S('bool')),
    ],
  },
  {
    name: 'ModelSequenceBatching.ControlInput',
    fields: [f('name', 1, S('string')), f('control', 2, M('ModelSequenceBatching.Control'), rep)],
  },
  {
    name: 'ModelSequenceBatching.Control',
    fields: [
      f('kind', 1, E('ModelSequenceBatching.Control.Kind')),
      f('int32_false_true', 2, S('int32'), rep),
      f('fp32_false_true', 3, S('float'), rep),
      f('bool_false_true', 5, S('bool'), rep),
      f('data_type', 4, E('DataType')),
    ],
  },
  {
    name: 'ModelSequenceBatching.State',
    fields: [
      f('input_name', 1, S('string')),
      f('output_name', 2, S('string')),
      f('data_type', 3, E('DataType')),
      f('dims', 4, S('int64'), rep),
      f('initial_state', 5, M('ModelSequenceBatching.InitialState'), rep),
      f('use_same_buffer_for_input_output', 6, S('bool')),
      f('use_growable_memory', 7, S('bool')),
    ],
  },
  {
    name: 'ModelSequenceBatching.InitialState',
    fields: [
      f('data_type', 1, E('DataType')),
      f('dims', 2, S('int64'), rep),
      f('zero_data', 3, S('bool'), oneof('state_data')),
      f('data_file', 4, S('string'), oneof('state_data')),
      f('name', 5, S('string')),
    ],
  },
  {
    name: 'ModelEnsembling',
    fields: [f('step', 1, M('ModelEnsembling.Step'), rep), f('max_inflight_requests', 2, S('uint32'))],
  },
  {
    name: 'ModelEnsembling.Step',
    fields: [
      f('model_name', 1, S('string')),
      f('model_version', 2, S('int64')),
      f('input_map', 3, S('string'), map('string')),
      f('output_map', 4, S('string'), map('string')),
      f('model_namespace', 5, S('string')),
    ],
  },
  {
    name: 'ModelOptimizationPolicy',
    fields: [
      f('graph', 1, M('ModelOptimizationPolicy.Graph')),
      f('priority', 2, E('ModelOptimizationPolicy.ModelPriority')),
      f('cuda', 3, M('ModelOptimizationPolicy.Cuda')),
      f('execution_accelerators', 4, M('ModelOptimizationPolicy.ExecutionAccelerators')),
      f('input_pinned_memory', 5, M('ModelOptimizationPolicy.PinnedMemoryBuffer')),
      f('output_pinned_memory', 6, M('ModelOptimizationPolicy.PinnedMemoryBuffer')),
      f('gather_kernel_buffer_threshold', 7, S('uint32')),
      f('eager_batching', 8, S('bool')),
    ],
  },
  { name: 'ModelOptimizationPolicy.Graph', fields: [f('level', 1, S('int32'))] },
  {
    name: 'ModelOptimizationPolicy.Cuda',
    fields: [
      f('graphs', 1, S('bool')),
      f('busy_wait_events', 2, S('bool')),
      f('graph_spec', 3, M('ModelOptimizationPolicy.Cuda.GraphSpec'), rep),
      f('output_copy_stream', 4, S('bool')),
    ],
  },
  {
    name: 'ModelOptimizationPolicy.Cuda.GraphSpec',
    fields: [
      f('batch_size', 1, S('int32')),
      f('input', 2, M('ModelOptimizationPolicy.Cuda.GraphSpec.Shape'), map('string')),
      f('graph_lower_bound', 3, M('ModelOptimizationPolicy.Cuda.GraphSpec.LowerBound')),
    ],
  },
  { name: 'ModelOptimizationPolicy.Cuda.GraphSpec.Shape', fields: [f('dim', 1, S('int64'), rep)] },
  {
    name: 'ModelOptimizationPolicy.Cuda.GraphSpec.LowerBound',
    fields: [
      f('batch_size', 1, S('int32')),
      f('input', 2, M('ModelOptimizationPolicy.Cuda.GraphSpec.Shape'), map('string')),
    ],
  },
  {
    name: 'ModelOptimizationPolicy.ExecutionAccelerators',
    fields: [
      f('gpu_execution_accelerator', 1, M('ModelOptimizationPolicy.ExecutionAccelerators.Accelerator'), rep),
      f('cpu_execution_accelerator', 2, M('ModelOptimizationPolicy.ExecutionAccelerators.Accelerator'), rep),
    ],
  },
  {
    name: 'ModelOptimizationPolicy.ExecutionAccelerators.Accelerator',
    fields: [f('name', 1, S('string')), f('parameters', 2, S('string'), map('string'))],
  },
  { name: 'ModelOptimizationPolicy.PinnedMemoryBuffer', fields: [f('enable', 1, S('bool'))] },
  {
    name: 'ModelWarmup',
    fields: [
      f('name', 1, S('string')),
      f('batch_size', 2, S('uint32')),
      f('inputs', 3, M('ModelWarmup.Input'), map('string')),
      f('count', 4, S('uint32')),
    ],
  },
  {
    name: 'ModelWarmup.Input',
    fields: [
      f('data_type', 1, E('DataType')),
      f('dims', 2, S('int64'), rep),
      f('zero_data', 3, S('bool'), oneof('input_data_type')),
      f('random_data', 4, S('bool'), oneof('input_data_type')),
      f('input_data_file', 5, S('string'), oneof('input_data_type')),
    ],
  },
  {
    name: 'BatchInput',
    fields: [
      f('kind', 1, E('BatchInput.Kind')),
      f('target_name', 2, S('string'), rep),
      f('data_type', 3, E('DataType')),
      f('source_input', 4, S('string'), rep),
    ],
  },
  {
    name: 'BatchOutput',
    fields: [
      f('target_name', 1, S('string'), rep),
      f('kind', 2, E('BatchOutput.Kind')),
      f('source_input', 3, S('string'), rep),
    ],
  },
  { name: 'ModelParameter', fields: [f('string_value', 1, S('string'))] },
  { name: 'ModelOperations', fields: [f('op_library_filename', 1, S('string'), rep)] },
  { name: 'ModelTransactionPolicy', fields: [f('decoupled', 1, S('bool'))] },
  { name: 'ModelRepositoryAgents', fields: [f('agents', 1, M('ModelRepositoryAgents.Agent'), rep)] },
  {
    name: 'ModelRepositoryAgents.Agent',
    fields: [f('name', 1, S('string')), f('parameters', 2, S('string'), map('string'))],
  },
  { name: 'ModelResponseCache', fields: [f('enable', 1, S('bool'))] },
  { name: 'ModelMetrics', fields: [f('metric_control', 1, M('ModelMetrics.MetricControl'), rep)] },
  {
    name: 'ModelMetrics.MetricControl',
    fields: [
      f('metric_identifier', 1, M('ModelMetrics.MetricControl.MetricIdentifier')),
      f('histogram_options', 2, M('ModelMetrics.MetricControl.HistogramOptions'), oneof('metric_options')),
    ],
  },
  { name: 'ModelMetrics.MetricControl.MetricIdentifier', fields: [f('family', 1, S('string'))] },
  { name: 'ModelMetrics.MetricControl.HistogramOptions', fields: [f('buckets', 1, S('double'), rep)] },
];

/** The `inference.ModelConfig` schema. */
export const MODEL_CONFIG_SCHEMA: Schema = {
  messages: new Map(MESSAGES.map((m) => [m.name, m])),
  enums: new Map(ENUMS.map((e) => [e.name, e])),
};

/** Looks up a message descriptor; throws on a schema bug (unknown name). */
export function messageDescriptor(schema: Schema, name: string): MessageDescriptor {
  const m = schema.messages.get(name);
  if (m === undefined) throw new Error(`schema has no message '${name}'`);
  return m;
}

/** Looks up an enum descriptor; throws on a schema bug (unknown name). */
export function enumDescriptor(schema: Schema, name: string): EnumDescriptor {
  const e = schema.enums.get(name);
  if (e === undefined) throw new Error(`schema has no enum '${name}'`);
  return e;
}

/**
 * JSON paths of the 64-bit fields Triton prints as JSON numbers instead of protobuf's strings
 * (protocol.md §2.11); one list with the client's gRPC config conversion. `*` matches any map key
 * or array index.
 */
export { INT64_AS_NUMBER_PATHS } from '@tritonserver-ts/protocol/http';
