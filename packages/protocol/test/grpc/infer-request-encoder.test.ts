/**
 * The one-copy `ModelInferRequest` encoder: its bytes are protobuf-es's `toBinary` bytes (and
 * Google's protobuf's, through the Python oracle) for requests with any number and size of raw
 * entries, they decode back to the request, and the service definition's `ModelInfer` and
 * `ModelStreamInfer` serializers use it.
 */
import { toBinary } from '@bufbuild/protobuf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ModelInferRequestSchema,
  create,
  decodeMessage,
  encodeModelInferRequest,
  modelInferRequestSerializers,
  serviceDefinition,
  toModelInferRequest,
  type ModelInferRequest,
} from '../../src/grpc/index.js';
import { startOracle } from './oracle.js';

/** A request with `raw` as its raw entries, one UINT8 input per entry. */
function requestWith(raw: Uint8Array[]): ModelInferRequest {
  return create(ModelInferRequestSchema, {
    modelName: 'm',
    modelVersion: '3',
    id: 'req-7',
    parameters: { priority: { parameterChoice: { case: 'uint64Param', value: 2n } } },
    inputs: raw.map((r, i) => ({ name: `IN${i}`, datatype: 'UINT8', shape: [1n, BigInt(r.byteLength)] })),
    outputs: [{ name: 'OUT' }],
    rawInputContents: raw,
  });
}

/** `n` bytes with a pattern that differs at every position modulo 251. */
function pattern(n: number, seed = 0): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i + seed) % 251;
  return out;
}

function expectSameBytes(message: ModelInferRequest): Buffer {
  const ours = encodeModelInferRequest(message);
  const reference = toBinary(ModelInferRequestSchema, message);
  expect(ours.byteLength).toBe(reference.byteLength);
  expect(ours.equals(reference)).toBe(true);
  return ours;
}

describe('encodeModelInferRequest: the bytes of toBinary', () => {
  it('no raw entries (typed contents), and no fields at all', () => {
    const typed = toModelInferRequest({
      modelName: 'simple',
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [1, 4], data: Int32Array.of(1, -2, 3, 4) }],
      request: { binaryData: false },
    });
    expect(typed.rawInputContents).toHaveLength(0);
    expectSameBytes(typed);
    expect(encodeModelInferRequest({}).byteLength).toBe(0);
  });

  it('one raw entry: the 602,112-byte food image', () => {
    const image = Float32Array.from({ length: 3 * 224 * 224 }, (_, i) => Math.sin(i));
    const message = toModelInferRequest({
      modelName: 'food_classifier',
      inputs: [{ name: 'image', datatype: 'FP32', shape: [1, 3, 224, 224], data: image }],
    });
    const bytes = expectSameBytes(message);
    // Exactly sized: the 602,112 bytes, their 3-byte length, the tag, and the other fields.
    expect(bytes.byteLength).toBeGreaterThan(602_112 + 4);
    expect(bytes.byteLength).toBeLessThan(602_112 + 100);
  });

  it('many raw entries of varint-boundary sizes, empty ones among them, views at offsets', () => {
    const backing = pattern(40_000, 5);
    const sizes = [0, 1, 127, 128, 0, 300, 16_383, 16_384, 0];
    const raw = sizes.map((n, i) => backing.subarray(i * 7, i * 7 + n));
    const message = requestWith(raw);
    const bytes = expectSameBytes(message);
    const back = decodeMessage(ModelInferRequestSchema, bytes);
    expect(back.rawInputContents.map((r) => r.byteLength)).toEqual(sizes);
    back.rawInputContents.forEach((r, i) => expect(Buffer.from(r).equals(Buffer.from(raw[i]!))).toBe(true));
  });

  it('only empty raw entries', () => {
    expectSameBytes(requestWith([new Uint8Array(0), new Uint8Array(0)]));
  });

  it('entries larger than 2^21 bytes (4-byte varint lengths) next to small ones', () => {
    const big = pattern(2 ** 21 + 3, 1);
    const bigger = pattern(3_000_001, 2);
    expectSameBytes(requestWith([big, pattern(10), bigger]));
  });

  it('plain fields (no message) are encoded as create() makes them', () => {
    const raw = [pattern(1000), pattern(2)];
    const init = {
      modelName: 'p',
      inputs: [{ name: 'A', datatype: 'UINT8', shape: [1000n] }],
      rawInputContents: raw,
    };
    const ours = encodeModelInferRequest(init);
    expect(ours.equals(toBinary(ModelInferRequestSchema, create(ModelInferRequestSchema, init)))).toBe(true);
  });

  it('a message with unknown fields keeps them where toBinary writes them (after field 7)', () => {
    const known = toBinary(ModelInferRequestSchema, requestWith([pattern(200)]));
    // Field 15, varint 1: not a field of ModelInferRequest.
    const withUnknown = decodeMessage(
      ModelInferRequestSchema,
      Buffer.concat([known, Buffer.from([0x78, 0x01])]),
    );
    expect(withUnknown.$unknown).toHaveLength(1);
    const bytes = expectSameBytes(withUnknown);
    expect(bytes.subarray(-2).toString('hex')).toBe('7801');
  });

  it('decodes back to the request (round trip through the serializers)', () => {
    const raw = [pattern(70_000, 3), new Uint8Array(0), pattern(129, 4)];
    const message = requestWith(raw);
    const buf = modelInferRequestSerializers.serialize(message);
    expect(Buffer.isBuffer(buf)).toBe(true);
    const back = modelInferRequestSerializers.deserialize(buf);
    const plain = (m: ModelInferRequest): unknown => ({
      ...m,
      rawInputContents: m.rawInputContents.map((r) => Array.from(r)),
    });
    expect(plain(back)).toEqual(plain(message));
    // Decoded raw entries are views into the received Buffer (no copy).
    expect(back.rawInputContents[0]?.buffer).toBe(buf.buffer);
  });
});

