/**
 * Writes a message value as protobuf text format (what `config.pbtxt` files hold). Scalars at
 * their default are left out; oneof members, set messages, non-empty lists and maps are written.
 * `parseTextFormat(writeTextFormat(v))` gives `v` back.
 * @packageDocumentation
 */
import type { MessageValue } from '../message-values.js';
import type { MessageDescriptor, ScalarType, Schema, ValueType } from '../schema.js';
import { MODEL_CONFIG_SCHEMA, messageDescriptor } from '../schema.js';

/** Renders `value` (a message of type `messageName`) as text format, two-space indented. */
export function writeTextFormat(
  value: MessageValue,
  messageName = 'ModelConfig',
  schema: Schema = MODEL_CONFIG_SCHEMA,
): string {
  const lines: string[] = [];
  writeMessage(schema, messageDescriptor(schema, messageName), value, '', lines);
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

function scalarText(type: ValueType, v: unknown): string {
  if (type.kind === 'enum') return String(v);
  const scalar: ScalarType | undefined = type.kind === 'scalar' ? type.scalar : undefined;
  if (scalar === 'string' || scalar === 'bytes') return JSON.stringify(v);
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'nan';
    if (v === Infinity) return 'inf';
    if (v === -Infinity) return '-inf';
  }
  return String(v);
}

function isDefault(v: unknown): boolean {
  return v === undefined || v === '' || v === 0 || v === false;
}

function writeMessage(
  schema: Schema,
  descriptor: MessageDescriptor,
  value: MessageValue,
  indent: string,
  lines: string[],
): void {
  for (const field of descriptor.fields) {
    const v = value[field.name];
    if (v === undefined) continue;
    const type = field.type;
    if (field.mapKey !== undefined) {
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
        const key = field.mapKey === 'string' ? JSON.stringify(k) : k;
        if (type.kind === 'message') {
          lines.push(`${indent}${field.name} {`, `${indent}  key: ${key}`, `${indent}  value {`);
          writeMessage(
            schema,
            messageDescriptor(schema, type.messageName),
            item as MessageValue,
            `${indent}    `,
            lines,
          );
          lines.push(`${indent}  }`, `${indent}}`);
        } else {
          lines.push(`${indent}${field.name} { key: ${key} value: ${scalarText(type, item)} }`);
        }
      }
    } else if (field.repeated) {
      const items = v as unknown[];
      if (items.length === 0) continue;
      if (type.kind === 'message') {
        lines.push(`${indent}${field.name} [`);
        items.forEach((item, i) => {
          lines.push(`${indent}  {`);
          writeMessage(
            schema,
            messageDescriptor(schema, type.messageName),
            item as MessageValue,
            `${indent}    `,
            lines,
          );
          lines.push(`${indent}  }${i < items.length - 1 ? ',' : ''}`);
        });
        lines.push(`${indent}]`);
      } else {
        lines.push(`${indent}${field.name}: [ ${items.map((x) => scalarText(type, x)).join(', ')} ]`);
      }
    } else if (type.kind === 'message') {
      lines.push(`${indent}${field.name} {`);
      writeMessage(
        schema,
        messageDescriptor(schema, type.messageName),
        v as MessageValue,
        `${indent}  `,
        lines,
      );
      lines.push(`${indent}}`);
    } else {
      const atDefault = type.kind === 'enum' ? isDefaultEnum(schema, type.enumName, v) : isDefault(v);
      if (field.oneof === undefined && atDefault) continue;
      lines.push(`${indent}${field.name}: ${scalarText(type, v)}`);
    }
  }
}

function isDefaultEnum(schema: Schema, enumName: string, v: unknown): boolean {
  const e = schema.enums.get(enumName);
  return e !== undefined && e.values[v as string] === 0;
}
