/**
 * Tokenizer for the protobuf text format (the syntax of `config.pbtxt`).
 *
 * Produces identifiers, numbers, strings (escapes decoded to bytes) and single-character symbols,
 * each with its 1-based line and column. `#` starts a comment that runs to the end of the line.
 * @packageDocumentation
 */

/** Kinds of tokens. */
export type TokenKind = 'identifier' | 'number' | 'string' | 'symbol' | 'end';

/** One token. For strings, `bytes` holds the decoded content and `text` the raw source. */
export interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  readonly line: number;
  readonly column: number;
  readonly bytes?: Uint8Array;
}

/** A lexical error at a position; the parser turns it into a `ModelConfigError`. */
export class TokenizeError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
    this.name = 'TokenizeError';
  }
}

const SYMBOLS = new Set(['{', '}', '[', ']', '<', '>', ':', ',', ';', '-']);
const IDENT_START = /[A-Za-z_]/;
const IDENT_PART = /[A-Za-z0-9_.]/;
const NUMBER = /^(?:0[xX][0-9A-Fa-f]+|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fF]?)/;

const SIMPLE_ESCAPES: Readonly<Record<string, number>> = {
  n: 0x0a,
  t: 0x09,
  r: 0x0d,
  a: 0x07,
  b: 0x08,
  f: 0x0c,
  v: 0x0b,
  '\\': 0x5c,
  "'": 0x27,
  '"': 0x22,
  '?': 0x3f,
};

const encoder = new TextEncoder();

/** Splits `text` into tokens; the last token has kind `end`. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const n = text.length;

  while (i < n) {
    const c = text[i] as string;
    if (c === '\n') {
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v') {
      i++;
      continue;
    }
    const column = i - lineStart + 1;
    if (c === '#') {
      while (i < n && text[i] !== '\n') i++;
      continue;
    }
    if (c === '"' || c === "'") {
      const start = i;
      const { bytes, end } = readString(text, i, line, lineStart);
      i = end;
      tokens.push({ kind: 'string', text: text.slice(start, end), line, column, bytes });
      continue;
    }
    const numberMatch = /[0-9.]/.test(c) ? NUMBER.exec(text.slice(i, i + 64)) : null;
    if (numberMatch !== null) {
      const raw = numberMatch[0];
      const after = text[i + raw.length];
      if (after !== undefined && /[A-Za-z0-9_]/.test(after)) {
        throw new TokenizeError(`invalid number '${raw}${after}'`, line, column);
      }
      tokens.push({ kind: 'number', text: raw, line, column });
      i += raw.length;
      continue;
    }
    if (IDENT_START.test(c)) {
      const start = i;
      i++;
      while (i < n && IDENT_PART.test(text[i] as string)) i++;
      tokens.push({ kind: 'identifier', text: text.slice(start, i), line, column });
      continue;
    }
    if (SYMBOLS.has(c)) {
      tokens.push({ kind: 'symbol', text: c, line, column });
      i++;
      continue;
    }
    throw new TokenizeError(`unexpected character '${c}'`, line, column);
  }
  tokens.push({ kind: 'end', text: '', line, column: i - lineStart + 1 });
  return tokens;
}

function readString(
  text: string,
  start: number,
  line: number,
  lineStart: number,
): { bytes: Uint8Array; end: number } {
  const quote = text[start] as string;
  const out: number[] = [];
  let i = start + 1;
  const fail = (message: string, at: number): never => {
    throw new TokenizeError(message, line, at - lineStart + 1);
  };
  for (;;) {
    if (i >= text.length || text[i] === '\n') fail('unterminated string literal', start);
    const ch = text[i] as string;
    if (ch === quote) return { bytes: Uint8Array.from(out), end: i + 1 };
    if (ch !== '\\') {
      const cp = text.codePointAt(i) as number;
      const s = String.fromCodePoint(cp);
      for (const b of encoder.encode(s)) out.push(b);
      i += s.length;
      continue;
    }
    const esc = text[i + 1];
    if (esc === undefined) fail('unterminated string literal', start);
    const simple = SIMPLE_ESCAPES[esc as string];
    if (simple !== undefined) {
      out.push(simple);
      i += 2;
    } else if (/[0-7]/.test(esc as string)) {
      let j = i + 1;
      let v = 0;
      while (j < i + 4 && /[0-7]/.test(text[j] ?? '')) v = v * 8 + Number(text[j++]);
      if (v > 255) fail('octal escape out of range', i);
      out.push(v);
      i = j;
    } else if (esc === 'x' || esc === 'X') {
      let j = i + 2;
      let hex = '';
      while (j < i + 4 && /[0-9A-Fa-f]/.test(text[j] ?? '')) hex += text[j++];
      if (hex === '') fail("'\\x' escape needs hex digits", i);
      out.push(parseInt(hex, 16));
      i = j;
    } else if (esc === 'u' || esc === 'U') {
      const len = esc === 'u' ? 4 : 8;
      const hex = text.slice(i + 2, i + 2 + len);
      if (!new RegExp(`^[0-9A-Fa-f]{${len}}$`).test(hex))
        fail(`'\\${esc}' escape needs ${len} hex digits`, i);
      const cp = parseInt(hex, 16);
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) fail(`invalid code point in '\\${esc}' escape`, i);
      for (const b of encoder.encode(String.fromCodePoint(cp))) out.push(b);
      i += 2 + len;
    } else {
      fail(`invalid escape sequence '\\${esc as string}'`, i);
    }
  }
}
