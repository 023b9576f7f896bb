/**
 * The control inputs of `sequence_batching` as Triton reads them (`GetBooleanSequenceControlProperties`
 * and `GetTypedSequenceControlProperties` in its model_config_utils.cc): which tensor carries each
 * control kind, its data type and its false / true values, with Triton's load-time messages.
 * @packageDocumentation
 */
import type { DataType, ModelConfig, ModelSequenceBatching, SequenceControlKind } from './model-config.js';
import { ModelConfigError } from './errors.js';

/** A boolean control (START, END, READY): the tensor and the values it takes. */
export interface BooleanControl {
  readonly name: string;
  readonly dataType: 'TYPE_INT32' | 'TYPE_FP32' | 'TYPE_BOOL';
  /** `[false, true]` values (numbers for INT32 / FP32, booleans for BOOL). */
  readonly falseValue: number | boolean;
  readonly trueValue: number | boolean;
}

/** The CORRID control: the tensor and its configured data type. */
export interface CorrelationIdControl {
  readonly name: string;
  readonly dataType: DataType;
}

/** Every control input of a sequence model (absent kinds are `undefined`). */
export interface SequenceControls {
  readonly start: BooleanControl | undefined;
  readonly end: BooleanControl | undefined;
  readonly ready: BooleanControl | undefined;
  readonly corrid: CorrelationIdControl | undefined;
}

/** The data types Triton allows for CONTROL_SEQUENCE_CORRID. */
export const CORRID_DATA_TYPES: readonly DataType[] = [
  'TYPE_UINT64',
  'TYPE_INT64',
  'TYPE_UINT32',
  'TYPE_INT32',
  'TYPE_STRING',
];

function invalid(message: string): ModelConfigError {
  return new ModelConfigError('MODEL_CONFIG_INVALID', message, {
    fieldPath: 'sequence_batching.control_input',
  });
}

/**
 * Finds the control of `kind`, checking the whole control list on the way as Triton does (every
 * tensor named, no tensor for two kinds, no kind twice). Returns the control and its tensor name.
 */
function findControl(
  batcher: ModelSequenceBatching,
  model: string,
  kind: SequenceControlKind,
): { name: string; control: ModelSequenceBatching['control_input'][number]['control'][number] } | undefined {
  const seenTensors = new Set<string>();
  let found: ReturnType<typeof findControl>;
  for (const input of batcher.control_input) {
    if (input.name === '') throw invalid(`sequence batching control tensor must have a name for ${model}`);
    if (seenTensors.has(input.name)) {
      throw invalid(
        `sequence batching control tensor '${input.name}' is specified for multiple control kinds for ${model}`,
      );
    }
    seenTensors.add(input.name);
    for (const c of input.control) {
      if (c.kind !== kind) continue;
      if (found !== undefined)
        throw invalid(`sequence batching specifies multiple ${kind} tensors for ${model}`);
      found = { name: input.name, control: c };
    }
  }
  return found;
}

function booleanControl(
  batcher: ModelSequenceBatching,
  model: string,
  kind: SequenceControlKind,
): BooleanControl | undefined {
  const found = findControl(batcher, model, kind);
  if (found === undefined) return undefined;
  const c = found.control;
  const given = [c.int32_false_true.length, c.fp32_false_true.length, c.bool_false_true.length].filter(
    (n) => n !== 0,
  ).length;
  if (given === 0) {
    throw invalid(
      `sequence batching must specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for ${kind} for ${model}`,
    );
  }
  if (given > 1) {
    throw invalid(
      `sequence batching specifies more than one from 'int32_false_true', 'fp32_false_true' and 'bool_false_true' for ${kind} for ${model}`,
    );
  }
  const pair = (
    field: string,
    values: readonly (number | boolean)[],
  ): [number | boolean, number | boolean] => {
    if (values.length !== 2) {
      throw invalid(
        `sequence batching control '${field}' must have exactly 2 entries for ${kind} for ${model}`,
      );
    }
    return [values[0] as number | boolean, values[1] as number | boolean];
  };
  if (c.int32_false_true.length > 0) {
    const [f, t] = pair('int32_false_true', c.int32_false_true);
    return { name: found.name, dataType: 'TYPE_INT32', falseValue: f, trueValue: t };
  }
  if (c.fp32_false_true.length > 0) {
    const [f, t] = pair('fp32_false_true', c.fp32_false_true);
    return { name: found.name, dataType: 'TYPE_FP32', falseValue: f, trueValue: t };
  }
  const [f, t] = pair('bool_false_true', c.bool_false_true);
  return { name: found.name, dataType: 'TYPE_BOOL', falseValue: f, trueValue: t };
}

function corridControl(batcher: ModelSequenceBatching, model: string): CorrelationIdControl | undefined {
  const kind: SequenceControlKind = 'CONTROL_SEQUENCE_CORRID';
  const found = findControl(batcher, model, kind);
  if (found === undefined) return undefined;
  const c = found.control;
  if (c.int32_false_true.length > 0 || c.fp32_false_true.length > 0 || c.bool_false_true.length > 0) {
    throw invalid(
      `sequence batching must not specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for ${kind} for ${model}`,
    );
  }
  if (!CORRID_DATA_TYPES.includes(c.data_type)) {
    throw invalid(
      `unexpected data type for control ${kind} for ${model}. Allowed data types are TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 and TYPE_STRING`,
    );
  }
  return { name: found.name, dataType: c.data_type };
}

/**
 * The control inputs of `config` (which must have `sequence_batching`), validated in Triton's order
 * (START, END, READY, then CORRID).
 * @throws ModelConfigError `MODEL_CONFIG_INVALID` with Triton's message
 */
export function sequenceControls(config: ModelConfig): SequenceControls {
  const batcher = config.sequence_batching;
  if (batcher === undefined) return { start: undefined, end: undefined, ready: undefined, corrid: undefined };
  const model = config.name;
  return {
    start: booleanControl(batcher, model, 'CONTROL_SEQUENCE_START'),
    end: booleanControl(batcher, model, 'CONTROL_SEQUENCE_END'),
    ready: booleanControl(batcher, model, 'CONTROL_SEQUENCE_READY'),
    corrid: corridControl(batcher, model),
  };
}

/** The names of every control tensor of `config` (the inputs the sequence batcher fills). */
export function sequenceControlNames(config: ModelConfig): string[] {
  return (config.sequence_batching?.control_input ?? []).map((c) => c.name);
}

/**
 * Triton's load-time checks of `sequence_batching` (after `dynamic_batching`'s): the controls, then
 * the oldest strategy's preferred batch sizes, then the direct strategy's slot utilization.
 * @throws ModelConfigError `MODEL_CONFIG_INVALID`
 */
export function validateSequenceBatching(config: ModelConfig): void {
  const sb = config.sequence_batching;
  if (sb === undefined) return;
  const name = config.name;
  sequenceControls(config);
  if (sb.oldest !== undefined) {
    for (const size of sb.oldest.preferred_batch_size) {
      if (size <= 0) throw invalid(`sequence batching preferred batch size must be positive for ${name}`);
      if (size > config.max_batch_size)
        throw invalid(`sequence batching preferred batch size must be <= max batch size for ${name}`);
    }
  }
}
