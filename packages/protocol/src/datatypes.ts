/**
 * Tensor datatypes as the KServe v2 / Triton protocol spells them, and how each maps to memory.
 * @packageDocumentation
 */

/** Every tensor datatype of the protocol (protocol strings, not model-config enum names). */
export const DATATYPES = [
  'BOOL',
  'UINT8',
  'UINT16',
  'UINT32',
  'UINT64',
  'INT8',
  'INT16',
  'INT32',
  'INT64',
  'FP16',
  'FP32',
  'FP64',
  'BF16',
  'BYTES',
] as const;

/** A protocol datatype string, e.g. `'FP32'` or `'BYTES'`. */
export type Datatype = (typeof DATATYPES)[number];

/** Datatypes with a fixed element size (all but `BYTES`). */
export type FixedSizeDatatype = Exclude<Datatype, 'BYTES'>;

/**
 * The in-memory representation of each datatype.
 *
 * - `BOOL` is one byte per element (0 or 1), as on the wire.
 * - `FP16` and `BF16` hold the raw 16-bit patterns; see the conversion helpers in this module.
 * - 64-bit integers use `BigInt64Array` / `BigUint64Array` so no value silently loses precision.
 * - `BYTES` is one `Uint8Array` per element (use the string helpers for UTF-8 text).
 */
export interface DatatypeArrayMap {
  BOOL: Uint8Array;
  UINT8: Uint8Array;
  UINT16: Uint16Array;
  UINT32: Uint32Array;
  UINT64: BigUint64Array;
  INT8: Int8Array;
  INT16: Int16Array;
  INT32: Int32Array;
  INT64: BigInt64Array;
  FP16: Uint16Array;
  FP32: Float32Array;
  FP64: Float64Array;
  BF16: Uint16Array;
  BYTES: Uint8Array[];
}

/** Data of a tensor of datatype `D`. */
export type TensorData<D extends Datatype = Datatype> = DatatypeArrayMap[D];

/** Bytes per element of each fixed-size datatype. */
export const DATATYPE_BYTE_SIZE: Readonly<Record<FixedSizeDatatype, number>> = {
  BOOL: 1,
  UINT8: 1,
  UINT16: 2,
  UINT32: 4,
  UINT64: 8,
  INT8: 1,
  INT16: 2,
  INT32: 4,
  INT64: 8,
  FP16: 2,
  FP32: 4,
  FP64: 8,
  BF16: 2,
};

/** Model-config `DataType` enum names (`TYPE_*`) and numbers, as in `config.pbtxt`. */
export const MODEL_CONFIG_DATATYPES = {
  TYPE_INVALID: 0,
  TYPE_BOOL: 1,
  TYPE_UINT8: 2,
  TYPE_UINT16: 3,
  TYPE_UINT32: 4,
  TYPE_UINT64: 5,
  TYPE_INT8: 6,
  TYPE_INT16: 7,
  TYPE_INT32: 8,
  TYPE_INT64: 9,
  TYPE_FP16: 10,
  TYPE_FP32: 11,
  TYPE_FP64: 12,
  TYPE_STRING: 13,
  TYPE_BF16: 14,
} as const;

/** A model-config datatype enum name such as `'TYPE_FP32'` or `'TYPE_STRING'`. */
export type ModelConfigDatatype = keyof typeof MODEL_CONFIG_DATATYPES;

/** True when `value` is a protocol datatype string. */
export function isDatatype(value: unknown): value is Datatype {
  return typeof value === 'string' && (DATATYPES as readonly string[]).includes(value);
}

/**
 * Converts a model-config enum name to the protocol string (`TYPE_STRING` → `BYTES`).
 * @returns `undefined` for `TYPE_INVALID` or an unknown name.
 */
export function datatypeFromModelConfig(name: string): Datatype | undefined {
  if (name === 'TYPE_STRING') return 'BYTES';
  if (!name.startsWith('TYPE_')) return undefined;
  const stripped = name.slice('TYPE_'.length);
  return isDatatype(stripped) && stripped !== 'BYTES' ? stripped : undefined;
}

/** Converts a protocol datatype to its model-config enum name (`BYTES` → `TYPE_STRING`). */
export function datatypeToModelConfig(datatype: Datatype): ModelConfigDatatype {
  return datatype === 'BYTES' ? 'TYPE_STRING' : (`TYPE_${datatype}` as ModelConfigDatatype);
}
