/**
 * Helpers shared by the text-format parser, the JSON parser and the JSON renderer: proto3 default
 * values, integer ranges, field-path formatting.
 * @packageDocumentation
 */
import type { FieldDescriptor, MessageDescriptor, ScalarType, Schema, ValueType } from './schema.js';
import { enumDescriptor } from './schema.js';

/** A message value: field name → value (scalars, arrays, records, nested messages). */
export type MessageValue = Record<string, unknown>;

const INT_RANGES: Readonly<Record<string, readonly [bigint, bigint]>> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
};

/** True for the integer scalar types. */
export function isIntegerType(scalar: ScalarType): boolean {
  return scalar in INT_RANGES;
}

/**
 * Checks that `value` fits `scalar` and is representable as a JS number without loss.
 * @returns an error message, or `undefined` when the value is acceptable.
 */
export function checkIntegerRange(value: bigint, scalar: ScalarType): string | undefined {
  const range = INT_RANGES[scalar];
  if (range === undefined) return `'${scalar}' is not an integer type`;
  if (value < range[0] || value > range[1]) return `value ${value} is out of range for ${scalar}`;
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    return `value ${value} is larger than tritonserver-ts supports (2^53 - 1)`;
  }
  return undefined;
}

/** The proto3 default of a scalar or enum value (messages have none: unset). */
export function defaultValue(schema: Schema, type: ValueType): unknown {
  if (type.kind === 'enum') {
    const e = enumDescriptor(schema, type.enumName);
    return Object.keys(e.values).find((k) => e.values[k] === 0);
  }
  if (type.kind === 'message') return undefined;
  switch (type.scalar) {
    case 'string':
    case 'bytes':
      return '';
    case 'bool':
      return false;
    default:
      return 0;
  }
}

/** A message with every scalar at its default, repeated fields `[]`, maps `{}`, messages and oneofs unset. */
export function emptyMessage(schema: Schema, descriptor: MessageDescriptor): MessageValue {
  const out: MessageValue = {};
  for (const field of descriptor.fields) {
    if (field.mapKey !== undefined) out[field.name] = {};
    else if (field.repeated) out[field.name] = [];
    else if (field.oneof !== undefined || field.type.kind === 'message') continue;
    else out[field.name] = defaultValue(schema, field.type);
  }
  return out;
}

/** Appends a field name to a path (`input[0]` + `dims` → `input[0].dims`). */
export function joinPath(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

/** Path of a map entry: `parameters["key"]`. */
export function mapEntryPath(path: string, key: string): string {
  return `${path}[${JSON.stringify(key)}]`;
}

/** Human name of a field's type, for error messages. */
export function typeName(field: FieldDescriptor): string {
  const t = field.type;
  const base = t.kind === 'scalar' ? t.scalar : t.kind === 'enum' ? t.enumName : t.messageName;
  if (field.mapKey !== undefined) return `map<${field.mapKey}, ${base}>`;
  return field.repeated ? `repeated ${base}` : base;
}
