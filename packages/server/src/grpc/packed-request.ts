/**
 * The server's reader of `ModelInferRequest` messages: protobuf-es's, except for `bytes_contents`.
 * protobuf-es reads a repeated `bytes` field as one `Uint8Array` per element, so 8 MiB of empty
 * BYTES elements (2 bytes each on the wire) would become four million objects before the request
 * is even looked at (issue 23). Here each input's `bytes_contents` are gathered straight from the
 * wire into one buffer in Triton's serialized layout (a uint32 length before each element: what
 * tritonserver makes of them too), available through {@link packedBytesContents}; the message's own
 * `bytesContents` list is left empty. Messages without `bytes_contents` (the usual ones, raw inputs)
 * are protobuf-es's unchanged; with them, the message is decoded by protobuf-es without those
 * records, so every other field and every error is protobuf-es's.
 * @packageDocumentation
 */
import {
  ModelInferRequestSchema,
  decodeMessage,
  delimitedSize as recordSize,
  writeVarint,
  type InferTensorContents,
  type ModelInferRequest,
} from '@tritonserver-ts/protocol/grpc';

/** Thrown inside the scanner on bytes that are not well-formed protobuf (protobuf-es then decides). */
const MALFORMED = new Error('malformed protobuf');

/** Field numbers: `ModelInferRequest.inputs`, `InferInputTensor.contents`, `InferTensorContents.bytes_contents`. */
const INPUTS = 5;
const CONTENTS = 5;
const BYTES_CONTENTS = 8;
const LENGTH_DELIMITED = 2;
/** The one-byte tag of a `bytes_contents` record. */
const BYTES_TAG = (BYTES_CONTENTS << 3) | LENGTH_DELIMITED;

const packed = new WeakMap<InferTensorContents, Uint8Array>();

/**
 * The `bytes_contents` of typed contents read by {@link decodeModelInferRequest}, in Triton's
 * serialized layout (`undefined` when the contents had none, or did not come from that reader).
 */
export function packedBytesContents(contents: InferTensorContents): Uint8Array | undefined {
  return packed.get(contents);
}

/**
 * Bytes `request` holds beyond its message: the `bytes_contents` {@link decodeModelInferRequest}
 * packed out of it (0 for any other value).
 */
export function packedBytesOf(request: unknown): number {
  const inputs = (request as { inputs?: unknown } | null)?.inputs;
  if (!Array.isArray(inputs)) return 0;
  let n = 0;
  for (const input of inputs as { contents?: InferTensorContents }[]) {
    if (input.contents !== undefined) n += packed.get(input.contents)?.byteLength ?? 0;
  }
  return n;
}

/**
 * Reads the records of one message in order: after each {@link Scanner.next}, the record's field,
 * wire type, start, payload start and end. One object per message scanned, none per record.
 */
class Scanner {
  field = 0;
  wireType = 0;
  start = 0;
  payload = 0;
  end = 0;
  #pos: number;

  constructor(
    readonly buf: Uint8Array,
    start: number,
    readonly limit: number,
  ) {
    this.#pos = start;
  }

  /** Where the next record starts. */
  get pos(): number {
    return this.#pos;
  }

  /**
   * Skips a run of short `bytes_contents` records (one-byte tag and length: the usual elements),
   * calling `each(payload, length)` for each; returns how many.
   */
  shortElements(each?: (payload: number, length: number) => void): number {
    const buf = this.buf;
    const limit = this.limit;
    let pos = this.#pos;
    let count = 0;
    while (pos + 1 < limit && buf[pos] === BYTES_TAG) {
      const length = buf[pos + 1] as number;
      if (length >= 0x80 || length > limit - pos - 2) break;
      each?.(pos + 2, length);
      pos += 2 + length;
      count++;
    }
    this.#pos = pos;
    return count;
  }

