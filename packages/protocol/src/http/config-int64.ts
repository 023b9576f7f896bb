/**
 * The 64-bit model-config fields Triton's HTTP JSON (`GET v2/models/{m}/config`) prints as JSON
 * numbers rather than protobuf's decimal strings, shared by the embedded server (which prints them)
 * and the gRPC client (which turns a gRPC `ModelConfig` into the same JSON).
 * @packageDocumentation
 */

/**
 * Dotted JSON paths of the int64 fields Triton prints as numbers (protocol.md §2.11); every other
 * 64-bit field is a string, as in protobuf's JSON mapping. `*` matches any array index or map key.
 */
export const INT64_AS_NUMBER_PATHS: readonly string[] = Object.freeze([
  'input.*.dims',
  'input.*.reshape.shape',
  'output.*.dims',
  'output.*.reshape.shape',
  'version_policy.specific.versions',
  'dynamic_batching.max_queue_delay_microseconds',
  'dynamic_batching.default_queue_policy.default_timeout_microseconds',
  'dynamic_batching.priority_queue_policy.*.default_timeout_microseconds',
  'sequence_batching.max_sequence_idle_microseconds',
  'sequence_batching.direct.max_queue_delay_microseconds',
  'sequence_batching.oldest.max_queue_delay_microseconds',
  'ensemble_scheduling.step.*.model_version',
  'model_warmup.*.inputs.*.dims',
]);
