/**
 * Auto-complete of a model config from an ONNX model, following Triton's onnxruntime backend:
 *
 * - Runs only when the config lacks inputs (counting `batch_input`) or outputs; a config that gives
 *   both is left alone (even if `max_batch_size` is 0).
 * - The model "can batch" when every input and output has at least one dim and a variable first
 *   dim. Then, if `max_batch_size` is 0, it becomes the default max batch size (Triton's
 *   `--backend-config=default-max-batch-size`, 4 unless set), and when `max_batch_size > 1` and no
 *   scheduler is configured, `dynamic_batching {}` is added. A model that cannot batch with a
 *   non-zero `max_batch_size` fails: "autofill failed for model '…': model does not support
 *   batching while non-zero max_batch_size is specified".
 * - Missing `input` / `output` lists are filled from the model: name, data type, dims without the
 *   batch dim when batching; a tensor left with no dims gets `dims: [1]` (plus an empty `reshape`
 *   when batching).
 *
 * Difference from Triton: tensors are listed in the ONNX graph's order (Triton's order comes from an
 * unordered map and is unspecified).
 * @packageDocumentation
 */
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';

import ort from 'onnxruntime-node';

import { redactPath } from '../../repository/contained-path.js';
import { ModelConfigError, ModelRepositoryError } from '../../repository/errors.js';
import type { AutoCompleteRequest } from '../../repository/types.js';
import type { DataType, ModelConfig, ModelInput, ModelOutput } from '../../repository/model-config.js';

/** ORT tensor element types → model-config data types. */
export const ORT_TO_CONFIG_DATATYPE: Readonly<Record<string, DataType>> = {
  bool: 'TYPE_BOOL',
  uint8: 'TYPE_UINT8',
  uint16: 'TYPE_UINT16',
  uint32: 'TYPE_UINT32',
  uint64: 'TYPE_UINT64',
  int8: 'TYPE_INT8',
  int16: 'TYPE_INT16',
  int32: 'TYPE_INT32',
  int64: 'TYPE_INT64',
  float16: 'TYPE_FP16',
  float32: 'TYPE_FP32',
  float64: 'TYPE_FP64',
  string: 'TYPE_STRING',
};

/** One ONNX graph input or output as auto-complete sees it (dims: −1 = variable). */
export interface OnnxTensorInfo {
  readonly name: string;
  readonly dataType: DataType;
  readonly dims: readonly number[];
}

/**
 * Reads the inputs and outputs of an ONNX model file.
 * @param shownPath - how messages name the file (never an absolute host path).
 */
export async function readOnnxSignature(
  modelPath: string,
  modelName: string,
  shownPath = basename(modelPath),
): Promise<{ inputs: OnnxTensorInfo[]; outputs: OnnxTensorInfo[] }> {
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  } catch (err) {
    const detail = redactPath(err instanceof Error ? err.message : String(err), modelPath, shownPath);
    throw new ModelConfigError(
      'MODEL_CONFIG_INVALID',
      `autofill failed for model '${modelName}': unable to load '${shownPath}': ${detail}`,
      { cause: err },
    );
  }
  try {
    const convert = (meta: readonly ort.InferenceSession.ValueMetadata[]): OnnxTensorInfo[] =>
      meta.map((m) => {
        if (!m.isTensor) {
          throw new ModelConfigError(
            'MODEL_CONFIG_INVALID',
            `autofill failed for model '${modelName}': '${m.name}' is not a tensor`,
          );
        }
        const dataType = ORT_TO_CONFIG_DATATYPE[m.type];
        if (dataType === undefined) {
          throw new ModelConfigError(
            'MODEL_CONFIG_INVALID',
            `autofill failed for model '${modelName}': unsupported ONNX data type '${m.type}' of '${m.name}'`,
          );
        }
        return {
          name: m.name,
          dataType,
          dims: m.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : -1)),
        };
      });
    return { inputs: convert(session.inputMetadata), outputs: convert(session.outputMetadata) };
  } finally {
    await session.release();
  }
}

