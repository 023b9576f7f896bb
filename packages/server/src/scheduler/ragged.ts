/**
 * Ragged batching (Triton's `allow_ragged_batch`, `batch_input`, `batch_output`) for models whose
 * backend reads them (the runtime's `Backend.batchInputs`: onnxruntime all of them, identity ragged
 * inputs), laid out the way Triton's ONNX Runtime backend gives them to a model (the computations
 * are in `runtime/batch-io.ts`):
 * - requests share a batch when their non-ragged inputs agree; a ragged input only has to agree on
 *   its datatype (Triton enforces equal shapes only for variable-size inputs that are not ragged);
 * - a ragged input is one 1-D tensor of every request's elements, in batch order;
 * - each batch input is computed over the execution's requests and fed under each of its
 *   `target_name`s;
 * - an output named by a BATCH_SCATTER_WITH_INPUT_SHAPE batch output is cut back per request by its
 *   source input's shape in that request; every other output is split by batch rows as usual.
 * @packageDocumentation
 */
import type { PackedTensor } from '@tritonserver-ts/protocol';

import { ServerError } from '../common/errors.js';
import type { BatchInput, ModelConfig } from '../repository/model-config.js';
import {
  batchInputTensor,
  raggedShape,
  scatteredShape,
  scatterSpecs,
  type ScatterSpec,
} from '../runtime/batch-io.js';
import type { BatchInputSupport } from '../runtime/registry.js';
import { product } from '../runtime/shapes.js';
import { concatInputs, sliceData, splitOutputs } from './batch.js';

/** What of a model's config changes how a batch is laid out. */
export interface BatchLayout {
  readonly raggedInputs: ReadonlySet<string>;
  readonly batchInputs: readonly BatchInput[];
  /** Scattered output name → what it is cut by. */
  readonly scatter: ReadonlyMap<string, ScatterSpec>;
}

/**
 * The layout of `config`, or `undefined` when it has no ragged input, batch input or batch output,
 * or when its backend reads none of them (`support`, the backend's `batchInputs`). A backend that
 * reads only ragged inputs (identity) answers a batch request by request (its per-request path): the
 * layout then only lets requests whose ragged inputs differ in shape share a batch.
 */
export function batchLayoutOf(config: ModelConfig, support: BatchInputSupport): BatchLayout | undefined {
  const raggedInputs = new Set(config.input.filter((i) => i.allow_ragged_batch).map((i) => i.name));
  if (support === 'ragged') {
    return raggedInputs.size === 0 ? undefined : { raggedInputs, batchInputs: [], scatter: new Map() };
  }
  if (support !== 'all') return undefined;
  if (raggedInputs.size === 0 && config.batch_input.length === 0 && config.batch_output.length === 0) {
    return undefined;
  }
  return { raggedInputs, batchInputs: config.batch_input, scatter: scatterSpecs(config) };
}

/**
 * The key under which requests may share a batch: as `batchCompatibilityKey`, but a ragged input only
 * has to agree on its datatype.
 */
export function raggedCompatibilityKey(
  inputs: ReadonlyMap<string, PackedTensor>,
  layout: BatchLayout,
): string {
  const parts: string[] = [];
  for (const [name, t] of [...inputs.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const dims = layout.raggedInputs.has(name) ? '*' : t.shape.slice(1).join('x');
    parts.push(`${name}\u0000${t.datatype}\u0000${dims}`);
  }
  return parts.join('\u0001');
}

/** The shape of input `name` in each request (it must be in all of them). */
function sourceShapes(requests: readonly ReadonlyMap<string, PackedTensor>[], name: string): number[][] {
  return requests.map((inputs) => {
    const t = inputs.get(name);
    if (t === undefined) {
      throw new ServerError('INTERNAL', `input '${name}' that a batch input or output reads is missing`);
    }
    return [...t.shape];
  });
}

/** The execution's inputs: ragged inputs flattened, the others batched along dim 0, batch inputs added. */
export function layoutInputs(
  requests: readonly ReadonlyMap<string, PackedTensor>[],
  layout: BatchLayout,
): ReadonlyMap<string, PackedTensor> {
  const regular = requests.map((inputs) => {
    const m = new Map(inputs);
    for (const name of layout.raggedInputs) m.delete(name);
    return m;
  });
  const out = new Map(concatInputs(regular));
  for (const name of layout.raggedInputs) {
    const parts = requests
      .map((inputs) => inputs.get(name))
      .filter((t): t is PackedTensor => t !== undefined);
    if (parts.length === 0) continue;
    // Each request's elements as one dimension; concatenated, that dimension is the batch's total.
    const flat = parts.map((t) => new Map([[name, { ...t, shape: raggedShape([t.shape]) }]]));
    out.set(name, concatInputs(flat).get(name) as PackedTensor);
  }
  for (const b of layout.batchInputs) {
    const source = b.source_input[0] as string;
    const shapes = sourceShapes(requests, source);
    for (const target of b.target_name) out.set(target, batchInputTensor(b, target, shapes));
  }
  return out;
}

/** Splits the execution's outputs per request: scattered outputs by their source's shapes, others by rows. */
export function layoutSplitOutputs(
  outputs: ReadonlyMap<string, PackedTensor>,
  requests: readonly ReadonlyMap<string, PackedTensor>[],
  rows: readonly number[],
  layout: BatchLayout,
): ReadonlyMap<string, PackedTensor>[] {
  const regular = new Map([...outputs].filter(([name]) => !layout.scatter.has(name)));
  const parts = splitOutputs(regular, rows).map((m) => new Map(m));
  for (const [name, spec] of layout.scatter) {
    const t = outputs.get(name);
    if (t === undefined) continue;
    const shapes = sourceShapes(requests, spec.source).map((s) => scatteredShape(name, spec, s));
    const needed = shapes.reduce((a, s) => a + product(s), 0);
    if (t.data.length < needed) {
      throw new ServerError(
        'INTERNAL',
        `output '${name}' has ${t.data.length} elements, but scattering it by the shapes of input '${spec.source}' needs ${needed}`,
      );
    }
    let start = 0;
    shapes.forEach((shape, i) => {
      const n = product(shape);
      const data = sliceData(t.data, start, start + n);
      (parts[i] as Map<string, PackedTensor>).set(name, { name, datatype: t.datatype, shape, data });
      start += n;
    });
  }
  return parts;
}
