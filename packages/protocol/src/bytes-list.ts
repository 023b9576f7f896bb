/**
 * {@link BytesList}: the elements of a `BYTES` tensor held in one buffer, in Triton's length-prefixed
 * layout (a uint32 little-endian length before each element's bytes), instead of one `Uint8Array`
 * per element. Its memory is its bytes plus, once an element is looked up, one offset per element;
 * decoding a wire buffer into it copies nothing, and encoding it back is the same bytes. The
 * embedded server carries BYTES tensors this way from the wire to the backends and back (issue 23).
 * @packageDocumentation
 */
import { isAscii, isUtf8 } from 'node:buffer';

import type { BytesElement } from './bytes.js';
import { ProtocolError } from './errors.js';

const strictDecoder = new TextDecoder('utf-8', { fatal: true });

/** Buffer's native UTF-8 decoder and encoder over any Uint8Array (no view per element). */
const { utf8Slice, utf8Write } = Buffer.prototype as unknown as {
  utf8Slice: (this: Uint8Array, start: number, end: number) => string;
  utf8Write: (this: Uint8Array, text: string, offset: number) => number;
};

/** Marks instances across copies of this module (`instanceof` fails between two copies). */
const BRAND = Symbol.for('@tritonserver-ts/client/protocol.BytesList');

/** The escape letter JSON.stringify uses for a byte (`\"`, `\\`, `\b`, `\t`, `\n`, `\f`, `\r`). */
const JSON_SHORT_ESCAPES: Readonly<Record<number, number>> = {
  0x22: 0x22,
  0x5c: 0x5c,
  0x08: 0x62,
  0x09: 0x74,
  0x0a: 0x6e,
  0x0c: 0x66,
  0x0d: 0x72,
};
/** Bytes JSON.stringify writes for each byte of valid UTF-8 text: 1, 2 (short escape) or 6 (`\u00XX`). */
const JSON_ESCAPED_SIZE = Uint8Array.from({ length: 256 }, (_, b) =>
  JSON_SHORT_ESCAPES[b] !== undefined ? 2 : b < 0x20 ? 6 : 1,
);
const HEX = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));

/** One offset per element plus the end: a Uint32Array while the bytes fit in 4 GiB. */
type Offsets = Uint32Array | Float64Array;

/**
 * Counts the elements of a serialized BYTES tensor, checking that every length prefix stays inside
 * it (the messages of `deserializeBytesTensor`). Allocates nothing.
 */
function countElements(bytes: Uint8Array, what: string): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = bytes.byteLength;
  let offset = 0;
  let count = 0;
  while (offset < end) {
    if (offset + 4 > end) {
      throw new ProtocolError(
        'INVALID_BYTES_ELEMENT',
        `unexpected end of BYTES data for ${what}: element ${count} has an incomplete length prefix`,
      );
    }
    const len = view.getUint32(offset, true);
    const start = offset + 4;
    if (start + len > end) {
      throw new ProtocolError(
        'INVALID_BYTES_ELEMENT',
        `BYTES element ${count} of ${what} has length ${len} which runs past the end of its ${end}-byte data`,
      );
    }
    offset = start + len;
    count++;
  }
  return count;
}

/**
 * The elements of a `BYTES` tensor in one buffer (Triton's serialized layout). Elements are read as
 * views into it ({@link BytesList.at}, iteration); {@link BytesList.serialized} is the layout itself,
 * ready for the wire. Immutable: slicing and concatenating make new lists.
 */
export class BytesList implements Iterable<Uint8Array> {
  /** Number of elements. */
  readonly length: number;
  readonly #bytes: Uint8Array;
  /** Where each element's length prefix starts in `#bytes`, and the end; built on first lookup. */
  #offsets: Offsets | undefined;

  private constructor(bytes: Uint8Array, length: number, offsets?: Offsets) {
    this.#bytes = bytes;
    this.length = length;
    this.#offsets = offsets;
  }

  /** True for a {@link BytesList} (also one made by another copy of this module). */
  static isBytesList(value: unknown): value is BytesList {
    return (
      value instanceof BytesList ||
      (typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true)
    );
  }

