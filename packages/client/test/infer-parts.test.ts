/**
 * `encodeInferRequestParts` / `encodeInferRequestBody` (issue 11): the parts are the bytes of
 * `encodeInferRequest` unjoined, the binary inputs' parts are views on the caller's typed arrays,
 * and the HTTP transport's choice between parts and one buffer follows the tail size.
 */
import { describe, expect, it } from 'vitest';
import { PARTS_MIN_TAIL_BYTES } from '../src/http/http-transport.js';
import {
  encodeInferRequest,
  encodeInferRequestBody,
  encodeInferRequestParts,
  type InferRequestOptions,
} from '@tritonserver-ts/protocol/http';
import { type InferInput } from '@tritonserver-ts/protocol';

const joined = (parts: readonly Uint8Array[]): Buffer => Buffer.concat(parts);

function fp32(elements: number): Float32Array {
  return Float32Array.from({ length: elements }, (_, i) => i * 0.25 - 7);
}

const CASES: readonly { name: string; inputs: InferInput[]; options?: InferRequestOptions }[] = [
  {
    name: 'the common path (binary inputs, no options)',
    inputs: [
      { name: 'INPUT0', datatype: 'FP32', shape: [2, 3], data: fp32(6) },
      { name: 'INPUT1', datatype: 'INT64', shape: [2], data: BigInt64Array.from([1n, -2n]) },
    ],
  },
  {
    name: 'the general path (a JSON input, BYTES, outputs, an id and a sequence)',
    inputs: [
      { name: 'A', datatype: 'FP32', shape: [4], data: fp32(4) },
      { name: 'B', datatype: 'INT32', shape: [2], data: [1, 2], binaryData: false },
      { name: 'C', datatype: 'BYTES', shape: [2], data: ['é', 'xyz'] },
    ],
    options: { requestId: 'r1', sequenceId: 7n, sequenceStart: true, outputs: [{ name: 'O' }] },
  },
  {
    name: 'no binary input',
    inputs: [{ name: 'B', datatype: 'INT32', shape: [2], data: [1, 2], binaryData: false }],
  },
];

describe('encodeInferRequestParts', () => {
  it.each(CASES)(
    'gives the bytes, header length and JSON of encodeInferRequest: $name',
    ({ inputs, options }) => {
      const one = encodeInferRequest(inputs, options);
      const parts = encodeInferRequestParts(inputs, options);
      expect(joined(parts.parts).equals(Buffer.from(one.body))).toBe(true);
      expect(parts.byteLength).toBe(one.body.byteLength);
      expect(parts.headerLength).toBe(one.headerLength);
      expect(parts.json).toEqual(one.json);
    },
  );

  it('sends each binary input of its own typed-array type as a view on the caller memory', () => {
    const a = fp32(1000);
    const b = BigInt64Array.from([5n, 6n, 7n]);
    const { parts, headerLength } = encodeInferRequestParts([
      { name: 'A', datatype: 'FP32', shape: [1000], data: a },
      { name: 'B', datatype: 'INT64', shape: [3], data: b },
    ]);
    expect(parts).toHaveLength(3);
    expect(parts[0]?.byteLength).toBe(headerLength);
    for (const [part, source] of [
      [parts[1], a],
      [parts[2], b],
    ] as const) {
      expect(part?.buffer).toBe(source.buffer);
      expect(part?.byteOffset).toBe(source.byteOffset);
      expect(part?.byteLength).toBe(source.byteLength);
    }
  });

  it('views a typed array at an offset into a larger buffer without copying it', () => {
    const backing = new Float32Array(64);
    const view = backing.subarray(8, 24);
    view.set(fp32(16));
    const { parts } = encodeInferRequestParts([{ name: 'A', datatype: 'FP32', shape: [16], data: view }]);
    expect(parts[1]?.buffer).toBe(backing.buffer);
    expect(parts[1]?.byteOffset).toBe(32);
    expect(Buffer.from(parts[1] as Uint8Array).equals(Buffer.from(view.buffer, 32, 64))).toBe(true);
  });

  it('copies plain values (they are converted into a new typed array, not the caller memory)', () => {
    const values = [1, 2, 3];
    const { parts } = encodeInferRequestParts([{ name: 'A', datatype: 'FP32', shape: [3], data: values }]);
    expect(Array.from(new Float32Array(parts[1]?.slice().buffer as ArrayBuffer))).toEqual(values);
  });
});

describe('encodeInferRequestBody (the HTTP transport: parts from PARTS_MIN_TAIL_BYTES)', () => {
  const input = (elements: number): InferInput[] => [
    { name: 'INPUT0', datatype: 'FP32', shape: [1, elements], data: fp32(elements) },
  ];

  it('keeps one buffer for the simple model (128-byte tail) and just under the threshold', () => {
    const data = Int32Array.from({ length: 16 }, (_, i) => i);
    const simple: InferInput[] = [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data },
    ];
    for (const inputs of [simple, input(PARTS_MIN_TAIL_BYTES / 4 - 1)]) {
      const encoded = encodeInferRequestBody(inputs, {}, {}, PARTS_MIN_TAIL_BYTES);
      expect('body' in encoded).toBe(true);
      expect(encoded).not.toHaveProperty('parts');
      const one = encodeInferRequest(inputs);
      expect(Buffer.from((encoded as { body: Uint8Array }).body).equals(Buffer.from(one.body))).toBe(true);
    }
  });

  it('gives parts at and over the threshold, with the same bytes', () => {
    for (const elements of [PARTS_MIN_TAIL_BYTES / 4, PARTS_MIN_TAIL_BYTES / 4 + 1, 3 * 224 * 224]) {
      const inputs = input(elements);
      const encoded = encodeInferRequestBody(inputs, {}, {}, PARTS_MIN_TAIL_BYTES);
      expect('parts' in encoded).toBe(true);
      const { parts, byteLength } = encoded as { parts: readonly Uint8Array[]; byteLength: number };
      const one = encodeInferRequest(inputs);
      expect(byteLength).toBe(one.body.byteLength);
      expect(joined(parts).equals(Buffer.from(one.body))).toBe(true);
    }
  });

  it('counts the whole binary tail against the threshold, not each input', () => {
    const half = PARTS_MIN_TAIL_BYTES / 8;
    const inputs: InferInput[] = [
      { name: 'A', datatype: 'FP32', shape: [half], data: fp32(half) },
      { name: 'B', datatype: 'FP32', shape: [half], data: fp32(half) },
    ];
    expect('parts' in encodeInferRequestBody(inputs, {}, {}, PARTS_MIN_TAIL_BYTES)).toBe(true);
  });
});
