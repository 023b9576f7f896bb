/**
 * The typed `inference.ModelConfig` (Triton's `model_config.proto`), field for field.
 *
 * The interfaces are defined once, in `@tritonserver-ts/protocol` (`model-config.ts`), and
 * shared with the client, whose `getModelConfig` returns the same message as received; this module
 * re-exports them so the server's imports keep one path. The server's model is the normalized one:
 * the type parameter `I64` keeps its default (`number`), so every 64-bit integer is a JavaScript
 * number and a value that is not a safe integer is rejected by the parsers.
 *
 * Presence follows proto3: scalar fields always hold a value (the proto default when not given),
 * repeated fields are arrays (empty when not given), map fields are plain objects (empty when not
 * given), message fields and oneof members are optional (`undefined` = not set). Every object
 * produced by {@link parseModelConfigText}, {@link parseModelConfigJson} or
 * {@link createModelConfig} is complete in this sense.
 * @packageDocumentation
 */
import type { DeepPartial, ModelConfig } from '@tritonserver-ts/protocol';

export type {
  DataType,
  TensorFormat,
  InstanceGroupKind,
  SecondaryDeviceKind,
  TimeoutAction,
  ModelPriority,
  SequenceControlKind,
  BatchInputKind,
  BatchOutputKind,
  ModelTensorReshape,
  ModelInput,
  ModelOutput,
  VersionPolicyLatest,
  VersionPolicyAll,
  VersionPolicySpecific,
  ModelVersionPolicy,
  RateLimiterResource,
  ModelRateLimiter,
  SecondaryDevice,
  ModelInstanceGroup,
  ModelQueuePolicy,
  ModelDynamicBatching,
  SequenceControl,
  SequenceControlInput,
  SequenceInitialState,
  SequenceState,
  SequenceStrategyDirect,
  SequenceStrategyOldest,
  ModelSequenceBatching,
  EnsembleStep,
  ModelEnsembling,
  OptimizationGraph,
  GraphSpecShape,
  GraphSpecLowerBound,
  GraphSpec,
  OptimizationCuda,
  ExecutionAccelerator,
  ExecutionAccelerators,
  PinnedMemoryBuffer,
  ModelOptimizationPolicy,
  WarmupInput,
  ModelWarmup,
  BatchInput,
  BatchOutput,
  ModelParameter,
  ModelOperations,
  ModelTransactionPolicy,
  RepositoryAgent,
  ModelRepositoryAgents,
  ModelResponseCache,
  MetricIdentifier,
  HistogramOptions,
  MetricControl,
  ModelMetrics,
  ModelConfig,
  DeepPartial,
} from '@tritonserver-ts/protocol';

/**
 * A partial config for building one in code: every field optional, nested messages partial too.
 * Complete it with {@link createModelConfig}.
 */
export type ModelConfigInit = DeepPartial<ModelConfig>;
