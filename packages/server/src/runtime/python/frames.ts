/**
 * The binary framed protocol between the server and a Python stub (see ADR 0010). One frame:
 * `uint32 LE n` (bytes after this field), `uint32 LE h` (JSON header bytes), the JSON header, then
 * the payload: the raw bytes of every tensor the header references by `{offset, size}` (fixed-size
 * datatypes little-endian row-major, BYTES in Triton's 4-byte length-prefixed layout). Tensor data
 * is never encoded element by element.
 * @packageDocumentation
 */
import {
  BytesList,
  isDatatype,
  tensorDataFromBytes,
  tensorDataToBytes,
  type PackedTensor,
} from '@tritonserver-ts/protocol';

/** A tensor as a frame header references it. */
export interface TensorRef {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
  readonly offset: number;
  readonly size: number;
}

/** A decoded frame: its JSON header and payload. */
export interface Frame {
  readonly header: Record<string, unknown> & { readonly type: string };
  readonly payload: Uint8Array;
}

/** Builds a frame's payload while tensors are added to its header. */
export class PayloadBuilder {
  readonly #chunks: Uint8Array[] = [];
  #size = 0;

  /** Adds `tensor`'s bytes; returns its header reference. */
  add(tensor: PackedTensor): TensorRef {
    const bytes = tensorDataToBytes(tensor.datatype, tensor.data);
    const ref = {
      name: tensor.name,
      datatype: tensor.datatype,
      shape: [...tensor.shape],
      offset: this.#size,
      size: bytes.byteLength,
    };
    this.#chunks.push(bytes);
    this.#size += bytes.byteLength;
    return ref;
  }

  get chunks(): readonly Uint8Array[] {
    return this.#chunks;
  }
}

/** The buffers of one frame, ready to write (header and payload chunks are not copied together). */
export function encodeFrame(header: object, chunks: readonly Uint8Array[] = []): Buffer[] {
  const head = Buffer.from(JSON.stringify(header), 'utf8');
  let body = 0;
  for (const c of chunks) body += c.byteLength;
  if (4 + head.byteLength + body > 0xffff_ffff) {
    throw new Error(
      `a message to or from a python stub cannot exceed 4 GiB (this one has ${body} tensor bytes)`,
    );
  }
  const prefix = Buffer.allocUnsafe(8);
  prefix.writeUInt32LE(4 + head.byteLength + body, 0);
  prefix.writeUInt32LE(head.byteLength, 4);
  return [prefix, head, ...chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength))];
}

/** Reassembles frames from a byte stream. */
export class FrameReader {
  #pending: Buffer[] = [];
  #pendingBytes = 0;

  /** Feeds bytes; returns the frames completed by them. */
  push(chunk: Buffer): Frame[] {
    this.#pending.push(chunk);
    this.#pendingBytes += chunk.byteLength;
    const frames: Frame[] = [];
    for (;;) {
      if (this.#pendingBytes < 4) break;
      const first = this.#peek(4);
      const total = first.readUInt32LE(0);
      if (this.#pendingBytes < 4 + total) break;
      const frame = this.#take(4 + total);
      const headerLength = frame.readUInt32LE(4);
      const header = JSON.parse(frame.subarray(8, 8 + headerLength).toString('utf8')) as Frame['header'];
      frames.push({ header, payload: frame.subarray(8 + headerLength) });
    }
    return frames;
  }

  #peek(n: number): Buffer {
    if ((this.#pending[0] as Buffer).byteLength >= n) return this.#pending[0] as Buffer;
    const joined = Buffer.concat(this.#pending);
    this.#pending = [joined];
    return joined;
  }

  #take(n: number): Buffer {
    const head = this.#peek(n);
    const frame = head.subarray(0, n);
    const rest = head.subarray(n);
    this.#pending = rest.byteLength > 0 ? [rest, ...this.#pending.slice(1)] : this.#pending.slice(1);
    this.#pendingBytes -= n;
    return frame;
  }
}

/** The tensors a header references, as protocol tensors over the payload (fixed-size: views when aligned). */
export function decodeTensors(refs: unknown, payload: Uint8Array, what: string): PackedTensor[] {
  if (!Array.isArray(refs)) return [];
  return (refs as TensorRef[]).map((ref) => {
    if (!isDatatype(ref.datatype)) {
      throw new Error(
        `${what} '${ref.name}' has datatype '${ref.datatype}', which the protocol does not have`,
      );
    }
    const count = ref.shape.reduce((a, b) => a * b, 1);
    const bytes = payload.subarray(ref.offset, ref.offset + ref.size);
    return {
      name: ref.name,
      datatype: ref.datatype,
      shape: ref.shape,
      data:
        ref.datatype === 'BYTES'
          ? BytesList.fromSerialized(bytes, count, `${what} '${ref.name}'`)
          : tensorDataFromBytes(ref.datatype, bytes, count, `${what} '${ref.name}'`),
    };
  });
}
