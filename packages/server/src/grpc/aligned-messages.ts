/**
 * Received gRPC messages laid out so that their first `raw_input_contents` starts 8-byte aligned
 * (issue 31). grpc-js joins each message's DATA chunks into one new buffer (its `StreamDecoder`),
 * and the message's tensor bytes land wherever the header before them ends: three times out of four
 * not on a multiple of 4, so the request reader (`tensorDataFromBytes`) had to copy them once more
 * into an aligned buffer before they could be read as FP32 — 602 KB more to allocate, copy and
 * collect per food image, on top of the copy the hop to the onnxruntime worker makes anyway.
 *
 * Here the join reserves a few bytes of padding in front of the message, as many as put the payload
 * of its first field-7 record (`ModelInferRequest.raw_input_contents`) on an 8-byte boundary: the
 * header before it (model name, inputs, parameters) is found by walking the top-level records of the
 * message's first chunk. Messages smaller than {@link MIN_ALIGNED_MESSAGE_BYTES}, and messages whose
 * header does not fit the first chunk or does not parse, are joined as grpc-js joins them. The
 * padding is never part of the message (it is a view past it), so any other message of any other
 * service decodes as before.
 *
 * grpc-js has no hook for this: its `StreamDecoder.prototype.write` (grpc-js 1.14) is replaced once
 * per process by one that reads the same framing (a 1-byte compression flag, a 4-byte big-endian
 * length, the message) and keeps grpc-js's limit check and error. `test/grpc/aligned-messages.test.ts`
 * fails if a grpc-js update moves or renames it.
 * @packageDocumentation
 */
import { createRequire } from 'node:module';

/** Messages at least this large are aligned (smaller ones cost little to copy). */
export const MIN_ALIGNED_MESSAGE_BYTES = 4096;
/** The field number of `ModelInferRequest.raw_input_contents`. */
const RAW_INPUT_CONTENTS = 7;
const ALIGNMENT = 8;

/**
 * Offset in `head` of the payload of the first length-delimited field-7 record, walking the
 * top-level records of a protobuf message that starts at `head[0]`; -1 when the records before it
 * leave `head` or do not parse.
 */
export function rawContentsOffset(head: Uint8Array): number {
  let pos = 0;
  const varint = (): number => {
    let value = 0;
    let shift = 0;
    for (;;) {
      if (pos >= head.length || shift > 28) return -1;
      const b = head[pos++] as number;
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return value;
      shift += 7;
    }
  };
  while (pos < head.length) {
    const tag = varint();
    if (tag < 0) return -1;
    const field = Math.floor(tag / 8);
    switch (tag & 7) {
      case 0:
        if (varint() < 0) return -1;
        break;
      case 1:
        pos += 8;
        break;
      case 2: {
        const length = varint();
        if (length < 0) return -1;
        if (field === RAW_INPUT_CONTENTS) return pos <= head.length ? pos : -1;
        pos += length;
        break;
      }
      case 5:
        pos += 4;
        break;
      default:
        return -1;
    }
  }
  return -1;
}

/** The fields of grpc-js's `StreamDecoder` this module reads and writes. */
interface DecoderState {
  readonly maxReadMessageLength: number;
  readState: number;
  readCompressFlag: Buffer;
  readPartialSize: Buffer;
  readSizeRemaining: number;
  readMessageSize: number;
  readPartialMessage: Buffer[];
  readMessageRemaining: number;
}

const NO_DATA = 0;
const READING_SIZE = 1;
const READING_MESSAGE = 2;

/** One framed message (flag, length, message) joined with the padding in front that aligns it. */
function joinAligned(state: DecoderState): Buffer {
  const size = state.readMessageSize;
  const first = state.readPartialMessage[0];
  let pad = 0;
  if (size >= MIN_ALIGNED_MESSAGE_BYTES && first !== undefined) {
    const offset = rawContentsOffset(first);
    // The message starts 5 bytes (the frame prefix) after the padding.
    if (offset >= 0) pad = (ALIGNMENT - ((5 + offset) % ALIGNMENT)) % ALIGNMENT;
  }
  const joined = Buffer.allocUnsafeSlow(pad + 5 + size);
  joined[pad] = state.readCompressFlag[0] as number;
  state.readPartialSize.copy(joined, pad + 1, 0, 4);
  let at = pad + 5;
  for (const part of state.readPartialMessage) {
    joined.set(part, at);
    at += part.byteLength;
  }
  return joined.subarray(pad);
}

/** grpc-js's framing, read as its `StreamDecoder.write` reads it, with {@link joinAligned}. */
function write(this: DecoderState, data: Buffer): Buffer[] {
  let head = 0;
  const result: Buffer[] = [];
  while (head < data.length) {
    if (this.readState === NO_DATA) {
      this.readCompressFlag = data.subarray(head, head + 1);
      head += 1;
      this.readState = READING_SIZE;
      this.readPartialSize.fill(0);
      this.readSizeRemaining = 4;
      this.readMessageSize = 0;
      this.readMessageRemaining = 0;
      this.readPartialMessage = [];
    } else if (this.readState === READING_SIZE) {
      const n = Math.min(data.length - head, this.readSizeRemaining);
      data.copy(this.readPartialSize, 4 - this.readSizeRemaining, head, head + n);
      this.readSizeRemaining -= n;
      head += n;
      if (this.readSizeRemaining === 0) {
        this.readMessageSize = this.readPartialSize.readUInt32BE(0);
        if (this.maxReadMessageLength !== -1 && this.readMessageSize > this.maxReadMessageLength) {
          // grpc-js's words (the call answers RESOURCE_EXHAUSTED with them).
          throw new Error(
            `Received message larger than max (${this.readMessageSize} vs ${this.maxReadMessageLength})`,
          );
        }
        this.readMessageRemaining = this.readMessageSize;
        if (this.readMessageRemaining > 0) {
          this.readState = READING_MESSAGE;
        } else {
          result.push(Buffer.concat([this.readCompressFlag, this.readPartialSize], 5));
          this.readState = NO_DATA;
        }
      }
    } else if (this.readState === READING_MESSAGE) {
      const n = Math.min(data.length - head, this.readMessageRemaining);
      this.readPartialMessage.push(data.subarray(head, head + n));
      this.readMessageRemaining -= n;
      head += n;
      if (this.readMessageRemaining === 0) {
        result.push(joinAligned(this));
        this.readPartialMessage = [];
        this.readState = NO_DATA;
      }
    } else {
      throw new Error('Unexpected read state');
    }
  }
  return result;
}

let installed = false;

/** Replaces grpc-js's message join with {@link joinAligned} (once per process). */
export function installAlignedMessages(): void {
  if (installed) return;
  const require = createRequire(import.meta.url);
  const internals = require('@grpc/grpc-js/build/src/stream-decoder.js') as {
    StreamDecoder?: { prototype: { write?: unknown } };
  };
  const proto = internals.StreamDecoder?.prototype;
  if (proto === undefined || typeof proto.write !== 'function') {
    throw new Error('@grpc/grpc-js has no StreamDecoder.write: update src/grpc/aligned-messages.ts');
  }
  proto.write = write;
  installed = true;
}
