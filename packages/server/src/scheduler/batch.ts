/**
 * Combining requests into one batch along dim 0, and splitting a batch's outputs back per request.
 *
 * Each input is concatenated with one allocation (a typed array of the total length, or one array of
 * BYTES element references); outputs are split as zero-copy `subarray` views (BYTES: one `slice` of
 * element references per request).
 * @packageDocumentation
 */
import type { Tensor, TensorData } from '@tritonserver-ts/client/protocol';

import { ServerError } from '../core/errors.js';

type FixedArray = Exclude<TensorData, Uint8Array[]>;
type FixedArrayCtor = new (length: number) => FixedArray;

/**
 * The key under which requests may share a batch: every input's name, datatype and non-batch dims.
 * Triton only batches requests whose inputs agree on everything but the batch dimension.
 */
export function batchCompatibilityKey(inputs: ReadonlyMap<string, Tensor>): string {
  const parts: string[] = [];
  for (const [name, t] of [...inputs.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    parts.push(`${name}\u0000${t.datatype}\u0000${t.shape.slice(1).join('x')}`);
  }
  return parts.join('\u0001');
}

/**
 * Concatenates the inputs of `requests` along dim 0. Every request must carry the same input names,
 * datatypes and non-batch dims (see {@link batchCompatibilityKey}). A single request is passed through
 * untouched.
 */
export function concatInputs(requests: readonly ReadonlyMap<string, Tensor>[]): ReadonlyMap<string, Tensor> {
  const first = requests[0];
  if (first === undefined) throw new ServerError('INTERNAL', 'cannot form an empty batch');
  if (requests.length === 1) return first;
  const out = new Map<string, Tensor>();
  for (const [name, head] of first) {
    const parts: Tensor[] = [];
    let rows = 0;
    let elements = 0;
    for (const inputs of requests) {
      const t = inputs.get(name);
      if (t === undefined || t.datatype !== head.datatype) {
        throw new ServerError('INTERNAL', `cannot batch requests: input '${name}' differs between requests`);
      }
      parts.push(t);
      rows += t.shape[0] ?? 0;
      elements += t.data.length;
    }
    const shape = [rows, ...head.shape.slice(1)];
    let data: TensorData;
    if (Array.isArray(head.data)) {
      const all: Uint8Array[] = new Array<Uint8Array>(elements);
      let at = 0;
      for (const p of parts) {
        for (const e of p.data as Uint8Array[]) all[at++] = e;
      }
      data = all;
    } else {
      const Ctor = head.data.constructor as FixedArrayCtor;
      const all = new Ctor(elements);
      let at = 0;
      for (const p of parts) {
        const src = p.data as FixedArray;
        (all as { set(a: ArrayLike<number | bigint>, offset: number): void }).set(src, at);
        at += src.length;
      }
      data = all;
    }
    out.set(name, { name, datatype: head.datatype, shape, data });
  }
  return out;
}

/**
 * Splits each output along dim 0 into `rows[i]` rows for request i. Every output must have
 * `sum(rows)` rows. A single request gets the outputs untouched.
 */
export function splitOutputs(
  outputs: ReadonlyMap<string, Tensor>,
  rows: readonly number[],
): ReadonlyMap<string, Tensor>[] {
  if (rows.length === 1) return [outputs];
  const total = rows.reduce((a, b) => a + b, 0);
  const result: Map<string, Tensor>[] = rows.map(() => new Map<string, Tensor>());
  for (const [name, t] of outputs) {
    const batch = t.shape[0];
    if (batch !== total) {
      throw new ServerError(
        'INTERNAL',
        `output '${name}' has ${batch ?? 'no'} rows in dim 0 but the batch has ${total}; cannot split it per request`,
      );
    }
    const perRow = total === 0 ? 0 : t.data.length / total;
    const tail = t.shape.slice(1);
    let start = 0;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i] ?? 0;
      const from = start * perRow;
      const to = (start + r) * perRow;
      const data = Array.isArray(t.data) ? t.data.slice(from, to) : t.data.subarray(from, to);
      (result[i] as Map<string, Tensor>).set(name, {
        name,
        datatype: t.datatype,
        shape: [r, ...tail],
        data,
      });
      start += r;
    }
  }
  return result;
}
