/**
 * The classification extension's string format: `"<value>:<index>"` or `"<value>:<index>:<label>"`,
 * sorted by value descending, where `<value>` is C++ `std::to_string` of the element — `%f` (six
 * decimals, round half to even on the exact binary value) for FP32/FP64, a plain integer for
 * integer datatypes.
 * @packageDocumentation
 */
import type { Datatype, TensorData } from './datatypes.js';
import { ProtocolError } from './errors.js';

/** Datatypes the classification extension supports. */
export const CLASSIFICATION_DATATYPES: readonly Datatype[] = [
  'UINT8',
  'UINT16',
  'UINT32',
  'UINT64',
  'INT8',
  'INT16',
  'INT32',
  'INT64',
  'FP32',
  'FP64',
];

/** Formats a number like C's `printf("%f")`: six decimals, `inf`, `-inf`, `nan`, `-0.000000`. */
export function formatFixed6(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  const negative = value < 0 || Object.is(value, -0);
  const abs = Math.abs(value);
  let text: string;
  if (abs >= 1e21) {
    text = `${BigInt(abs).toString()}.000000`;
  } else if (Number.isInteger(abs * 128) && abs.toFixed(7).endsWith('5')) {
    // An exact tie at the 7th decimal (only values with few binary fraction digits can be one):
    // toFixed rounds half up, printf rounds half to even.
    const seven = abs.toFixed(7);
    const truncated = seven.slice(0, -1);
    const lastDigit = Number(truncated.at(-1));
    text = lastDigit % 2 === 0 ? truncated : abs.toFixed(6);
  } else {
    text = abs.toFixed(6);
  }
  return negative ? `-${text}` : text;
}

/** Formats one classification value the way Triton does for `datatype`. */
export function formatClassificationValue(value: number | bigint, datatype: Datatype): string {
  if (datatype === 'FP32' || datatype === 'FP64') return formatFixed6(Number(value));
  return BigInt(value).toString();
}

/** Formats one classification entry: `value:index` or `value:index:label`. */
export function formatClassificationEntry(
  value: number | bigint,
  index: number,
  datatype: Datatype,
  label?: string,
): string {
  const head = `${formatClassificationValue(value, datatype)}:${index}`;
  return label === undefined ? head : `${head}:${label}`;
}

/** A parsed classification entry. */
export interface ClassificationEntry {
  readonly value: number;
  readonly index: number;
  readonly label?: string;
}

/**
 * Parses `value:index[:label]` (a label may itself contain `:`).
 * @throws ProtocolError `INVALID_VALUE` on a malformed entry.
 */
export function parseClassificationEntry(entry: string): ClassificationEntry {
  const first = entry.indexOf(':');
  const second = first < 0 ? -1 : entry.indexOf(':', first + 1);
  const valueText = first < 0 ? '' : entry.slice(0, first);
  const indexText = second < 0 ? entry.slice(first + 1) : entry.slice(first + 1, second);
  const value = Number(valueText);
  const index = Number(indexText);
  if (
    first < 0 ||
    valueText === '' ||
    !/^\d+$/.test(indexText) ||
    (Number.isNaN(value) && valueText !== 'nan')
  ) {
    throw new ProtocolError('INVALID_VALUE', `malformed classification entry '${entry}'`);
  }
  return second < 0 ? { value, index } : { value, index, label: entry.slice(second + 1) };
}

/**
 * Top-`k` classification strings of one row of scores (one batch item), sorted by value
 * descending, ties by lower index first. `labels[i]` names class `i` when given.
 * @throws ProtocolError `UNSUPPORTED_CLASSIFICATION` for FP16, BF16, BOOL and BYTES (Triton's
 *   "class result not available for output due to unsupported type 'BYTES'", `classification.cc`).
 */
export function classifyRow(
  datatype: Datatype,
  row: TensorData,
  k: number,
  labels?: readonly string[],
): string[] {
  if (!CLASSIFICATION_DATATYPES.includes(datatype)) {
    throw new ProtocolError(
      'UNSUPPORTED_CLASSIFICATION',
      `class result not available for output due to unsupported type '${datatype}'`,
    );
  }
  const values = row as ArrayLike<number | bigint>;
  const indices = Array.from({ length: values.length }, (_, i) => i);
  indices.sort((a, b) => {
    const va = values[a] as number | bigint;
    const vb = values[b] as number | bigint;
    return va > vb ? -1 : va < vb ? 1 : a - b;
  });
  return indices
    .slice(0, Math.min(k, indices.length))
    .map((i) => formatClassificationEntry(values[i] as number | bigint, i, datatype, labels?.[i]));
}