  /** Reads the next record; false after the last. */
  next(): boolean {
    const pos = this.#pos;
    if (pos >= this.limit) return false;
    // Fast path: a length-delimited record with a one-byte tag and a one-byte length (every short
    // bytes element).
    const first = this.buf[pos] as number;
    const length = this.buf[pos + 1] as number;
    if (
      first < 0x80 &&
      (first & 7) === LENGTH_DELIMITED &&
      first >= 8 &&
      length < 0x80 &&
      pos + 1 < this.limit
    ) {
      const payload = pos + 2;
      if (length > this.limit - payload) throw MALFORMED;
      this.start = pos;
      this.field = first >>> 3;
      this.wireType = LENGTH_DELIMITED;
      this.payload = payload;
      this.end = this.#pos = payload + length;
      return true;
    }
    this.start = pos;
    const tag = this.#varint();
    this.field = Math.floor(tag / 8);
    this.wireType = tag & 7;
    if (this.field === 0) throw MALFORMED;
    if (this.wireType === LENGTH_DELIMITED) {
      const n = this.#varint();
      if (n > this.limit - this.#pos) throw MALFORMED;
      this.payload = this.#pos;
      this.#pos += n;
    } else {
      this.payload = this.#pos;
      this.#skip(this.wireType, this.field);
    }
    this.end = this.#pos;
    return true;
  }

  #varint(): number {
    const buf = this.buf;
    let pos = this.#pos;
    if (pos >= this.limit) throw MALFORMED;
    let b = buf[pos++] as number;
    if (b < 0x80) {
      this.#pos = pos;
      return b;
    }
    let value = b & 0x7f;
    let scale = 0x80;
    for (let i = 1; i < 10; i++) {
      if (pos >= this.limit) throw MALFORMED;
      b = buf[pos++] as number;
      value += (b & 0x7f) * scale;
      if (b < 0x80) {
        this.#pos = pos;
        return value;
      }
      scale *= 0x80;
    }
    throw MALFORMED;
  }

  #advance(n: number): void {
    if (n > this.limit - this.#pos) throw MALFORMED;
    this.#pos += n;
  }

  /** Skips the value of a field of `wireType` (groups included). */
  #skip(wireType: number, field: number): void {
    switch (wireType) {
      case 0:
        this.#varint();
        return;
      case 1:
        this.#advance(8);
        return;
      case LENGTH_DELIMITED:
        this.#advance(this.#varint());
        return;
      case 5:
        this.#advance(4);
        return;
      case 3:
        for (;;) {
          const tag = this.#varint();
          if ((tag & 7) === 4) {
            if (Math.floor(tag / 8) !== field) throw MALFORMED;
            return;
          }
          this.#skip(tag & 7, Math.floor(tag / 8));
        }
      default:
        throw MALFORMED;
    }
  }
}

function isEmbedded(s: Scanner, field: number): boolean {
  return s.field === field && s.wireType === LENGTH_DELIMITED;
}

/** What one input record holds of `bytes_contents`, and its size without them. */
interface InputScan {
  /** Elements, and their bytes. */
  readonly count: number;
  readonly bytes: number;
  /** The payload size of the input record without its `bytes_contents` records. */
  readonly kept: number;
  /** The same for each of its `contents` records, in order. */
  readonly keptContents: readonly number[];
}

/** Scans the input record whose payload is `[start, end)`. */
function scanInput(buf: Uint8Array, start: number, end: number): InputScan {
  let count = 0;
  let bytes = 0;
  let kept = 0;
  const keptContents: number[] = [];
  const input = new Scanner(buf, start, end);
  while (input.next()) {
    if (!isEmbedded(input, CONTENTS)) {
      kept += input.end - input.start;
      continue;
    }
    let k = 0;
    const contents = new Scanner(buf, input.payload, input.end);
    for (;;) {
      const from = contents.pos;
      const run = contents.shortElements();
      count += run;
      // The run's records are 2 bytes each plus their payloads.
      bytes += contents.pos - from - 2 * run;
      if (!contents.next()) break;
      if (isEmbedded(contents, BYTES_CONTENTS)) {
        count++;
        bytes += contents.end - contents.payload;
      } else {
        k += contents.end - contents.start;
      }
    }
    keptContents.push(k);
    kept += recordSize(k);
  }
  return { count, bytes, kept, keptContents };
}

/**
 * Writes the input record (payload `[start, end)`, scanned as `scan`) at `at` without its
 * `bytes_contents` records, whose elements go to `packedOut` in Triton's serialized layout; returns
 * the offset after the record.
 */
