/**
 * A schema-driven protobuf text-format parser (the syntax of Triton's `config.pbtxt`).
 *
 * Supported: `#` comments; `field: value`; `field { … }`, `field: { … }` and `< … >`; lists
 * `field: [a, b]` and `field [ { … }, { … } ]`; repeated fields given several times; strings in
 * single or double quotes with C escapes (adjacent strings concatenate); negative numbers, hex and
 * octal integers, floats (with `f` suffix, `inf`, `nan`); enum names or numbers; bools
 * (`true`/`True`/`t`/`1`, `false`/`False`/`f`/`0`); map fields as `{ key: … value: … }` entries;
 * oneofs (a second member is an error); optional `,`/`;` separators between fields.
 *
 * Unknown fields, duplicate singular fields and bad values are rejected with a
 * {@link ModelConfigError} (`MODEL_CONFIG_PARSE_ERROR`) naming the file, line, column and field.
 * Extensions and `Any` expansions (`[type.url] { … }`) are not supported.
 * @packageDocumentation
 */
import { ModelConfigError } from '../errors.js';
import type { FieldDescriptor, MessageDescriptor, Schema } from '../schema.js';
import { MODEL_CONFIG_SCHEMA, enumDescriptor, messageDescriptor } from '../schema.js';
import type { MessageValue } from '../message-values.js';
import { checkIntegerRange, emptyMessage, joinPath } from '../message-values.js';
import type { Token } from './tokenizer.js';
import { TokenizeError, tokenize } from './tokenizer.js';

/** Options of {@link parseTextFormat}. */
export interface TextFormatOptions {
  /** File name used in error messages. */
  readonly file?: string;
  /** Root message (default `ModelConfig`). */
  readonly messageName?: string;
  /** Schema (default the model-config schema). */
  readonly schema?: Schema;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses protobuf text format into a message value (proto3 defaults filled in).
 * @throws ModelConfigError `MODEL_CONFIG_PARSE_ERROR`
 */
export function parseTextFormat(text: string, options: TextFormatOptions = {}): MessageValue {
  const schema = options.schema ?? MODEL_CONFIG_SCHEMA;
  let tokens: Token[];
  try {
    tokens = tokenize(text);
  } catch (err) {
    if (err instanceof TokenizeError) {
      throw parseError(options.file, err.line, err.column, err.message, undefined);
    }
    throw err;
  }
  const parser = new TextParser(tokens, schema, options.file);
  return parser.parseRoot(messageDescriptor(schema, options.messageName ?? 'ModelConfig'));
}

function parseError(
  file: string | undefined,
  line: number,
  column: number,
  message: string,
  fieldPath: string | undefined,
): ModelConfigError {
  const where = `${file === undefined ? '' : `${file}:`}${line}:${column}`;
  const suffix = fieldPath === undefined || fieldPath === '' ? '' : ` (field '${fieldPath}')`;
  return new ModelConfigError('MODEL_CONFIG_PARSE_ERROR', `${where}: ${message}${suffix}`, {
    location: { ...(file === undefined ? {} : { file }), line, column },
    ...(fieldPath === undefined || fieldPath === '' ? {} : { fieldPath }),
  });
}

class TextParser {
  private pos = 0;

  constructor(
    private readonly tokens: readonly Token[],
    private readonly schema: Schema,
    private readonly file: string | undefined,
  ) {}

  parseRoot(descriptor: MessageDescriptor): MessageValue {
    return this.parseBody(descriptor, '', undefined);
  }

  private peek(): Token {
    return this.tokens[this.pos] as Token;
  }

  private next(): Token {
    const t = this.tokens[this.pos] as Token;
    if (t.kind !== 'end') this.pos++;
    return t;
  }

  private isSymbol(t: Token, s: string): boolean {
    return t.kind === 'symbol' && t.text === s;
  }

  private fail(token: Token, message: string, fieldPath?: string): never {
    throw parseError(this.file, token.line, token.column, message, fieldPath);
  }

  private describe(t: Token): string {
    return t.kind === 'end' ? 'end of file' : `'${t.text}'`;
  }