  /**
   * The list over serialized bytes (length-prefixed), without copying them: keep `bytes` unchanged
   * while the list is in use. Throws {@link ProtocolError} `INVALID_BYTES_ELEMENT` when a length
   * prefix runs past the end, and `ELEMENT_COUNT_MISMATCH` when `expectedCount` is given and differs.
   * @param what - how to name the tensor in error messages, e.g. `input 'TEXT'`.
   */
  static fromSerialized(bytes: Uint8Array, expectedCount?: number, what = 'tensor'): BytesList {
    const count = countElements(bytes, what);
    if (expectedCount !== undefined && count !== expectedCount) {
      throw new ProtocolError(
        'ELEMENT_COUNT_MISMATCH',
        `${what} holds ${count} BYTES elements but its shape expects ${expectedCount}`,
      );
    }
    return new BytesList(bytes, count);
  }

  /** Packs elements (bytes, or strings encoded as UTF-8) into one new buffer. */
  static from(elements: readonly BytesElement[]): BytesList {
    const n = elements.length;
    let total = 4 * n;
    for (let i = 0; i < n; i++) {
      const e = elements[i] as BytesElement;
      if (typeof e !== 'string') total += e.byteLength;
      else if (e.length > 0) total += Buffer.byteLength(e, 'utf8');
    }
    const out = new Uint8Array(total);
    let at = 0;
    for (let i = 0; i < n; i++) {
      const e = elements[i] as BytesElement;
      let len = 0;
      if (typeof e !== 'string') {
        out.set(e, at + 4);
        len = e.byteLength;
      } else if (e.length > 0) {
        len = utf8Write.call(out, e, at + 4);
      }
      out[at] = len & 0xff;
      out[at + 1] = (len >>> 8) & 0xff;
      out[at + 2] = (len >>> 16) & 0xff;
      out[at + 3] = (len >>> 24) & 0xff;
      at += 4 + len;
    }
    return new BytesList(out, n);
  }

