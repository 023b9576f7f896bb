/**
 * Ragged batching (Triton's `allow_ragged_batch`, `batch_input`, `batch_output`), laid out the way
 * Triton's ONNX Runtime backend gives it to a model:
 * - a ragged input is one 1-D tensor of every request's elements, in batch order, so requests whose
 *   shapes differ still share a batch;
 * - each batch input (`target_name`) is computed from its `source_input` over the batch: one value per
 *   batch element for the element counts, `[max count]` for BATCH_MAX_ELEMENT_COUNT_AS_SHAPE, the
 *   shapes for BATCH_ITEM_SHAPE(_FLATTEN);
 * - an output named by a BATCH_SCATTER_WITH_INPUT_SHAPE batch output is cut back per request by the
 *   element counts of its source input and takes that input's shape; other outputs split by batch rows.
 * @packageDocumentation
 */
import type { Tensor, TensorData } from '@tritonserver-ts/client/protocol';

import { ServerError } from '../core/errors.js';
import type { BatchInput, DataType, ModelConfig } from '../repository/model-config.js';
import { concatInputs, splitOutputs } from './batch.js';

/** What of a model's config changes how a batch is laid out. */
export interface BatchLayout {
  readonly raggedInputs: ReadonlySet<string>;
  readonly batchInputs: readonly BatchInput[];
  /** Output name → the input whose per-request shapes it is scattered by. */
  readonly scatter: ReadonlyMap<string, string>;
}

/** The layout of `config`, or `undefined` when it has no ragged input, batch input or batch output. */
export function batchLayoutOf(config: ModelConfig): BatchLayout | undefined {
  const raggedInputs = new Set(config.input.filter((i) => i.allow_ragged_batch).map((i) => i.name));
  if (raggedInputs.size === 0 && config.batch_input.length === 0 && config.batch_output.length === 0) {
    return undefined;
  }
  const scatter = new Map<string, string>();
  for (const b of config.batch_output)
    for (const t of b.target_name) scatter.set(t, b.source_input[0] as string);
  return { raggedInputs, batchInputs: config.batch_input, scatter };
}

/**
 * The key under which requests may share a batch: as {@link batchCompatibilityKey}, but a ragged
 * input only has to agree on its datatype.
 */
