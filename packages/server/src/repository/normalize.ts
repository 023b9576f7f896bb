/**
 * Triton's config normalization: the defaults a loaded model's config shows in
 * `GET .../config` even when `config.pbtxt` did not give them.
 * @packageDocumentation
 */
import type { ModelConfig } from './model-config.js';

/** Triton's default `max_sequence_idle_microseconds` (1 s). */
export const SEQUENCE_IDLE_DEFAULT_MICROSECONDS = 1_000_000;

/**
 * Applies Triton's normalization in place: version policy latest 1 when absent; dynamic batching
 * (and oldest-first sequence batching) `preferred_batch_size` = `[max_batch_size]` when empty;
 * sequence idle default; input/output pinned memory enabled unless given (not for ensembles).
 */
export function normalizeModelConfig(config: ModelConfig): void {
  config.version_policy ??= { latest: { num_versions: 1 } };
  const db = config.dynamic_batching;
  if (db !== undefined && db.preferred_batch_size.length === 0 && config.max_batch_size > 0) {
    db.preferred_batch_size.push(config.max_batch_size);
  }
  const sb = config.sequence_batching;
  if (sb !== undefined) {
    if (sb.max_sequence_idle_microseconds === 0)
      sb.max_sequence_idle_microseconds = SEQUENCE_IDLE_DEFAULT_MICROSECONDS;
    if (sb.oldest !== undefined && sb.oldest.preferred_batch_size.length === 0 && config.max_batch_size > 0) {
      sb.oldest.preferred_batch_size.push(config.max_batch_size);
    }
  }
  if (config.ensemble_scheduling === undefined) {
    config.optimization ??= {
      priority: 'PRIORITY_DEFAULT',
      gather_kernel_buffer_threshold: 0,
      eager_batching: false,
    };
    config.optimization.input_pinned_memory ??= { enable: true };
    config.optimization.output_pinned_memory ??= { enable: true };
  }
}

/**
 * Triton's instance-group normalization on a host without GPUs (in place): one group named after the
 * model when none is given; empty names become `<model>_<index>`; `KIND_AUTO` becomes `KIND_CPU`;
 * `count` < 1 becomes 1, or 2 for `KIND_CPU` groups of the onnxruntime and tensorflow backends.
 * `KIND_GPU` groups are kept (validation or the GPU fallback decides about them).
 */
export function normalizeInstanceGroups(config: ModelConfig): void {
  if (config.ensemble_scheduling !== undefined) return;
  if (config.instance_group.length === 0) {
    config.instance_group.push({
      name: config.name,
      kind: 'KIND_AUTO',
      count: 0,
      gpus: [],
      secondary_devices: [],
      profile: [],
      passive: false,
      host_policy: '',
    });
  }
  config.instance_group.forEach((group, i) => {
    if (group.name === '') group.name = `${config.name}_${i}`;
    if (group.kind === 'KIND_AUTO') group.kind = 'KIND_CPU';
    if (group.count < 1) {
      const cpuDefault2 = config.backend === 'onnxruntime' || config.backend === 'tensorflow';
      group.count = group.kind === 'KIND_CPU' && cpuDefault2 ? 2 : 1;
    }
  });
}
