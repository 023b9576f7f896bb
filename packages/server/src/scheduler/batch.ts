/**
 * Combining requests into one batch along dim 0, and splitting a batch's outputs back per request.
 *
 * Each input is concatenated with one allocation (a typed array of the total length, or one buffer of
 * BYTES elements); outputs are split as zero-copy views (`subarray`, BYTES: `BytesList.slice`).
 * @packageDocumentation
 */
import {
  BytesList,
  type FixedTensorData,
  type PackedTensor,
  type PackedTensorData,
} from '@tritonserver-ts/protocol';

import { ServerError } from '../common/errors.js';

type FixedArrayCtor = new (length: number) => FixedTensorData;

/** Elements `from` to `to` (exclusive) of tensor data, as a view of the same memory. */
export function sliceData(data: PackedTensorData, from: number, to: number): PackedTensorData {
  return BytesList.isBytesList(data) ? data.slice(from, to) : data.subarray(from, to);
}

/**
 * The key under which requests may share a batch: every input's name, datatype and non-batch dims.
 * Triton only batches requests whose inputs agree on everything but the batch dimension.
 */
export function batchCompatibilityKey(inputs: ReadonlyMap<string, PackedTensor>): string {
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
export function concatInputs(
  requests: readonly ReadonlyMap<string, PackedTensor>[],
): ReadonlyMap<string, PackedTensor> {
  const first = requests[0];
  if (first === undefined) throw new ServerError('INTERNAL', 'cannot form an empty batch');
  if (requests.length === 1) return first;
  const out = new Map<string, PackedTensor>();
  for (const [name, head] of first) {
    const parts: PackedTensor[] = [];
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
    let data: PackedTensorData;
    if (BytesList.isBytesList(head.data)) {
      data = BytesList.concat(parts.map((p) => p.data as BytesList));
    } else {
      const Ctor = head.data.constructor as FixedArrayCtor;
      const all = new Ctor(elements);
      let at = 0;
      for (const p of parts) {
        const src = p.data as FixedTensorData;
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
  outputs: ReadonlyMap<string, PackedTensor>,
  rows: readonly number[],
): ReadonlyMap<string, PackedTensor>[] {
  if (rows.length === 1) return [outputs];
  const total = rows.reduce((a, b) => a + b, 0);
  const result: Map<string, PackedTensor>[] = rows.map(() => new Map<string, PackedTensor>());
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
      (result[i] as Map<string, PackedTensor>).set(name, {
        name,
        datatype: t.datatype,
        shape: [r, ...tail],
        data: sliceData(t.data, from, to),
      });
      start += r;
    }
  }
  return result;
}
