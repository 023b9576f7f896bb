/**
 * Schema-driven JSON for model configs, both directions:
 *
 * - rendering, as Triton answers `GET v2/models/{m}/config` (protocol.md §2.11): proto field names,
 *   every scalar, repeated and map field printed even at its default, enums as names, maps as
 *   objects, messages and oneof members only when set, int64/uint64 as strings except the fields
 *   Triton rewrites to JSON numbers;
 * - parsing, as Triton reads the `config` parameter of `POST v2/repository/models/{m}/load`:
 *   proto field names or their lowerCamelCase JSON names, case-insensitive enum names (or enum
 *   numbers), numbers given as numbers or numeric strings, `null` = default, unknown fields rejected.
 * @packageDocumentation
 */
import { ModelConfigError } from './errors.js';
import type { FieldDescriptor, MessageDescriptor, ScalarType, Schema, ValueType } from './schema.js';
import { INT64_AS_NUMBER_PATHS, MODEL_CONFIG_SCHEMA, enumDescriptor, messageDescriptor } from './schema.js';
import type { MessageValue } from './message-values.js';
import {
  checkIntegerRange,
  emptyMessage,
  isIntegerType,
  joinPath,
  mapEntryPath,
  typeName,
} from './message-values.js';

const NUMBER_PATHS = new Set(INT64_AS_NUMBER_PATHS);

/** Renders a message value as Triton's JSON (an object ready for `JSON.stringify`). */
export function renderJson(
  value: MessageValue,
  messageName = 'ModelConfig',
  schema: Schema = MODEL_CONFIG_SCHEMA,
): Record<string, unknown> {
  return renderMessage(schema, messageDescriptor(schema, messageName), value, []);
}

function renderMessage(
  schema: Schema,
  descriptor: MessageDescriptor,
  value: MessageValue,
  parent: readonly string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of descriptor.fields) {
    const v = value[field.name];
    const path = [...parent, field.name];
    const asNumber = NUMBER_PATHS.has(path.join('.'));
    if (field.mapKey !== undefined) {
      const obj: Record<string, unknown> = {};
      for (const [k, item] of Object.entries((v ?? {}) as Record<string, unknown>)) {
        obj[k] = renderValue(schema, field.type, item, [...path, '*'], asNumber);
      }
      out[field.name] = obj;
    } else if (field.repeated) {
      out[field.name] = ((v ?? []) as unknown[]).map((item) =>
        renderValue(schema, field.type, item, [...path, '*'], asNumber),
      );
    } else if (v === undefined) {
      if (field.oneof !== undefined || field.type.kind === 'message') continue;
      out[field.name] = renderValue(schema, field.type, defaultOf(schema, field.type), path, asNumber);
    } else {
      out[field.name] = renderValue(schema, field.type, v, path, asNumber);
    }
  }
  return out;
}

function defaultOf(schema: Schema, type: ValueType): unknown {
  return emptyMessage(schema, { name: '', fields: [{ name: 'x', number: 1, type, repeated: false }] }).x;
}

function renderValue(
  schema: Schema,
  type: ValueType,
  v: unknown,
  path: readonly string[],
  asNumber: boolean,
): unknown {
  if (type.kind === 'message') {
    return renderMessage(
      schema,
      messageDescriptor(schema, type.messageName),
      (v ?? {}) as MessageValue,
      path,
    );
  }
  if (type.kind === 'enum') return v;
  switch (type.scalar) {
    case 'int64':
    case 'uint64':
      return asNumber ? v : String(v);
    case 'float':
    case 'double': {
      const n = v as number;
      if (Number.isNaN(n)) return 'NaN';
      if (n === Infinity) return 'Infinity';
      if (n === -Infinity) return '-Infinity';
      return n;
    }
    default:
      return v;
  }
}

/** Options of {@link parseJsonMessage}. */
export interface JsonParseOptions {
  /** Accept enum names in any letter case (Triton does for load overrides). Default true. */
  readonly caseInsensitiveEnums?: boolean;
  /** Prefix of error messages. */
  readonly context?: string;
}

/**
 * Parses a JSON value (already `JSON.parse`d) into a message value with proto3 defaults.
 * @throws ModelConfigError `MODEL_CONFIG_JSON_ERROR`
 */
export function parseJsonMessage(
  json: unknown,
  options: JsonParseOptions = {},
  messageName = 'ModelConfig',
  schema: Schema = MODEL_CONFIG_SCHEMA,
): MessageValue {
  const parser = new JsonParser(
    schema,
    options.caseInsensitiveEnums ?? true,
    options.context ?? 'invalid model config JSON',
  );
  return parser.message(messageDescriptor(schema, messageName), json, '');
}

