/**
 * JSON that keeps 64-bit integers exact, parsed without recursion on the input's depth.
 *
 * Parsing: the built-in `JSON.parse` (iterative in V8, so any nesting depth is safe) does all the
 * work. When the text holds an integer literal too large for a `number` to be exact, each such
 * literal is first rewritten into a marked string (the mark carries a random nonce, so no string of
 * the document can pass for one), the text is parsed, and the marked strings are turned into
 * `bigint` by an explicit-stack walk. So a caller sees a `number` whenever it is exact and a
 * `bigint` only when a `number` would have lost precision (integers outside ±(2^53 − 1)).
 * Stringifying: `bigint` values are written as exact JSON integer literals.
 * @packageDocumentation
 */
import { stringify as losslessStringify } from 'lossless-json';
import { ProtocolError } from '../errors.js';

/** An integer literal of at least 16 digits that is not part of a fraction or exponent. */
const LONG_INTEGER = /(?<![\d.eE+-])-?\d{16,}(?![\d.eE])/;
/** A JSON integer literal (no leading zeros), as a whole token. */
const JSON_INTEGER = /^-?(?:0|[1-9]\d*)$/;

function isNumberChar(c: number): boolean {
  // 0-9 . + - e E
  return (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x2b || c === 0x2d || c === 0x65 || c === 0x45;
}

/** A fresh mark for one parse: NUL + a random nonce (JSON text can only write NUL escaped). */
function newMark(): string {
  const bytes = new Uint8Array(12);
  globalThis.crypto.getRandomValues(bytes);
  let nonce = '';
  for (const b of bytes) nonce += b.toString(16).padStart(2, '0');
  return `\u0000${nonce}:`;
}

/**
 * Rewrites every integer literal a `number` cannot hold exactly into a string `"<mark><digits>"`.
 * Only whole, valid JSON integer tokens outside strings are rewritten, so an invalid document stays
 * invalid. Returns `undefined` when nothing needed rewriting.
 */
function markLongIntegers(text: string, mark: string): string | undefined {
  const escapedMark = `\\u0000${mark.slice(1)}`;
  const parts: string[] = [];
  let copied = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
      continue;
    }
    if (!isNumberChar(c)) continue;
    let end = i + 1;
    while (end < text.length && isNumberChar(text.charCodeAt(end))) end++;
    const token = text.slice(i, end);
    if (token.length >= 16 && JSON_INTEGER.test(token) && !Number.isSafeInteger(Number(token))) {
      parts.push(text.slice(copied, i), `"${escapedMark}${token}"`);
      copied = end;
    }
    i = end - 1;
  }
  if (parts.length === 0) return undefined;
  parts.push(text.slice(copied));
  return parts.join('');
}

/** Replaces the marked strings of a parsed document by `bigint`s, with an explicit stack. */
function unmark(root: unknown, mark: string): unknown {
  const convert = (v: unknown): unknown =>
    typeof v === 'string' && v.startsWith(mark) ? BigInt(v.slice(mark.length)) : v;
  const top = convert(root);
  const stack: unknown[] = [top];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const v: unknown = node[i];
        if (typeof v === 'string') node[i] = convert(v);
        else if (typeof v === 'object' && v !== null) stack.push(v);
      }
    } else if (typeof node === 'object' && node !== null) {
      const obj = node as Record<string, unknown>;
      for (const key of Object.keys(obj)) {
        const v = obj[key];
        if (typeof v === 'string') obj[key] = convert(v);
        else if (typeof v === 'object' && v !== null) stack.push(v);
      }
    }
  }
  return top;
}

/**
 * Parses JSON; integers that a `number` cannot hold exactly come back as `bigint`. Never recurses on
 * the document's nesting depth.
 * Throws {@link ProtocolError} `MALFORMED_JSON` on invalid JSON.
 * @param what - names the document in the error message.
 */
export function parseJson(text: string, what = 'JSON'): unknown {
  try {
    if (!LONG_INTEGER.test(text)) return JSON.parse(text) as unknown;
    const mark = newMark();
    const marked = markLongIntegers(text, mark);
    if (marked === undefined) return JSON.parse(text) as unknown;
    let parsed: unknown;
    try {
      parsed = JSON.parse(marked) as unknown;
    } catch (error) {
      // Report the error at its place in the original text.
      JSON.parse(text);
      throw error;
    }
    return unmark(parsed, mark);
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new ProtocolError('MALFORMED_JSON', `failed to parse ${what}: ${detail}`, { cause });
  }
}

/** Stringifies to JSON, writing `bigint` values as exact integer literals. */
export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return losslessStringify(value) ?? 'null';
  }
}