  /** The elements of `lists` one after another, in one new buffer. */
  static concat(lists: readonly BytesList[]): BytesList {
    if (lists.length === 1) return lists[0] as BytesList;
    let total = 0;
    let count = 0;
    for (const l of lists) {
      total += l.byteLength;
      count += l.length;
    }
    const out = new Uint8Array(total);
    let at = 0;
    for (const l of lists) {
      out.set(l.#bytes, at);
      at += l.byteLength;
    }
    return new BytesList(out, count);
  }

  /** The serialized layout: a uint32 LE length before each element's bytes (the list's own memory). */
  get serialized(): Uint8Array {
    return this.#bytes;
  }

  /** Bytes of the serialized layout (the elements' bytes plus 4 per element). */
  get byteLength(): number {
    return this.#bytes.byteLength;
  }

  #index(): Offsets {
    if (this.#offsets !== undefined) return this.#offsets;
    const bytes = this.#bytes;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const offsets: Offsets =
      bytes.byteLength < 0x1_0000_0000 ? new Uint32Array(this.length + 1) : new Float64Array(this.length + 1);
    let at = 0;
    for (let i = 0; i < this.length; i++) {
      offsets[i] = at;
      at += 4 + view.getUint32(at, true);
    }
    offsets[this.length] = at;
    this.#offsets = offsets;
    return offsets;
  }

  /**
   * Element `index` (negative counts from the end, as `Array.prototype.at`) as a view into the list's
   * memory, or `undefined` out of range.
   */
  at(index: number): Uint8Array | undefined {
    const i = index < 0 ? index + this.length : index;
    if (!Number.isInteger(i) || i < 0 || i >= this.length) return undefined;
    const offsets = this.#index();
    return this.#bytes.subarray((offsets[i] as number) + 4, offsets[i + 1]);
  }

  /** Elements `start` to `end` (exclusive, as `Array.prototype.slice`) as a list over the same memory. */
  slice(start = 0, end = this.length): BytesList {
    const clamp = (n: number): number =>
      Math.min(this.length, Math.max(0, n < 0 ? n + this.length : Math.trunc(n)));
    const from = clamp(start);
    const to = Math.max(from, clamp(end));
    if (from === 0 && to === this.length) return this;
    const offsets = this.#index();
    const base = offsets[from] as number;
    const bytes = this.#bytes.subarray(base, offsets[to]);
    let sliced: Offsets | undefined;
    if (base === 0) sliced = offsets.subarray(0, to + 1);
    return new BytesList(bytes, to - from, sliced);
  }

  /** A copy of the list in memory of its own. */
  copy(): BytesList {
    return new BytesList(this.#bytes.slice(), this.length, this.#offsets?.slice());
  }

  *[Symbol.iterator](): IterableIterator<Uint8Array> {
    for (let i = 0; i < this.length; i++) yield this.at(i) as Uint8Array;
  }

  /** One `Uint8Array` per element, each a view into the list's memory (the per-element form). */
  toArray(): Uint8Array[] {
    const out = new Array<Uint8Array>(this.length);
    for (let i = 0; i < this.length; i++) out[i] = this.at(i) as Uint8Array;
    return out;
  }

  /** Index of the first element that is not valid UTF-8, or -1 when every element is. */
  firstInvalidUtf8(): number {
    const bytes = this.#bytes;
    // All bytes ASCII (length prefixes included): every element is valid, in one native pass.
    if (isAscii(bytes)) return -1;
    const offsets = this.#index();
    for (let i = 0; i < this.length; i++) {
      const start = (offsets[i] as number) + 4;
      const end = offsets[i + 1] as number;
      if (start !== end && !isUtf8(bytes.subarray(start, end))) return i;
    }
    return -1;
  }

  /**
   * The elements as a JSON array of strings, in UTF-8: the bytes `JSON.stringify(this.toStrings())`
   * encodes to, written straight from the list's memory (no string per element).
   * @throws ProtocolError `INVALID_BYTES_ELEMENT` when an element is not valid UTF-8
   */
  toJson(): Uint8Array {
    const bad = this.firstInvalidUtf8();
    if (bad >= 0) {
      throw new ProtocolError('INVALID_BYTES_ELEMENT', `BYTES element ${bad} is not valid UTF-8`);
    }
    const bytes = this.#bytes;
    const offsets = this.#index();
    const n = this.length;
    // Brackets, commas, quotes, then each byte as JSON writes it.
    let size = 2 + Math.max(0, n - 1) + 2 * n;
    for (let i = 0; i < n; i++) {
      const end = offsets[i + 1] as number;
      for (let at = (offsets[i] as number) + 4; at < end; at++)
        size += JSON_ESCAPED_SIZE[bytes[at] as number] as number;
    }
    const out = new Uint8Array(size);
    let w = 0;
    out[w++] = 0x5b; // [
    for (let i = 0; i < n; i++) {
      if (i > 0) out[w++] = 0x2c; // ,
      out[w++] = 0x22; // "
      const end = offsets[i + 1] as number;
      for (let at = (offsets[i] as number) + 4; at < end; at++) {
        const b = bytes[at] as number;
        if (JSON_ESCAPED_SIZE[b] === 1) {
          out[w++] = b;
          continue;
        }
        out[w++] = 0x5c; // \
        const short = JSON_SHORT_ESCAPES[b];
        if (short !== undefined) {
          out[w++] = short;
        } else {
          // \u00XX
          out[w++] = 0x75;
          out[w++] = 0x30;
          out[w++] = 0x30;
          out[w++] = HEX[b >> 4] as number;
          out[w++] = HEX[b & 0xf] as number;
        }
      }
      out[w++] = 0x22;
    }
    out[w] = 0x5d; // ]
    return out;
  }

  /**
   * The elements decoded as UTF-8 strings.
   * @param options.fatal - throw a {@link ProtocolError} (`INVALID_BYTES_ELEMENT`) on invalid UTF-8
   *   instead of inserting U+FFFD.
   */
  toStrings(options?: { fatal?: boolean }): string[] {
    const fatal = options?.fatal === true;
    const bytes = this.#bytes;
    const offsets = this.#index();
    const out = new Array<string>(this.length);
    for (let i = 0; i < this.length; i++) {
      const start = (offsets[i] as number) + 4;
      const end = offsets[i + 1] as number;
      if (start === end) {
        out[i] = '';
        continue;
      }
      const s = utf8Slice.call(bytes, start, end);
      // Invalid UTF-8 decodes to U+FFFD; only then is the element checked strictly.
      if (fatal && s.includes('\uFFFD')) {
        try {
          strictDecoder.decode(bytes.subarray(start, end));
        } catch (cause) {
          throw new ProtocolError('INVALID_BYTES_ELEMENT', `BYTES element ${i} is not valid UTF-8`, {
            cause,
          });
        }
      }
      out[i] = s;
    }
    return out;
  }
}

Object.defineProperty(BytesList.prototype, BRAND, { value: true });