export function raggedCompatibilityKey(inputs: ReadonlyMap<string, Tensor>, layout: BatchLayout): string {
  const parts: string[] = [];
  for (const [name, t] of [...inputs.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const dims = layout.raggedInputs.has(name) ? '*' : t.shape.slice(1).join('x');
    parts.push(`${name}\u0000${t.datatype}\u0000${dims}`);
  }
  return parts.join('\u0001');
}

const product = (dims: readonly number[]): number => dims.reduce((a, b) => a * b, 1);

/** Per batch element (every row of every request): the source input's shape without the batch dim. */
function itemShapes(requests: readonly ReadonlyMap<string, Tensor>[], source: string): number[][] {
  const out: number[][] = [];
  for (const inputs of requests) {
    const t = inputs.get(source);
    if (t === undefined) throw new ServerError('INTERNAL', `batch input source '${source}' is missing`);
    const rows = t.shape[0] ?? 1;
    for (let r = 0; r < rows; r++) out.push(t.shape.slice(1));
  }
  return out;
}

function typedArray(type: DataType, values: readonly number[]): TensorData {
  if (type === 'TYPE_INT64') return BigInt64Array.from(values, (v) => BigInt(v));
  if (type === 'TYPE_INT32') return Int32Array.from(values);
  return Float32Array.from(values);
}

function datatypeOf(type: DataType): 'INT64' | 'INT32' | 'FP32' {
  return type === 'TYPE_INT64' ? 'INT64' : type === 'TYPE_INT32' ? 'INT32' : 'FP32';
}

/** One batch input tensor over `requests`. */
export function batchInputTensor(b: BatchInput, requests: readonly ReadonlyMap<string, Tensor>[]): Tensor {
  const name = b.target_name[0] as string;
  const shapes = itemShapes(requests, b.source_input[0] as string);
  const counts = shapes.map(product);
  const datatype = datatypeOf(b.data_type);
  const tensor = (shape: number[], values: number[]): Tensor => ({
    name,
    datatype,
    shape,
    data: typedArray(b.data_type, values),
  });
  switch (b.kind) {
    case 'BATCH_ELEMENT_COUNT':
      return tensor([counts.length], counts);
    case 'BATCH_ACCUMULATED_ELEMENT_COUNT':
    case 'BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO': {
      const sums: number[] = b.kind === 'BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO' ? [0] : [];
      let total = 0;
      for (const c of counts) sums.push((total += c));
      return tensor([sums.length], sums);
    }
    case 'BATCH_MAX_ELEMENT_COUNT_AS_SHAPE': {
      const max = counts.reduce((a, c) => Math.max(a, c), 0);
      return tensor([max], new Array<number>(max).fill(0));
    }
    case 'BATCH_ITEM_SHAPE':
    case 'BATCH_ITEM_SHAPE_FLATTEN': {
      const rank = shapes[0]?.length ?? 0;
      if (shapes.some((s) => s.length !== rank)) {
        throw new ServerError('INVALID_ARG', `batch input '${name}': the items of the batch differ in rank`);
      }
      const flat = shapes.flat();
      return tensor(b.kind === 'BATCH_ITEM_SHAPE' ? [shapes.length, rank] : [flat.length], flat);
    }
  }
}

/** The execution's inputs: ragged inputs flattened, the others batched along dim 0, batch inputs added. */
export function layoutInputs(
  requests: readonly ReadonlyMap<string, Tensor>[],
  layout: BatchLayout,
): ReadonlyMap<string, Tensor> {
  const regular = requests.map((inputs) => {
    const m = new Map(inputs);
    for (const name of layout.raggedInputs) m.delete(name);
    return m;
  });
  const out = new Map(concatInputs(regular));
  for (const name of layout.raggedInputs) {
    const parts = requests.map((inputs) => inputs.get(name)).filter((t): t is Tensor => t !== undefined);
    if (parts.length === 0) continue;
    const flat = concatInputs(parts.map((t) => new Map([[name, { ...t, shape: [product(t.shape)] }]])));
    out.set(name, flat.get(name) as Tensor);
  }
  for (const b of layout.batchInputs) out.set(b.target_name[0] as string, batchInputTensor(b, requests));
  return out;
}

/** Splits the execution's outputs per request: scattered outputs by their source's element counts. */
export function layoutSplitOutputs(
  outputs: ReadonlyMap<string, Tensor>,
  requests: readonly ReadonlyMap<string, Tensor>[],
  rows: readonly number[],
  layout: BatchLayout,
): ReadonlyMap<string, Tensor>[] {
  const regular = new Map([...outputs].filter(([name]) => !layout.scatter.has(name)));
  const parts = splitOutputs(regular, rows).map((m) => new Map(m));
  for (const [name, source] of layout.scatter) {
    const t = outputs.get(name);
    if (t === undefined) continue;
    const shapes = requests.map((inputs) => inputs.get(source)?.shape ?? []);
    const total = shapes.reduce((a, s) => a + product(s), 0);
    const perElement = total === 0 ? 0 : t.data.length / total;
    if (!Number.isInteger(perElement)) {
      throw new ServerError(
        'INTERNAL',
        `output '${name}' has ${t.data.length} elements, not a multiple of the ${total} elements of '${source}' it is scattered by`,
      );
    }
    let start = 0;
    shapes.forEach((shape, i) => {
      const n = product(shape) * perElement;
      const data = Array.isArray(t.data) ? t.data.slice(start, start + n) : t.data.subarray(start, start + n);
      const outShape = perElement === 1 ? [...shape] : [...shape, perElement];
      (parts[i] as Map<string, Tensor>).set(name, { name, datatype: t.datatype, shape: outShape, data });
      start += n;
    });
  }
  return parts;
}
