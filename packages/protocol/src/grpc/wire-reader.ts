/**
 * A minimal protobuf wire reader for the hand-written decoders of the infer messages. It reads only
 * what those decoders accept and reports anything else by returning `undefined` (or {@link BAIL}),
 * so that the caller hands the message to protobuf-es, which then decides (and fails) exactly as
 * before: varints of 10 bytes or more, groups, non-ASCII strings, truncated fields.
 * @packageDocumentation
 */

/**
 * Thrown inside the hand-written decoders when the message is not one they read; caught by them
 * (one instance, made once: throwing it costs no stack trace).
 */
export const BAIL: Error = new Error('not a message the hand-written decoder reads');

const TWO_POW_32 = 0x1_0000_0000;

/** Buffer's native latin1 decoder; it reads any Uint8Array (ASCII bytes are their own code units). */
const latin1Slice = (
  Buffer.prototype as unknown as { latin1Slice: (this: Uint8Array, start: number, end: number) => string }
).latin1Slice;

/** Strings up to this many bytes go through the cache of {@link WireReader.ascii}. */
const CACHED_LENGTH = 32;
const CACHE_SLOTS = 256;
/** Recently read short strings, by a hash of their bytes (direct-mapped: a clash replaces). */
const cache: (string | undefined)[] = new Array<string | undefined>(CACHE_SLOTS).fill(undefined);

/** A cursor over protobuf bytes; every read throws {@link BAIL} on anything unusual. */
export class WireReader {
  pos: number;

  constructor(
    readonly buf: Uint8Array,
    pos: number,
    readonly end: number,
  ) {
    this.pos = pos;
  }

  /**
   * A varint of at most 7 bytes (< 2^49) as a number; longer ones go through {@link uint64}. Throws
   * {@link BAIL} past the end.
   */
  varint(): number {
    const buf = this.buf;
    let pos = this.pos;
    const end = this.end;
    if (pos >= end) throw BAIL;
    let b = buf[pos++] as number;
    if (b < 0x80) {
      this.pos = pos;
      return b;
    }
    let value = b & 0x7f;
    let scale = 0x80;
    for (let i = 1; i < 7; i++) {
      if (pos >= end) throw BAIL;
      b = buf[pos++] as number;
      value += (b & 0x7f) * scale;
      if (b < 0x80) {
        this.pos = pos;
        return value;
      }
      scale *= 0x80;
    }
    throw BAIL;
  }

  /**
   * A varint of at most 9 bytes (< 2^63): a number when below 2^53, else a bigint. Varints of 10
   * bytes (negative int64) throw {@link BAIL}.
   */
  uint64(): number | bigint {
    const start = this.pos;
    const buf = this.buf;
    const end = this.end;
    let pos = start;
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 9; i++) {
      if (pos >= end) throw BAIL;
      const b = buf[pos++] as number;
      // Bits 7i .. 7i+6 of the value.
      const shift = 7 * i;
      if (shift < 28) lo += (b & 0x7f) * 2 ** shift;
      else if (shift === 28) {
        lo += (b & 0x0f) * 2 ** 28;
        hi += (b & 0x7f) >> 4;
      } else hi += (b & 0x7f) * 2 ** (shift - 32);
      if (b < 0x80) {
        this.pos = pos;
        if (hi < 0x20_0000) return hi * TWO_POW_32 + lo;
        return (BigInt(hi) << 32n) | BigInt(lo);
      }
    }
    throw BAIL;
  }

  /**
   * A field tag as `fieldNumber * 8 + wireType`: at most 5 bytes, below 2^32, field number not 0
   * (protobuf-es reads tags as uint32 and refuses field 0).
   */
  tag(): number {
    const start = this.pos;
    const tag = this.varint();
    if (this.pos - start > 5 || tag > 0xffff_ffff || tag < 8) throw BAIL;
    return tag;
  }

  /** The length of a length-delimited field (at most 5 bytes, as a uint32), checked against the end. */
  length(): number {
    const start = this.pos;
    const len = this.varint();
    if (this.pos - start > 5 || len > this.end - this.pos) throw BAIL;
    return len;
  }

  /** Reads the length of a length-delimited field; returns where its body ends. */
  delimitedEnd(): number {
    const len = this.length();
    return this.pos + len;
  }

  /**
   * A length-delimited ASCII string (anything else throws {@link BAIL}). Short strings come from a
   * small cache when the same bytes were read before (names, datatypes and versions repeat from one
   * answer to the next).
   */
  ascii(): string {
    const len = this.length();
    const buf = this.buf;
    const start = this.pos;
    const stop = start + len;
    let hash = len;
    for (let i = start; i < stop; i++) {
      const c = buf[i] as number;
      if (c > 0x7f) throw BAIL;
      hash = (hash * 31 + c) | 0;
    }
    this.pos = stop;
    if (len > CACHED_LENGTH) return latin1Slice.call(buf, start, stop);
    const slot = hash & (CACHE_SLOTS - 1);
    const cached = cache[slot];
    if (cached !== undefined && cached.length === len) {
      let same = true;
      for (let i = 0; i < len; i++) {
        if (cached.charCodeAt(i) !== buf[start + i]) {
          same = false;
          break;
        }
      }
      if (same) return cached;
    }
    const s = latin1Slice.call(buf, start, stop);
    cache[slot] = s;
    return s;
  }

  /**
   * Skips the field of `tag`, one the decoder does not read. A field numbered 1 to `knownFields`
   * (a known field with another wire type, or one left to protobuf-es) throws {@link BAIL}.
   */
  skipUnknown(tag: number, knownFields: number): void {
    const field = Math.floor(tag / 8);
    if (field >= 1 && field <= knownFields) throw BAIL;
    this.skip(tag % 8);
  }

  /** Skips one field of wire type 0, 1, 2 or 5; groups and invalid wire types throw {@link BAIL}. */
  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.uint64();
        return;
      case 1:
        if (this.end - this.pos < 8) throw BAIL;
        this.pos += 8;
        return;
      case 2: {
        // (Not `this.pos += this.length()`: that adds to the position before the length's varint.)
        const len = this.length();
        this.pos += len;
        return;
      }
      case 5:
        if (this.end - this.pos < 4) throw BAIL;
        this.pos += 4;
        return;
      default:
        throw BAIL;
    }
  }
}