describe('the service definition', () => {
  it('ModelInfer and ModelStreamInfer serialize their requests with the one-copy encoder', () => {
    expect(serviceDefinition.ModelInfer.requestSerialize).toBe(encodeModelInferRequest);
    expect(serviceDefinition.ModelStreamInfer.requestSerialize).toBe(encodeModelInferRequest);
    // Other messages keep protobuf-es's serializer.
    expect(serviceDefinition.ModelReady.requestSerialize).not.toBe(encodeModelInferRequest);
  });
});

describe("Google's protobuf (Python) encodes the same bytes", () => {
  let oracle: ReturnType<typeof startOracle>;
  beforeAll(() => {
    oracle = startOracle();
  });
  afterAll(() => oracle.close());
  const b64 = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');

  it('the simple and food requests through the ModelInfer serializer', () => {
    const input0 = Int32Array.from({ length: 16 }, (_, i) => i);
    const input1 = new Int32Array(16).fill(1);
    const image = Float32Array.from({ length: 3 * 224 * 224 }, (_, i) => (i % 251) / 251);
    const simple = toModelInferRequest({
      modelName: 'simple',
      modelVersion: '1',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: input0 },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: input1 },
      ],
      request: { requestId: 'req-1', outputs: [{ name: 'OUTPUT0' }] },
    });
    const food = toModelInferRequest({
      modelName: 'food',
      inputs: [{ name: 'image', datatype: 'FP32', shape: [1, 3, 224, 224], data: image }],
    });
    const serialize = serviceDefinition.ModelInfer.requestSerialize;
    const answers = oracle.run([
      {
        type: 'inference.ModelInferRequest',
        tsBytes: serialize(simple),
        json: {
          model_name: 'simple',
          model_version: '1',
          id: 'req-1',
          inputs: [
            { name: 'INPUT0', datatype: 'INT32', shape: ['1', '16'] },
            { name: 'INPUT1', datatype: 'INT32', shape: ['1', '16'] },
          ],
          outputs: [{ name: 'OUTPUT0' }],
          raw_input_contents: [b64(new Uint8Array(input0.buffer)), b64(new Uint8Array(input1.buffer))],
        },
      },
      {
        type: 'inference.ModelInferRequest',
        tsBytes: serialize(food),
        json: {
          model_name: 'food',
          inputs: [{ name: 'image', datatype: 'FP32', shape: ['1', '3', '224', '224'] }],
          raw_input_contents: [b64(new Uint8Array(image.buffer))],
        },
      },
    ]);
    expect(answers).toHaveLength(2);
    for (const [i, answer] of answers.entries()) {
      const ours = i === 0 ? serialize(simple) : serialize(food);
      expect(answer.equal, JSON.stringify(answer.tsAsJson)).toBe(true);
      expect(ours.equals(answer.expected)).toBe(true);
    }
  });
});
