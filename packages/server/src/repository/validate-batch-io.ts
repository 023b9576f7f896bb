/**
 * Load-time checks of ragged inputs (`allow_ragged_batch`), `batch_input` and `batch_output`, which
 * the scheduler implements (`scheduler/ragged.ts`). Errors are INVALID_ARG config errors naming the
 * model and the field, like the rest of `validate.ts`.
 * @packageDocumentation
 */
import { ModelConfigError } from './errors.js';
import type { ModelConfig } from './model-config.js';

/** Data types a batch input tensor may have. */
const BATCH_INPUT_TYPES = new Set(['TYPE_INT32', 'TYPE_INT64', 'TYPE_FP32']);

function invalid(message: string, fieldPath: string): ModelConfigError {
  return new ModelConfigError('MODEL_CONFIG_INVALID', message, { fieldPath });
}

/** @throws ModelConfigError when the ragged inputs, batch inputs or batch outputs are inconsistent. */
export function validateBatchIO(config: ModelConfig): void {
  const model = config.name;
  const inputs = new Map(config.input.map((i) => [i.name, i]));
  const outputs = new Set(config.output.map((o) => o.name));
  const batching = config.max_batch_size > 0;
  config.input.forEach((input, i) => {
    if (input.allow_ragged_batch && !batching) {
      throw invalid(
        `input '${input.name}' of model '${model}' allows ragged batches, which requires max_batch_size > 0`,
        `input[${i}].allow_ragged_batch`,
      );
    }
  });
  const targets = new Set<string>();
  config.batch_input.forEach((b, i) => {
    const path = `batch_input[${i}]`;
    if (!batching) throw invalid(`batch input of model '${model}' requires max_batch_size > 0`, path);
    if (b.target_name.length !== 1 || b.target_name[0] === '') {
      throw invalid(
        `batch input ${i} of model '${model}' must have exactly one target_name`,
        `${path}.target_name`,
      );
    }
    const target = b.target_name[0] as string;
    if (inputs.has(target) || targets.has(target)) {
      throw invalid(
        `batch input '${target}' of model '${model}' has the name of another input or batch input`,
        `${path}.target_name`,
      );
    }
    targets.add(target);
    if (!BATCH_INPUT_TYPES.has(b.data_type)) {
      throw invalid(
        `batch input '${target}' of model '${model}' has data_type ${b.data_type}; expected TYPE_INT32, TYPE_INT64 or TYPE_FP32`,
        `${path}.data_type`,
      );
    }
    if (b.source_input.length !== 1 || !inputs.has(b.source_input[0] as string)) {
      throw invalid(
        `batch input '${target}' of model '${model}' must name exactly one source_input among the model's inputs`,
        `${path}.source_input`,
      );
    }
  });
  const scattered = new Set<string>();
  config.batch_output.forEach((b, i) => {
    const path = `batch_output[${i}]`;
    if (!batching) throw invalid(`batch output of model '${model}' requires max_batch_size > 0`, path);
    if (b.source_input.length !== 1 || !inputs.has(b.source_input[0] as string)) {
      throw invalid(
        `batch output ${i} of model '${model}' must name exactly one source_input among the model's inputs`,
        `${path}.source_input`,
      );
    }
    if (b.target_name.length === 0) {
      throw invalid(
        `batch output ${i} of model '${model}' must name at least one target_name`,
        `${path}.target_name`,
      );
    }
    for (const target of b.target_name) {
      if (!outputs.has(target) || scattered.has(target)) {
        throw invalid(
          `batch output target '${target}' of model '${model}' must be an output of the model, named once`,
          `${path}.target_name`,
        );
      }
      scattered.add(target);
    }
  });
}
