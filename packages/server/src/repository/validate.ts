/**
 * Model config validation with Triton's messages (a subset of Triton's `ValidateModelConfig`,
 * `ValidateModelIOConfig` and `ValidateInstanceGroup`).
 * @packageDocumentation
 */
import { ModelConfigError } from './errors.js';
import { validateBatchIO } from './validate-batch-io.js';
import { validateSequenceBatching } from './sequence-controls.js';
import type { GpuFallback } from './types.js';
import type { ModelConfig, ModelInput, ModelOutput } from './model-config.js';
import { PLATFORM_BACKENDS } from './platform.js';
import { isEnsembleConfig, validateEnsembleConfig } from './validate-ensemble.js';

/** Options of {@link validateModelConfig}. */
export interface ValidateOptions {
  /** See {@link GpuFallback}; with `'cpu'`, `KIND_GPU` groups are accepted. */
  readonly gpuFallback?: GpuFallback;
}

function invalid(message: string, fieldPath?: string): ModelConfigError {
  return new ModelConfigError('MODEL_CONFIG_INVALID', message, fieldPath === undefined ? {} : { fieldPath });
}

/**
 * Validates a normalized config.
 * @throws ModelConfigError `MODEL_CONFIG_INVALID` with Triton's message
 */
export function validateModelConfig(config: ModelConfig, options: ValidateOptions = {}): void {
  const name = config.name;
  if (name === '') throw invalid("model configuration must specify 'name'", 'name');
  if (config.platform === '' && config.backend === '') {
    throw invalid(`must specify 'platform' or 'backend' for '${name}'`, 'backend');
  }
  const platformBackend = PLATFORM_BACKENDS[config.platform];
  if (config.backend !== '' && platformBackend !== undefined && platformBackend !== config.backend) {
    throw invalid(
      `unexpected 'platform' and 'backend' pair, got:${config.platform}, ${config.backend}`,
      'platform',
    );
  }
  if (config.max_batch_size < 0) {
    throw invalid(`'max_batch_size' must be non-negative value for ${name}`, 'max_batch_size');
  }
  if (config.version_policy === undefined)
    throw invalid(`must specify 'version policy' for ${name}`, 'version_policy');

  const db = config.dynamic_batching;
  if (db !== undefined) {
    for (const size of db.preferred_batch_size) {
      if (size <= 0) throw invalid(`dynamic batching preferred size must be positive for ${name}`);
      if (size > config.max_batch_size) {
        throw invalid(`dynamic batching preferred size must be <= max batch size for ${name}`);
      }
    }
    const levels = db.priority_levels;
    if (levels !== 0) {
      if (db.default_priority_level === 0 || db.default_priority_level > levels) {
        throw invalid(`default priority level must be in range [1, ${levels}] for ${name}`);
      }
      for (const key of Object.keys(db.priority_queue_policy)) {
        const level = Number(key);
        if (level === 0 || level > levels) {
          throw invalid(`priority queue policy must have priority level in range [1, ${levels}] for ${name}`);
        }
      }
    }
    if (db.preserve_ordering) {
      if (levels > 1)
        throw invalid(`Only one priority level is allowed when 'preserve_ordering' is true for ${name}`);
      const policies = [db.default_queue_policy, ...Object.values(db.priority_queue_policy)];
      for (const p of policies) {
        if (p !== undefined && p.default_timeout_microseconds !== 0 && p.timeout_action === 'DELAY') {
          throw invalid(
            `Queue policy can not have DELAY as timeout action when 'preserve_ordering' is true for ${name}`,
          );
        }
      }
    }
  }
  // Controls and the oldest strategy's sizes first, as Triton's ValidateModelConfig.
  validateSequenceBatching(config);
  if (config.sequence_batching?.direct !== undefined) {
    const u = config.sequence_batching.direct.minimum_slot_utilization;
    if (u < 0 || u > 1)
      throw invalid(`sequence batching minimum slot utilization must be in range (0.0, 1.0] for ${name}`);
  }

  const seen = new Set<string>();
  config.input.forEach((io, i) => {
    validateIO(io, config.max_batch_size, 'model input ', `input[${i}]`, name);
    if (seen.has(io.name))
      throw invalid(`input '${io.name}' is specified more than once for ${name}`, `input[${i}]`);
    seen.add(io.name);
  });
  seen.clear();
  config.output.forEach((io, i) => {
    validateIO(io, config.max_batch_size, 'model output ', `output[${i}]`, name);
    if (seen.has(io.name))
      throw invalid(`output '${io.name}' is specified more than once for ${name}`, `output[${i}]`);
    seen.add(io.name);
  });

  validateBatchIO(config);

  if (isEnsembleConfig(config)) {
    validateEnsembleConfig(config);
  } else {
    if (config.instance_group.length === 0)
      throw invalid(`must specify one or more 'instance group's for ${name}`);
    config.instance_group.forEach((group, i) => {
      const path = `instance_group[${i}]`;
      const label = `instance group ${group.name} of model ${name}`;
      if (group.kind === 'KIND_GPU' && (options.gpuFallback ?? 'error') === 'error') {
        throw invalid(
          `${label} has kind KIND_GPU but no GPUs are available (tritonserver-ts runs on the CPU only; start it with --gpu-fallback=cpu to run KIND_GPU groups on the CPU)`,
          path,
        );
      }
      if ((group.kind === 'KIND_CPU' || group.kind === 'KIND_MODEL') && group.gpus.length > 0) {
        throw invalid(`${label} has kind ${group.kind} but specifies one or more GPUs`, path);
      }
      if (group.kind === 'KIND_AUTO') throw invalid(`${label} has unexpected kind KIND_AUTO`, path);
      if (config.platform !== 'tensorrt_plan' && group.profile.length > 0) {
        throw invalid(
          `${label} and platform ${config.platform} specifies profile field which is only supported for TensorRT models`,
          path,
        );
      }
    });
  }
  checkResponseCacheSupport(config);
}