/** True when auto-complete would change this config (inputs or outputs missing). */
export function needsAutoComplete(config: ModelConfig): boolean {
  return config.input.length + config.batch_input.length === 0 || config.output.length === 0;
}

/**
 * Applies Triton's onnxruntime auto-complete rules to `config` (in place) given the model's
 * signature. See the module documentation.
 * @throws ModelConfigError `MODEL_CONFIG_INVALID`
 */
export function autoCompleteFromSignature(
  config: ModelConfig,
  signature: { inputs: readonly OnnxTensorInfo[]; outputs: readonly OnnxTensorInfo[] },
  defaultMaxBatchSize = 4,
): void {
  if (!needsAutoComplete(config)) return;
  const all = [...signature.inputs, ...signature.outputs];
  const canBatch = all.every((t) => t.dims.length > 0 && t.dims[0] === -1);
  if (canBatch) {
    if (config.max_batch_size === 0) config.max_batch_size = Math.max(defaultMaxBatchSize, 0);
    if (
      config.max_batch_size > 1 &&
      config.dynamic_batching === undefined &&
      config.sequence_batching === undefined
    ) {
      config.dynamic_batching = {
        preferred_batch_size: [],
        max_queue_delay_microseconds: 0,
        preserve_ordering: false,
        priority_levels: 0,
        default_priority_level: 0,
        priority_queue_policy: {},
      };
    }
  } else if (config.max_batch_size !== 0) {
    throw new ModelConfigError(
      'MODEL_CONFIG_INVALID',
      `autofill failed for model '${config.name}': model does not support batching while non-zero max_batch_size is specified`,
      { fieldPath: 'max_batch_size' },
    );
  }
  const skip = config.max_batch_size > 0 ? 1 : 0;
  const shape = (t: OnnxTensorInfo): { dims: number[]; reshape?: { shape: number[] } } => {
    const dims = t.dims.slice(skip);
    if (dims.length > 0) return { dims };
    return config.max_batch_size > 0 ? { dims: [1], reshape: { shape: [] } } : { dims: [1] };
  };
  if (config.input.length + config.batch_input.length === 0) {
    config.input = signature.inputs.map((t): ModelInput => ({
      name: t.name,
      data_type: t.dataType,
      format: 'FORMAT_NONE',
      ...shape(t),
      is_shape_tensor: false,
      allow_ragged_batch: false,
      optional: false,
      is_non_linear_format_io: false,
    }));
  }
  if (config.output.length === 0) {
    config.output = signature.outputs.map((t): ModelOutput => ({
      name: t.name,
      data_type: t.dataType,
      ...shape(t),
      label_filename: '',
      is_shape_tensor: false,
      is_non_linear_format_io: false,
    }));
  }
}

/**
 * The onnxruntime backend's auto-complete (its `Backend.autoCompleteConfig`): when the config lacks
 * inputs or outputs, reads the model file's signature and applies {@link autoCompleteFromSignature}.
 * @throws ModelRepositoryError `MODEL_LOAD_FAILED` when the model file is missing
 * @throws ModelConfigError `MODEL_CONFIG_INVALID`
 */
export async function autoCompleteOnnxConfig(
  config: ModelConfig,
  request: AutoCompleteRequest,
): Promise<ModelConfig | undefined> {
  if (!needsAutoComplete(config)) return undefined;
  const found = await stat(request.modelPath).then(
    () => true,
    () => false,
  );
  if (!found) {
    throw new ModelRepositoryError(
      'MODEL_LOAD_FAILED',
      `unable to find '${request.displayPath}' for model '${config.name}'`,
    );
  }
  autoCompleteFromSignature(
    config,
    await readOnnxSignature(request.modelPath, config.name, request.displayPath),
    request.defaultMaxBatchSize,
  );
  return config;
}
