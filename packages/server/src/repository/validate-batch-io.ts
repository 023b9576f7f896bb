/**
 * Load-time checks of `batch_input` and `batch_output`: Triton's `ValidateBatchIO`
 * (`model_config_utils.cc`), same rules, same order, same messages (with the " for <model>" that
 * `ValidateModelIOConfig` appends). Triton has no rule tying them, or `allow_ragged_batch`, to
 * `max_batch_size` or dynamic batching; the backend checks the rest when the model loads
 * (`runtime/onnxruntime/onnxruntime-backend.ts`: ragged inputs must be `[-1]` in the model, the input count).
 * @packageDocumentation
 */
import { ModelConfigError } from './errors.js';
import type { ModelConfig } from './model-config.js';

function invalid(message: string, fieldPath: string): ModelConfigError {
  return new ModelConfigError('MODEL_CONFIG_INVALID', message, { fieldPath });
}

/** @throws ModelConfigError `MODEL_CONFIG_INVALID` with Triton's message */
export function validateBatchIO(config: ModelConfig): void {
  const suffix = ` for ${config.name}`;
  const inputs = new Set(config.input.map((i) => i.name));
  const outputs = new Set(config.output.map((o) => o.name));
  config.batch_input.forEach((b, i) => {
    const path = `batch_input[${i}]`;
    if (b.source_input.length !== 1) {
      throw invalid(
        `batch input kind '${b.kind}' expects 1 source input, got ${b.source_input.length}${suffix}`,
        `${path}.source_input`,
      );
    }
    if (b.data_type !== 'TYPE_INT32' && b.data_type !== 'TYPE_FP32') {
      throw invalid(`batch input data type must be TYPE_INT32 or TYPE_FP32${suffix}`, `${path}.data_type`);
    }
    for (const source of b.source_input) {
      if (!inputs.has(source)) {
        throw invalid(`unknown source input name '${source}'${suffix}`, `${path}.source_input`);
      }
    }
  });
  config.batch_output.forEach((b, i) => {
    const path = `batch_output[${i}]`;
    if (b.source_input.length !== 1) {
      throw invalid(
        `batch output kind '${b.kind}' expects 1 source input, got ${b.source_input.length}${suffix}`,
        `${path}.source_input`,
      );
    }
    for (const source of b.source_input) {
      if (!inputs.has(source)) {
        throw invalid(`unknown source input name '${source}'${suffix}`, `${path}.source_input`);
      }
    }
    const targets = new Set<string>();
    for (const target of b.target_name) {
      if (!outputs.has(target)) {
        throw invalid(`unknown target output name '${target}'${suffix}`, `${path}.target_name`);
      }
      if (targets.has(target)) {
        throw invalid(
          `target output name '${target}' can only be specified once${suffix}`,
          `${path}.target_name`,
        );
      }
      targets.add(target);
    }
  });
}