function writeInput(
  out: Uint8Array,
  at: number,
  buf: Uint8Array,
  start: number,
  end: number,
  scan: InputScan,
  packedOut: Uint8Array,
): number {
  out[at++] = (INPUTS << 3) | LENGTH_DELIMITED;
  at = writeVarint(out, at, scan.kept);
  let packedAt = 0;
  let contentsIndex = 0;
  const input = new Scanner(buf, start, end);
  while (input.next()) {
    if (!isEmbedded(input, CONTENTS)) {
      out.set(buf.subarray(input.start, input.end), at);
      at += input.end - input.start;
      continue;
    }
    out[at++] = (CONTENTS << 3) | LENGTH_DELIMITED;
    at = writeVarint(out, at, scan.keptContents[contentsIndex++] as number);
    const contents = new Scanner(buf, input.payload, input.end);
    const copyShort = (payload: number, length: number): void => {
      // The buffer is zeroed: a length below 128 is its first byte alone.
      packedOut[packedAt] = length;
      for (let i = 0; i < length; i++) packedOut[packedAt + 4 + i] = buf[payload + i] as number;
      packedAt += 4 + length;
    };
    for (;;) {
      contents.shortElements(copyShort);
      if (!contents.next()) break;
      if (isEmbedded(contents, BYTES_CONTENTS)) {
        const len = contents.end - contents.payload;
        packedOut[packedAt] = len & 0xff;
        packedOut[packedAt + 1] = (len >>> 8) & 0xff;
        packedOut[packedAt + 2] = (len >>> 16) & 0xff;
        packedOut[packedAt + 3] = (len >>> 24) & 0xff;
        if (len > 64) packedOut.set(buf.subarray(contents.payload, contents.end), packedAt + 4);
        else for (let i = 0; i < len; i++) packedOut[packedAt + 4 + i] = buf[contents.payload + i] as number;
        packedAt += 4 + len;
      } else {
        out.set(buf.subarray(contents.start, contents.end), at);
        at += contents.end - contents.start;
      }
    }
  }
  return at;
}

/**
 * Decodes a `ModelInferRequest` (see the module documentation): `bytes_contents` packed per input,
 * everything else as protobuf-es decodes it.
 * @throws ProtocolError `INVALID_FIELD` when the bytes are not a valid message (protobuf-es's error)
 */
export function decodeModelInferRequest(bytes: Uint8Array): ModelInferRequest {
  const scans: InputScan[] = [];
  try {
    const top = new Scanner(bytes, 0, bytes.byteLength);
    while (top.next()) {
      if (isEmbedded(top, INPUTS)) scans.push(scanInput(bytes, top.payload, top.end));
    }
  } catch (error) {
    if (error !== MALFORMED) throw error;
    // Not well-formed: protobuf-es refuses it (or reads what this scanner does not).
    return decodeMessage(ModelInferRequestSchema, bytes);
  }
  if (scans.every((s) => s.count === 0)) return decodeMessage(ModelInferRequestSchema, bytes);

  // The message again without the bytes_contents records; their elements packed per input.
  let size = 0;
  let index = 0;
  const top = new Scanner(bytes, 0, bytes.byteLength);
  while (top.next()) {
    const scan = isEmbedded(top, INPUTS) ? (scans[index++] as InputScan) : undefined;
    size += scan !== undefined && scan.count > 0 ? recordSize(scan.kept) : top.end - top.start;
  }
  const message = Buffer.allocUnsafe(size);
  const packedInputs = scans.map((s) => (s.count > 0 ? new Uint8Array(4 * s.count + s.bytes) : undefined));
  let at = 0;
  index = 0;
  const again = new Scanner(bytes, 0, bytes.byteLength);
  while (again.next()) {
    const i = isEmbedded(again, INPUTS) ? index++ : -1;
    const out = i >= 0 ? packedInputs[i] : undefined;
    if (out !== undefined) {
      at = writeInput(message, at, bytes, again.payload, again.end, scans[i] as InputScan, out);
    } else {
      message.set(bytes.subarray(again.start, again.end), at);
      at += again.end - again.start;
    }
  }
  const request = decodeMessage(ModelInferRequestSchema, message);
  packedInputs.forEach((out, i) => {
    const contents = request.inputs[i]?.contents;
    if (out !== undefined && contents !== undefined) packed.set(contents, out);
  });
  return request;
}