  /** Parses fields until `closing` (or end of input for the root). */
  private parseBody(descriptor: MessageDescriptor, path: string, closing: string | undefined): MessageValue {
    const msg = emptyMessage(this.schema, descriptor);
    const seen = new Set<string>();
    const oneofs = new Map<string, string>();
    for (;;) {
      const t = this.peek();
      if (closing === undefined && t.kind === 'end') return msg;
      if (closing !== undefined && this.isSymbol(t, closing)) {
        this.next();
        return msg;
      }
      if (t.kind === 'end') this.fail(t, `unexpected end of file: expected '${closing ?? ''}'`, path);
      if (this.isSymbol(t, '[')) this.fail(t, 'extension and Any fields are not supported', path);
      if (t.kind !== 'identifier') this.fail(t, `expected a field name, got ${this.describe(t)}`, path);
      this.next();
      const field = descriptor.fields.find((f) => f.name === t.text);
      const fieldPath = joinPath(path, t.text);
      if (field === undefined) {
        this.fail(t, `message type 'inference.${descriptor.name}' has no field named '${t.text}'`, path);
      }
      if (field.oneof !== undefined) {
        const other = oneofs.get(field.oneof);
        if (other !== undefined && other !== field.name) {
          this.fail(
            t,
            `field '${field.name}' is specified along with field '${other}', another member of oneof '${field.oneof}'`,
            fieldPath,
          );
        }
        oneofs.set(field.oneof, field.name);
      }
      if (!field.repeated && field.mapKey === undefined) {
        if (seen.has(field.name))
          this.fail(t, `non-repeated field '${field.name}' is specified multiple times`, fieldPath);
        seen.add(field.name);
      }
      this.parseField(msg, field, fieldPath);
      const sep = this.peek();
      if (this.isSymbol(sep, ',') || this.isSymbol(sep, ';')) this.next();
    }
  }

  private parseField(msg: MessageValue, field: FieldDescriptor, fieldPath: string): void {
    const isMessageLike = field.type.kind === 'message' || field.mapKey !== undefined;
    let t = this.peek();
    if (isMessageLike) {
      if (this.isSymbol(t, ':')) {
        this.next();
        t = this.peek();
      }
    } else {
      if (!this.isSymbol(t, ':'))
        this.fail(t, `expected ':' after field name '${field.name}', got ${this.describe(t)}`, fieldPath);
      this.next();
      t = this.peek();
    }
    const repeatable = field.repeated || field.mapKey !== undefined;
    if (this.isSymbol(t, '[')) {
      if (!repeatable)
        this.fail(t, `field '${field.name}' is not repeated and cannot take a list`, fieldPath);
      this.next();
      if (this.isSymbol(this.peek(), ']')) {
        this.next();
        return;
      }
      for (;;) {
        this.parseOneValue(msg, field, fieldPath, isMessageLike);
        const sep = this.next();
        if (this.isSymbol(sep, ']')) return;
        if (!this.isSymbol(sep, ','))
          this.fail(sep, `expected ',' or ']' in list, got ${this.describe(sep)}`, fieldPath);
      }
    }
    this.parseOneValue(msg, field, fieldPath, isMessageLike);
  }

  private parseOneValue(
    msg: MessageValue,
    field: FieldDescriptor,
    fieldPath: string,
    isMessageLike: boolean,
  ): void {
    if (field.mapKey !== undefined) {
      const record = msg[field.name] as Record<string, unknown>;
      const entryDescriptor: MessageDescriptor = {
        name: `${field.name}Entry`,
        fields: [
          { name: 'key', number: 1, type: { kind: 'scalar', scalar: field.mapKey }, repeated: false },
          { name: 'value', number: 2, type: field.type, repeated: false },
        ],
      };
      const entry = this.parseMessageValue(entryDescriptor, fieldPath);
      const key = String(entry.key);
      let value = entry.value;
      if (value === undefined && field.type.kind === 'message') {
        value = emptyMessage(this.schema, messageDescriptor(this.schema, field.type.messageName));
      }
      record[key] = value;
      return;
    }
    const value = isMessageLike
      ? this.parseMessageValue(
          messageDescriptor(this.schema, (field.type as { messageName: string }).messageName),
          field.repeated ? `${fieldPath}[${(msg[field.name] as unknown[]).length}]` : fieldPath,
        )
      : this.parseScalar(
          field,
          field.repeated ? `${fieldPath}[${(msg[field.name] as unknown[]).length}]` : fieldPath,
        );
    if (field.repeated) (msg[field.name] as unknown[]).push(value);
    else msg[field.name] = value;
  }

  private parseMessageValue(descriptor: MessageDescriptor, path: string): MessageValue {
    const open = this.next();
    if (this.isSymbol(open, '{')) return this.parseBody(descriptor, path, '}');
    if (this.isSymbol(open, '<')) return this.parseBody(descriptor, path, '>');
    return this.fail(open, `expected '{' to start a message value, got ${this.describe(open)}`, path);
  }

