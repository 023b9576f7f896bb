/**
 * A model configuration as `config.pbtxt` (protobuf text format), written from its JSON by walking
 * the `inference.ModelConfig` descriptor (`ModelConfigSchema` of `@tritonserver-ts/protocol/grpc`):
 * fields in declaration order, only those set (proto3 defaults left out, as protobuf's printer
 * does), enums by name, strings quoted and escaped, nested messages in braces, repeated scalars as
 * `[ a, b ]`, repeated messages as `[ { … }, { … } ]`, maps as one `{ key: … value: … }` entry per key.
 * @packageDocumentation
 */
import type { DescField, DescMessage } from '@bufbuild/protobuf';
import { fromJson, ScalarType } from '@bufbuild/protobuf';
import type { ReflectMessage } from '@bufbuild/protobuf/reflect';
import { reflect } from '@bufbuild/protobuf/reflect';
import { ModelConfigSchema } from '@tritonserver-ts/protocol/grpc';

import { PerfError } from '../errors.js';

const INDENT = '  ';

/** A text-format string literal (UTF-8 kept; quotes, backslashes and control characters escaped). */
export function quoteText(value: string): string {
  let out = '"';
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\${code.toString(8).padStart(3, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

function quoteBytes(value: Uint8Array): string {
  let out = '"';
  for (const b of value) {
    if (b === 0x22) out += '\\"';
    else if (b === 0x5c) out += '\\\\';
    else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
    else out += `\\${b.toString(8).padStart(3, '0')}`;
  }
  return `${out}"`;
}

function scalarText(type: ScalarType, value: unknown): string {
  switch (type) {
    case ScalarType.STRING:
      return quoteText(String(value));
    case ScalarType.BYTES:
      return quoteBytes(value as Uint8Array);
    case ScalarType.BOOL:
      return value === true ? 'true' : 'false';
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE: {
      const n = Number(value);
      if (Number.isNaN(n)) return 'nan';
      if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
      return String(n);
    }
    default:
      return String(value);
  }
}

function enumText(
  field: DescField & { enum: { value: Record<number, { name: string } | undefined> } },
  n: number,
): string {
  return field.enum.value[n]?.name ?? String(n);
}

function messageLines(message: ReflectMessage, depth: number): string[] {
  const pad = INDENT.repeat(depth);
  const lines: string[] = [];
  for (const field of message.fields) {
    if (!message.isSet(field)) continue;
    switch (field.fieldKind) {
      case 'scalar':
        lines.push(`${pad}${field.name}: ${scalarText(field.scalar, message.get(field))}`);
        break;
      case 'enum':
        lines.push(`${pad}${field.name}: ${enumText(field, message.get(field))}`);
        break;
      case 'message':
        lines.push(...block(field.name, message.get(field), depth));
        break;
      case 'list': {
        const list = message.get(field);
        if (field.listKind === 'message') {
          lines.push(`${pad}${field.name} [`);
          const items = [...list] as ReflectMessage[];
          items.forEach((item, i) => {
            const body = block('', item, depth + 1);
            if (i < items.length - 1) body[body.length - 1] += ',';
            lines.push(...body);
          });
          lines.push(`${pad}]`);
        } else {
          const values = [...list].map((v) =>
            field.listKind === 'enum' ? enumText(field, v as number) : scalarText(field.scalar, v),
          );
          lines.push(`${pad}${field.name}: [ ${values.join(', ')} ]`);
        }
        break;
      }
      case 'map': {
        const map = message.get(field);
        for (const [key, value] of map) {
          lines.push(`${pad}${field.name} {`);
          lines.push(`${pad}${INDENT}key: ${scalarText(field.mapKey, key)}`);
          if (field.mapKind === 'message') {
            lines.push(...block('value', value as ReflectMessage, depth + 1));
          } else if (field.mapKind === 'enum') {
            lines.push(`${pad}${INDENT}value: ${enumText(field, value as number)}`);
          } else {
            lines.push(`${pad}${INDENT}value: ${scalarText(field.scalar, value)}`);
          }
          lines.push(`${pad}}`);
        }
        break;
      }
    }
  }
  return lines;
}

/** `label {` … `}` at `depth` (`label { }` when nothing is set; no label for a list item). */
function block(label: string, message: ReflectMessage, depth: number): string[] {
  const pad = INDENT.repeat(depth);
  const head = label === '' ? pad : `${pad}${label} `;
  const body = messageLines(message, depth + 1);
  if (body.length === 0) return [`${head}{ }`];
  return [`${head}{`, ...body, `${pad}}`];
}

/** Text format of any message of `schema` given as protobuf JSON (proto or JSON field names). */
export function writeTextFormat(schema: DescMessage, json: unknown): string {
  let message;
  try {
    message = fromJson(schema, json as Parameters<typeof fromJson>[1]);
  } catch (error) {
    throw new PerfError(
      'TUNE',
      `the configuration cannot be written as ${schema.typeName}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const lines = messageLines(reflect(schema, message), 0);
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/**
 * `config.pbtxt` text of a model configuration given as Triton's JSON (what `getModelConfig`
 * returns). @throws PerfError `TUNE` when the JSON is not an `inference.ModelConfig`
 */
export function writeModelConfigPbtxt(config: Record<string, unknown>): string {
  return writeTextFormat(ModelConfigSchema, config);
}
