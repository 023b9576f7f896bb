/**
 * Ragged inputs, batch inputs and batch outputs as Triton's backend utilities lay them out for the
 * ONNX Runtime backend (`BackendInputCollector::BatchInputShape` / `ProcessBatchInput`,
 * `BackendOutputResponder::ProcessBatchOutput`, `SetInputTensors` in `onnxruntime.cc`):
 *
 * - a ragged input (`allow_ragged_batch`) reaches the model as one 1-D tensor `[total elements]`, the
 *   requests' elements one after another;
 * - a batch input is computed from its `source_input`'s shape in each request (batch dim included):
 *   - `BATCH_ELEMENT_COUNT`: `[requests]`, each request's element count;
 *   - `BATCH_ACCUMULATED_ELEMENT_COUNT`: `[requests]`, running totals (where each request ends);
 *   - `BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO`: `[requests + 1]`, the same after a leading 0;
 *   - `BATCH_MAX_ELEMENT_COUNT_AS_SHAPE`: `[largest element count]`; only the shape means anything
 *     (Triton leaves the contents unset; here they are zeros);
 *   - `BATCH_ITEM_SHAPE`: `[batch items, rank − 1]`, the shape without the batch dim of every batch
 *     item (a request of batch size b contributes b rows);
 *   - `BATCH_ITEM_SHAPE_FLATTEN`: the same values as one 1-D tensor;
 *   with `data_type` TYPE_FP32 as float32, otherwise int32 (the only two types Triton accepts);
 * - an output named by a `BATCH_SCATTER_WITH_INPUT_SHAPE` batch output is cut into consecutive
 *   pieces, one per request, each of the output's configured shape (`[-1, ...dims]` when the model
 *   batches, `reshape` when given) with every −1 taken from the source input's shape in that request
 *   at the same position.
 * @packageDocumentation
 */
import type { PackedTensor } from '@tritonserver-ts/protocol';

import type { BatchInput, ModelConfig } from '../repository/model-config.js';
import { BackendError } from './errors.js';
import { formatShape, product } from './shapes.js';

/** The shape a ragged input reaches the model with: all its elements in one dimension. */
export function raggedShape(shapes: readonly (readonly number[])[]): number[] {
  let total = 0;
  for (const s of shapes) total += product(s);
  return [total];
}

function batchInputError(name: string, detail: string): BackendError {
  return new BackendError('INVALID_EXECUTION_INPUT', `batch input '${name}': ${detail}`);
}

/**
 * The batch input `b` for one execution, named `name` (one of its `target_name`s).
 * @param sourceShapes the shape of `b.source_input[0]` in each request of the execution, in order
 * @throws BackendError `INVALID_EXECUTION_INPUT` when the requests' source shapes cannot describe
 *   batch items (no batch dimension, or ranks that differ)
 */
export function batchInputTensor(
  b: BatchInput,
  name: string,
  sourceShapes: readonly (readonly number[])[],
): PackedTensor {
  const counts = sourceShapes.map(product);
  let shape: number[];
  let values: number[];
  switch (b.kind) {
    case 'BATCH_ELEMENT_COUNT':
      shape = [counts.length];
      values = counts;
      break;
    case 'BATCH_ACCUMULATED_ELEMENT_COUNT':
    case 'BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO': {
      values = b.kind === 'BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO' ? [0] : [];
      let total = 0;
      for (const c of counts) values.push((total += c));
      shape = [values.length];
      break;
    }
    case 'BATCH_MAX_ELEMENT_COUNT_AS_SHAPE': {
      const max = counts.reduce((a, c) => Math.max(a, c), 0);
      shape = [max];
      values = new Array<number>(max).fill(0);
      break;
    }
    case 'BATCH_ITEM_SHAPE':
    case 'BATCH_ITEM_SHAPE_FLATTEN': {
      // The first dimension is the batch size; every batch item gets the rest of the shape.
      const rank = (sourceShapes[0]?.length ?? 1) - 1;
      values = [];
      let items = 0;
      for (const s of sourceShapes) {
        if (s.length === 0) throw batchInputError(name, `source shape [] has no batch dimension`);
        if (s.length - 1 !== rank) {
          throw batchInputError(
            name,
            `the requests' source shapes differ in rank (${formatShape(sourceShapes[0] ?? [])} and ${formatShape(s)})`,
          );
        }
        const batch = s[0] as number;
        const item = s.slice(1);
        for (let i = 0; i < batch; i++) values.push(...item);
        items += batch;
      }
      shape = b.kind === 'BATCH_ITEM_SHAPE' ? [items, rank] : [values.length];
      break;
    }
  }
  return b.data_type === 'TYPE_FP32'
    ? { name, datatype: 'FP32', shape, data: Float32Array.from(values) }
    : { name, datatype: 'INT32', shape, data: Int32Array.from(values) };
}

/** What one scattered output is cut by. */
export interface ScatterSpec {
  /** The input whose per-request shape fills the −1 dims. */
  readonly source: string;
  /** The output's shape per request before the −1 dims are filled: `[-1, ...dims]` when batching. */
  readonly template: readonly number[];
}

/**
 * Outputs named by a `batch_output`, each with what it is scattered by. (Triton's backend utilities
 * cut every target by the first target's shape; here each target uses its own configured shape.)
 */
export function scatterSpecs(config: ModelConfig): Map<string, ScatterSpec> {
  const specs = new Map<string, ScatterSpec>();
  for (const b of config.batch_output) {
    const source = b.source_input[0];
    if (source === undefined) continue;
    for (const target of b.target_name) {
      const output = config.output.find((o) => o.name === target);
      if (output === undefined) continue;
      const dims = output.reshape?.shape ?? output.dims;
      specs.set(target, { source, template: config.max_batch_size > 0 ? [-1, ...dims] : [...dims] });
    }
  }
  return specs;
}

/**
 * One request's shape of a scattered output: the template with each −1 replaced by the source
 * input's dim at the same position.
 * @throws BackendError `EXECUTION_FAILED` when the source shape has no dim at a −1 position
 */
export function scatteredShape(output: string, spec: ScatterSpec, sourceShape: readonly number[]): number[] {
  return spec.template.map((d, i) => {
    if (d !== -1) return d;
    const s = sourceShape[i];
    if (s === undefined) {
      throw new BackendError(
        'EXECUTION_FAILED',
        `batch output '${output}': shape ${formatShape(spec.template)} has a variable dimension ${i} that input '${spec.source}' of shape ${formatShape(sourceShape)} does not have`,
      );
    }
    return s;
  });
}
