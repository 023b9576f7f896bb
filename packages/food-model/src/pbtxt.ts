/**
 * A minimal protobuf text-format reader (enough for Triton's config.pbtxt): messages become
 * objects, every field becomes an array of its occurrences (repeated or not), scalars stay strings
 * or numbers, enums stay identifiers.
 */
export type PbValue = string | number | PbMessage;
export interface PbMessage {
  [field: string]: PbValue[];
}

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  const re = /\s+|#[^\n]*|("(?:[^"\\]|\\.)*")|([{}[\]:,<>])|([^\s{}[\]:,<>"#]+)/gy;
  let m: RegExpExecArray | null;
  while (re.lastIndex < text.length && (m = re.exec(text)) !== null) {
    const tok = m[1] ?? m[2] ?? m[3];
    if (tok !== undefined) tokens.push(tok);
  }
  return tokens;
}

/** Parses protobuf text format. Throws on malformed input. */
export function parsePbtxt(text: string): PbMessage {
  const tokens = tokenize(text);
  let pos = 0;
  const peek = (): string | undefined => tokens[pos];
  const next = (): string => {
    const t = tokens[pos++];
    if (t === undefined) throw new Error('unexpected end of pbtxt');
    return t;
  };
  const scalar = (t: string): PbValue => {
    if (t.startsWith('"')) return JSON.parse(t) as string;
    const n = Number(t);
    return Number.isFinite(n) && /^[-+0-9.]/.test(t) ? n : t;
  };
  const value = (): PbValue => {
    const t = next();
    if (t === '{' || t === '<') return message(t === '{' ? '}' : '>');
    return scalar(t);
  };
  function message(end: string | undefined): PbMessage {
    const msg: PbMessage = {};
    while (peek() !== end) {
      if (peek() === undefined) throw new Error(`missing '${end ?? ''}'`);
      const field = next();
      if (peek() === ':') next();
      const values: PbValue[] = [];
      if (peek() === '[') {
        next();
        while (peek() !== ']') {
          values.push(value());
          if (peek() === ',') next();
        }
        next();
      } else values.push(value());
      msg[field] = [...(msg[field] ?? []), ...values];
      if (peek() === ',' || peek() === ';') next();
    }
    if (end !== undefined) next();
    return msg;
  }
  return message(undefined);
}

/** The single value of `field` (throws when absent or repeated). */
export function one(msg: PbMessage, field: string): PbValue {
  const v = msg[field];
  if (v?.length !== 1) throw new Error(`expected exactly one ${field}, got ${v?.length ?? 0}`);
  return v[0] as PbValue;
}

/** The single value of `field` as a string (throws when it is a message). */
export function str(msg: PbMessage, field: string): string {
  const v = one(msg, field);
  if (typeof v === 'object') throw new Error(`${field} is a message, not a scalar`);
  return String(v);
}

/** `parameters` entries as a plain `{ key: string_value }` map. */
export function parameterMap(config: PbMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of config.parameters ?? []) {
    const entry = p as PbMessage;
    out[str(entry, 'key')] = str(one(entry, 'value') as PbMessage, 'string_value');
  }
  return out;
}