  private parseScalar(field: FieldDescriptor, path: string): unknown {
    const type = field.type;
    const first = this.peek();
    if (type.kind === 'enum') {
      const e = enumDescriptor(this.schema, type.enumName);
      if (first.kind === 'identifier') {
        this.next();
        if (e.values[first.text] === undefined) {
          this.fail(
            first,
            `unknown enumeration value '${first.text}' for field '${field.name}' (expected one of ${Object.keys(e.values).join(', ')})`,
            path,
          );
        }
        return first.text;
      }
      const n = this.readInteger(field, path, true);
      const name = Object.keys(e.values).find((k) => BigInt(e.values[k] as number) === n);
      if (name === undefined)
        this.fail(first, `unknown enumeration number ${n} for field '${field.name}'`, path);
      return name;
    }
    if (type.kind !== 'scalar') return this.fail(first, 'internal error: not a scalar field', path);
    switch (type.scalar) {
      case 'string':
      case 'bytes': {
        if (first.kind !== 'string')
          this.fail(first, `expected a string for field '${field.name}', got ${this.describe(first)}`, path);
        const parts: Uint8Array[] = [];
        while (this.peek().kind === 'string') parts.push(this.next().bytes ?? new Uint8Array());
        const all = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
        let off = 0;
        for (const p of parts) {
          all.set(p, off);
          off += p.length;
        }
        try {
          return utf8.decode(all);
        } catch {
          return this.fail(first, `string value of field '${field.name}' is not valid UTF-8`, path);
        }
      }
      case 'bool': {
        this.next();
        if (first.kind === 'identifier') {
          if (['true', 'True', 't'].includes(first.text)) return true;
          if (['false', 'False', 'f'].includes(first.text)) return false;
        }
        if (first.kind === 'number' && (first.text === '1' || first.text === '0')) return first.text === '1';
        return this.fail(
          first,
          `invalid value for bool field '${field.name}': ${this.describe(first)}`,
          path,
        );
      }
      case 'float':
      case 'double':
        return this.readFloat(field, path);
      default: {
        const n = this.readInteger(field, path, type.scalar === 'int32' || type.scalar === 'int64');
        const problem = checkIntegerRange(n, type.scalar);
        if (problem !== undefined) {
          // protobuf's TextFormat wording for a value its type cannot hold leads.
          const lead = / is out of range for /.test(problem) ? `Integer out of range (${n}): ` : '';
          this.fail(first, `${lead}${problem} (field '${field.name}')`, path);
        }
        return Number(n);
      }
    }
  }

  private readInteger(field: FieldDescriptor, path: string, signed: boolean): bigint {
    const first = this.next();
    let negative = false;
    let t = first;
    if (this.isSymbol(t, '-')) {
      // protobuf's TextFormat wording first (what tritonserver logs), then which field.
      if (!signed)
        this.fail(t, `Expected integer, got: - (negative value for unsigned field '${field.name}')`, path);
      negative = true;
      t = this.next();
    }
    if (t.kind !== 'number') {
      const got = t.kind === 'end' ? 'end of file' : t.text;
      this.fail(
        t,
        `Expected integer, got: ${got} (expected an integer for field '${field.name}', got ${this.describe(t)})`,
        path,
      );
    }
    const text = t.text;
    let value: bigint;
    if (/^0[xX][0-9A-Fa-f]+$/.test(text)) value = BigInt(text);
    else if (/^0[0-7]+$/.test(text)) value = BigInt(`0o${text.slice(1)}`);
    else if (/^[0-9]+$/.test(text)) value = BigInt(text);
    else {
      return this.fail(
        t,
        `Expected integer, got: ${text} (expected an integer for field '${field.name}', got '${text}')`,
        path,
      );
    }
    return negative ? -value : value;
  }

  private readFloat(field: FieldDescriptor, path: string): number {
    let t = this.next();
    let sign = 1;
    if (this.isSymbol(t, '-')) {
      sign = -1;
      t = this.next();
    }
    if (t.kind === 'identifier') {
      const lower = t.text.toLowerCase();
      if (lower === 'inf' || lower === 'infinity') return sign * Infinity;
      if (lower === 'nan') return NaN;
    }
    if (t.kind !== 'number')
      this.fail(t, `expected a number for field '${field.name}', got ${this.describe(t)}`, path);
    const hex = /^0[xX]/.test(t.text);
    const v = hex ? Number.parseInt(t.text, 16) : Number(t.text.replace(/[fF]$/, ''));
    if (Number.isNaN(v)) this.fail(t, `invalid number '${t.text}' for field '${field.name}'`, path);
    return sign * v;
  }
}
