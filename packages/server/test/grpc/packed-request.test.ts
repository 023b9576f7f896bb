/**
 * The server's `ModelInferRequest` reader (`packed-request.ts`): `bytes_contents` gathered straight
 * from the wire into Triton's serialized layout, everything else exactly as protobuf-es decodes it
 * (compared field by field with `decodeMessage` on the same bytes), including messages whose
 * `contents` records repeat or interleave, unknown fields, and bytes that are not a message.
 */
import { deserializeBytesTensor, serializeByteTensor, type BytesList } from '@tritonserver-ts/protocol';
import {
  ModelInferRequestSchema,
  decodeMessage,
  encodeMessage,
  type ModelInferRequest,
} from '@tritonserver-ts/protocol/grpc';
import { describe, expect, it } from 'vitest';

import { decodeGrpcInferRequest } from '../../src/grpc/infer-request.js';
import {
  decodeModelInferRequest,
  packedBytesContents,
  packedBytesOf,
} from '../../src/grpc/packed-request.js';

const text = (s: string): Uint8Array => new TextEncoder().encode(s);

function request(inputs: object[], rest: object = {}): Uint8Array {
  return encodeMessage(ModelInferRequestSchema, { modelName: 'm', inputs, ...rest });
}

/** The message as protobuf-es reads it, with each input's bytes_contents as the reader packs them. */
function expectSameAsProtobufEs(bytes: Uint8Array): ModelInferRequest {
  const ours = decodeModelInferRequest(bytes);
  const theirs = decodeMessage(ModelInferRequestSchema, bytes);
  const elements = theirs.inputs.map((i) => i.contents?.bytesContents ?? []);
  const stripped = {
    ...theirs,
    inputs: theirs.inputs.map((i) =>
      i.contents === undefined ? i : { ...i, contents: { ...i.contents, bytesContents: [] } },
    ),
  };
  expect(ours).toEqual(stripped);
  ours.inputs.forEach((input, k) => {
    const packed = input.contents === undefined ? undefined : packedBytesContents(input.contents);
    const expected = elements[k] ?? [];
    if (expected.length === 0) expect(packed).toBeUndefined();
    else expect(packed).toEqual(serializeByteTensor(expected));
  });
  return ours;
}

describe('the ModelInferRequest reader', () => {
  it('packs bytes_contents per input and leaves the rest to protobuf-es', () => {
    const bytes = request(
      [
        {
          name: 'A',
          datatype: 'BYTES',
          shape: [3n],
          parameters: { p: { parameterChoice: { case: 'stringParam', value: 'x' } } },
          contents: { bytesContents: [text('hello'), new Uint8Array(0), text('wörld')] },
        },
        { name: 'B', datatype: 'INT32', shape: [2n], contents: { intContents: [1, -2] } },
        { name: 'C', datatype: 'BYTES', shape: [1n], contents: { bytesContents: [new Uint8Array(200)] } },
      ],
      {
        id: 'r1',
        outputs: [{ name: 'O' }],
        parameters: { q: { parameterChoice: { case: 'int64Param', value: 5n } } },
      },
    );
    const ours = expectSameAsProtobufEs(bytes);
    expect(ours.inputs[0]?.contents?.bytesContents).toEqual([]);
    expect(packedBytesOf(ours)).toBe(4 * 3 + 11 + 4 + 200);
    // The core gets the serialized layout as the input's data, as for raw_input_contents.
    const core = decodeGrpcInferRequest(ours).core;
    expect(
      deserializeBytesTensor((core.inputs[0]?.data as BytesList).serialized).map((e) =>
        Buffer.from(e).toString(),
      ),
    ).toEqual(['hello', '', 'wörld']);
  });

  it('hands messages without bytes_contents to protobuf-es unchanged (raw contents stay views)', () => {
    const bytes = Buffer.from(
      request([{ name: 'A', datatype: 'BYTES', shape: [1n] }], {
        rawInputContents: [serializeByteTensor([text('x')])],
      }),
    );
    const ours = expectSameAsProtobufEs(bytes);
    expect(ours.rawInputContents[0]?.buffer).toBe(bytes.buffer);
    expect(packedBytesOf(ours)).toBe(0);
  });

  it('merges repeated contents records and keeps the other fields between bytes elements', () => {
    // Hand-made: contents of input A twice, bytes elements around an int field (which protobuf-es
    // keeps too, and the core then refuses as two content fields).
    const tag = (field: number, wireType: number): number => (field << 3) | wireType;
    const ld = (field: number, payload: Uint8Array): Buffer =>
      Buffer.concat([Buffer.from([tag(field, 2), payload.byteLength]), payload]);
    const contents1 = Buffer.concat([ld(8, text('a')), Buffer.from([tag(2, 0), 7]), ld(8, text('bc'))]);
    const contents2 = ld(8, text(''));
    const input = Buffer.concat([
      ld(1, text('A')),
      ld(2, text('BYTES')),
      ld(5, contents1),
      Buffer.from([tag(15, 0), 1]), // unknown field
      ld(5, contents2),
    ]);
    const bytes = Buffer.concat([ld(1, text('m')), ld(5, input), Buffer.from([tag(14, 5), 1, 2, 3, 4])]);
    const ours = expectSameAsProtobufEs(bytes);
    expect(ours.inputs[0]?.contents?.intContents).toEqual([7]);
  });

  it('refuses what protobuf-es refuses, with its error', () => {
    const good = request([
      { name: 'A', datatype: 'BYTES', shape: [1n], contents: { bytesContents: [text('a')] } },
    ]);
    for (const bad of [good.subarray(0, good.byteLength - 1), Buffer.from([0x2a, 0x05, 0x42, 0x09, 0x61])]) {
      let theirs: unknown;
      try {
        decodeMessage(ModelInferRequestSchema, bad);
      } catch (error) {
        theirs = error;
      }
      expect(theirs).toBeInstanceOf(Error);
      expect(() => decodeModelInferRequest(bad)).toThrow((theirs as Error).message);
    }
  });

  it('reads four million empty elements into one 16 MiB buffer without an object per element', () => {
    const n = 4 * 1024 * 1024;
    const contents = Buffer.alloc(2 * n);
    for (let i = 0; i < n; i++) contents[2 * i] = 0x42;
    const head = (field: number, length: number): Buffer => {
      const out = [(field << 3) | 2];
      for (let v = length; ; v = Math.floor(v / 128)) {
        if (v < 128) {
          out.push(v);
          break;
        }
        out.push((v % 128) | 128);
      }
      return Buffer.from(out);
    };
    const name = Buffer.concat([head(1, 1), text('A'), head(2, 5), text('BYTES')]);
    const input = Buffer.concat([name, head(5, contents.byteLength), contents]);
    const bytes = Buffer.concat([head(1, 1), text('m'), head(5, input.byteLength), input]);
    const heapBefore = process.memoryUsage().heapUsed;
    const ours = decodeModelInferRequest(bytes);
    const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
    const packed = packedBytesContents(ours.inputs[0]?.contents as never) as Uint8Array;
    expect(packed.byteLength).toBe(4 * n);
    expect(packed.every((b) => b === 0)).toBe(true);
    // protobuf-es would hold four million Uint8Arrays (hundreds of MiB of heap).
    expect(heapGrowth).toBeLessThan(32 * 1024 * 1024);
  });
});
