/**
 * The tensor objects of Triton's `TENSORS` trace level, as tritonserver's tracer writes them
 * (`TraceManager::TraceTensorActivity`): one
 * `{"id":<id>,"activity":"<activity>","tensor":{"name","data","shape","dtype"}}` object per tensor,
 * where `shape` is the dims joined by commas and `data` the elements joined by commas, each written
 * as a C++ output stream writes the element type:
 *
 * - FP32 / FP64: `%g`-like, 6 significant digits (`0.1`, `1e-07`, `1.23457e+06`, `inf`, `nan`);
 * - integers in decimal; BOOL as `1` / `0`;
 * - INT8 / UINT8 as the character of the byte (C++ streams `int8_t` / `uint8_t` as `char`);
 * - BYTES as each element between `"` (the file shows `\"…\"`);
 * - FP16 / BF16: nothing (`"data":""`), as Triton.
 *
 * Unlike tritonserver, names and data are JSON-escaped, so the trace file stays valid JSON whatever
 * the bytes (for printable text the output is the same).
 * @packageDocumentation
 */
import { BytesList, type PackedTensor } from '@tritonserver-ts/protocol';

import type { TensorActivity } from '../common/request-trace.js';

/** The tensor activities Triton 2.73 reports: inputs when queued, outputs when a response is sent. */
export type { TensorActivity };

const SIGNIFICANT_DIGITS = 6;

/** A double as `std::ostream << double` writes it by default (`%g`, 6 significant digits). */
export function formatStreamDouble(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const scientific = x.toExponential(SIGNIFICANT_DIGITS - 1);
  const [mantissa, exponentText] = scientific.split('e') as [string, string];
  const exponent = Number(exponentText);
  if (exponent >= -4 && exponent < SIGNIFICANT_DIGITS) {
    return stripZeros(x.toFixed(SIGNIFICANT_DIGITS - 1 - exponent));
  }
  const digits = String(Math.abs(exponent)).padStart(2, '0');
  return `${stripZeros(mantissa)}e${exponent < 0 ? '-' : '+'}${digits}`;
}

function stripZeros(fixed: string): string {
  return fixed.includes('.') ? fixed.replace(/0+$/, '').replace(/\.$/, '') : fixed;
}

const utf8 = new TextDecoder();

/** The `data` text of `tensor` (see the module documentation). */
function dataText(tensor: PackedTensor): string {
  const data = tensor.data;
  if (BytesList.isBytesList(data)) {
    const parts: string[] = [];
    for (const element of data) parts.push(`"${utf8.decode(element)}"`);
    return parts.join(',');
  }
  switch (tensor.datatype) {
    case 'FP16':
    case 'BF16':
      return '';
    case 'FP32':
    case 'FP64':
      return Array.from(data as Float32Array | Float64Array, formatStreamDouble).join(',');
    case 'BOOL':
      return Array.from(data as Uint8Array, (b) => (b === 0 ? '0' : '1')).join(',');
    case 'INT8':
    case 'UINT8':
      return Array.from(data as Int8Array | Uint8Array, (b) => String.fromCharCode(b & 0xff)).join(',');
    default:
      return Array.from(data as ArrayLike<number | bigint>, (v) => String(v)).join(',');
  }
}

/** One tensor object of trace `id` (comma-free; the trace joins its objects with commas). */
export function traceTensorObject(id: number, activity: TensorActivity, tensor: PackedTensor): string {
  const body = {
    name: tensor.name,
    data: dataText(tensor),
    shape: tensor.shape.join(','),
    dtype: tensor.datatype,
  };
  return `{"id":${id},"activity":"${activity}","tensor":${JSON.stringify(body)}}`;
}