function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)}`;
}

class JsonParser {
  constructor(
    private readonly schema: Schema,
    private readonly caseInsensitiveEnums: boolean,
    private readonly context: string,
  ) {}

  private fail(message: string, path: string): never {
    throw new ModelConfigError(
      'MODEL_CONFIG_JSON_ERROR',
      `${this.context}: ${message}${path === '' ? '' : ` (field '${path}')`}`,
      path === '' ? {} : { fieldPath: path },
    );
  }

  message(descriptor: MessageDescriptor, json: unknown, path: string): MessageValue {
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      this.fail(`expected an object for message 'inference.${descriptor.name}', got ${kindOf(json)}`, path);
    }
    const msg = emptyMessage(this.schema, descriptor);
    const seen = new Map<string, string>();
    const oneofs = new Map<string, string>();
    for (const [key, raw] of Object.entries(json as Record<string, unknown>)) {
      const field = descriptor.fields.find((f) => f.name === key || camelCase(f.name) === key);
      if (field === undefined)
        this.fail(`message type 'inference.${descriptor.name}' has no field named '${key}'`, path);
      const fieldPath = joinPath(path, field.name);
      const previous = seen.get(field.name);
      if (previous !== undefined)
        this.fail(`field '${field.name}' is given twice ('${previous}' and '${key}')`, fieldPath);
      seen.set(field.name, key);
      if (raw === null) continue;
      if (field.oneof !== undefined) {
        const other = oneofs.get(field.oneof);
        if (other !== undefined) {
          this.fail(
            `field '${field.name}' is specified along with field '${other}', another member of oneof '${field.oneof}'`,
            fieldPath,
          );
        }
        oneofs.set(field.oneof, field.name);
      }
      msg[field.name] = this.fieldValue(field, raw, fieldPath);
    }
    return msg;
  }

  private fieldValue(field: FieldDescriptor, raw: unknown, path: string): unknown {
    if (field.mapKey !== undefined) {
      if (typeof raw !== 'object' || Array.isArray(raw))
        this.fail(`expected an object for ${typeName(field)}, got ${kindOf(raw)}`, path);
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
        const entryPath = mapEntryPath(path, k);
        const key = this.mapKey(field.mapKey, k, entryPath);
        out[key] =
          v === null
            ? emptyMessageOrDefault(this.schema, field.type)
            : this.single(field, field.type, v, entryPath);
      }
      return out;
    }
    if (field.repeated) {
      // protobuf's JSON parser (what Triton reads an override with) takes a single value for a
      // repeated field as a list of one: `"instance_group": { "count": 2 }` is one group.
      if (!Array.isArray(raw)) return [this.single(field, field.type, raw, `${path}[0]`)];
      return raw.map((item, i) => this.single(field, field.type, item, `${path}[${i}]`));
    }
    return this.single(field, field.type, raw, path);
  }

  private mapKey(keyType: ScalarType, k: string, path: string): string {
    if (keyType === 'string') return k;
    if (keyType === 'bool') {
      if (k !== 'true' && k !== 'false') this.fail(`invalid bool map key '${k}'`, path);
      return k;
    }
    if (!/^-?[0-9]+$/.test(k)) this.fail(`invalid ${keyType} map key '${k}'`, path);
    const problem = checkIntegerRange(BigInt(k), keyType);
    if (problem !== undefined) this.fail(problem, path);
    return BigInt(k).toString();
  }

  private single(field: FieldDescriptor, type: ValueType, raw: unknown, path: string): unknown {
    if (type.kind === 'message')
      return this.message(messageDescriptor(this.schema, type.messageName), raw, path);
    if (type.kind === 'enum') return this.enumValue(field, type.enumName, raw, path);
    const scalar = type.scalar;
    if (scalar === 'string' || scalar === 'bytes') {
      if (typeof raw !== 'string')
        this.fail(`expected a string for field '${field.name}', got ${kindOf(raw)}`, path);
      return raw;
    }
    if (scalar === 'bool') {
      if (typeof raw !== 'boolean')
        this.fail(`expected true or false for field '${field.name}', got ${kindOf(raw)}`, path);
      return raw;
    }
    if (isIntegerType(scalar)) {
      let big: bigint;
      if (typeof raw === 'number') {
        if (!Number.isInteger(raw))
          this.fail(`expected an integer for field '${field.name}', got ${raw}`, path);
        if (!Number.isSafeInteger(raw))
          this.fail(`value ${raw} is larger than tritonserver-ts supports (2^53 - 1)`, path);
        big = BigInt(raw);
      } else if (typeof raw === 'string' && /^-?[0-9]+$/.test(raw.trim())) {
        big = BigInt(raw.trim());
      } else {
        return this.fail(`expected an integer for field '${field.name}', got ${kindOf(raw)}`, path);
      }
      const problem = checkIntegerRange(big, scalar);
      if (problem !== undefined) this.fail(problem, path);
      return Number(big);
    }
    // float / double
    if (typeof raw === 'number') return raw;
    if (typeof raw === 'string') {
      if (raw === 'NaN') return NaN;
      if (raw === 'Infinity') return Infinity;
      if (raw === '-Infinity') return -Infinity;
      const n = raw.trim() === '' ? NaN : Number(raw);
      if (!Number.isNaN(n)) return n;
    }
    return this.fail(`expected a number for field '${field.name}', got ${kindOf(raw)}`, path);
  }

  private enumValue(field: FieldDescriptor, enumName: string, raw: unknown, path: string): string {
    const e = enumDescriptor(this.schema, enumName);
    const names = Object.keys(e.values);
    if (typeof raw === 'string') {
      const found = this.caseInsensitiveEnums
        ? names.find((n) => n.toLowerCase() === raw.toLowerCase())
        : names.find((n) => n === raw);
      if (found !== undefined) return found;
      return this.fail(
        `unknown enumeration value '${raw}' for field '${field.name}' (expected one of ${names.join(', ')})`,
        path,
      );
    }
    if (typeof raw === 'number') {
      const found = names.find((n) => e.values[n] === raw);
      if (found !== undefined) return found;
    }
    return this.fail(`invalid value ${kindOf(raw)} for enum field '${field.name}'`, path);
  }
}

function emptyMessageOrDefault(schema: Schema, type: ValueType): unknown {
  if (type.kind === 'message') return emptyMessage(schema, messageDescriptor(schema, type.messageName));
  return defaultOf(schema, type);
}
