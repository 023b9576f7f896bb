/**
 * JSON that keeps 64-bit integers exact.
 *
 * Parsing: the fast built-in `JSON.parse` is used unless the text contains an integer literal of 16
 * or more digits; then the text is parsed with `lossless-json`, and integers outside
 * ±(2^53 − 1) become `bigint` (all other numbers stay `number`). So a caller sees a `number`
 * whenever it is exact and a `bigint` only when a `number` would have lost precision.
 * Stringifying: `bigint` values are written as exact JSON integer literals.
 * @packageDocumentation
 */
import { parse as losslessParse, stringify as losslessStringify } from 'lossless-json';
import { ProtocolError } from './errors.js';

/** An integer literal of at least 16 digits that is not part of a fraction or exponent. */
const LONG_INTEGER = /(?<![\d.eE+-])-?\d{16,}(?![\d.eE])/;
const INTEGER = /^-?\d+$/;

function parseNumber(text: string): number | bigint {
  if (INTEGER.test(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : BigInt(text);
  }
  return Number(text);
}

/** Deepest nesting the exact-integer parser accepts (it recurses; the built-in parser does not). */
const MAX_LOSSLESS_DEPTH = 1000;

/** The deepest `[`/`{` nesting of JSON text, strings skipped; stops counting past `limit`. */
function nestingDepth(text: string, limit: number): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) max = depth;
      if (max > limit) return max;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/**
 * Parses JSON; integers that a `number` cannot hold exactly come back as `bigint`.
 * Throws {@link ProtocolError} `MALFORMED_JSON` on invalid JSON.
 * @param what - names the document in the error message.
 */
export function parseJson(text: string, what = 'JSON'): unknown {
  try {
    if (!LONG_INTEGER.test(text)) return JSON.parse(text) as unknown;
    if (nestingDepth(text, MAX_LOSSLESS_DEPTH) > MAX_LOSSLESS_DEPTH) {
      throw new Error(`nesting deeper than ${MAX_LOSSLESS_DEPTH} levels`);
    }
    return losslessParse(text, null, parseNumber);
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