/**
 * Triton's response cache does not serve decoupled models: such a config is refused at load, with
 * Triton's message (an ensemble made decoupled by its steps is checked again once that is known).
 * @throws ModelConfigError `MODEL_CONFIG_INVALID`
 */
export function checkResponseCacheSupport(config: ModelConfig): void {
  if (config.response_cache?.enable === true && config.model_transaction_policy?.decoupled === true) {
    throw invalid(
      `Response Cache does not currently support model ${config.name} with 'decoupled' transaction policy. Please disable the response cache.`,
      'response_cache',
    );
  }
}

function validateIO(
  io: ModelInput | ModelOutput,
  maxBatchSize: number,
  prefix: string,
  path: string,
  modelName: string,
): void {
  const suffix = ` for ${modelName}`;
  if (io.name === '') throw invalid(`${prefix}must specify 'name'${suffix}`, path);
  const withName = `${prefix}'${io.name}' `;
  if (io.data_type === 'TYPE_INVALID')
    throw invalid(`${withName}must specify 'data_type'${suffix}`, `${path}.data_type`);
  if (io.dims.length === 0) throw invalid(`${withName}must specify 'dims'${suffix}`, `${path}.dims`);
  if (io.reshape !== undefined && io.reshape.shape.length === 0 && maxBatchSize === 0) {
    throw invalid(
      `${withName}cannot have empty reshape for non-batching model as scalar tensors are not supported${suffix}`,
      `${path}.reshape`,
    );
  }
  for (const d of io.dims) {
    if (d < 1 && d !== -1) {
      throw invalid(
        `${withName}dimension must be integer >= 1, or -1 to indicate a variable-size dimension${suffix}`,
        `${path}.dims`,
      );
    }
  }
  if (io.reshape !== undefined) {
    for (const d of io.reshape.shape) {
      if (d < 1 && d !== -1) {
        throw invalid(
          `${withName}reshape dimensions must be integer >= 1, or -1 to indicate a variable-size dimension${suffix}`,
          `${path}.reshape`,
        );
      }
    }
    const count = (dims: readonly number[]): number =>
      dims.includes(-1) ? -1 : dims.reduce((a, b) => a * b, 1);
    const dimsSize = count(io.dims);
    const reshapeSize = count(io.reshape.shape);
    if (dimsSize !== reshapeSize && (io.reshape.shape.length !== 0 || dimsSize !== 1)) {
      throw invalid(`${withName}has different size for dims and reshape${suffix}`, `${path}.reshape`);
    }
  }
}
