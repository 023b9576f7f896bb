import { describe, expect, it } from 'vitest';
import { encodeInferRequest } from '../../src/http/infer-request.js';
import { type InferInput } from '../../src/index.js';

// `parameters: {}` adds nothing to the JSON but sends the request down the general path (the JSON
// object built field by field and stringified), so both encodings must be byte-identical.
const general = (inputs: readonly InferInput[]) => encodeInferRequest(inputs, { parameters: {} });

const cases: Record<string, InferInput[]> = {
  'two INT32 inputs': [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16).fill(7) },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
  ],
  'names that need escaping, BYTES strings, FP16 and an empty tensor': [
    { name: 'in "quoted" \\ é 🍕 \u0001', datatype: 'BYTES', shape: [2], data: ['a', 'ünï'] },
    { name: 'half', datatype: 'FP16', shape: [1, 2], data: [1.5, -2] },
    { name: 'empty', datatype: 'FP32', shape: [0, 3], data: new Float32Array(0) },
  ],
  'no inputs': [],
};

describe('encodeInferRequest, the common request without building the JSON object', () => {
  for (const [what, inputs] of Object.entries(cases)) {
    it(`gives the general path's bytes and JSON: ${what}`, () => {
      const fast = encodeInferRequest(inputs);
      const slow = general(inputs);
      expect(Buffer.from(fast.body).equals(Buffer.from(slow.body))).toBe(true);
      expect(fast.headerLength).toBe(slow.headerLength);
      expect(fast.json).toEqual(slow.json);
    });
  }

  it('refuses an element count that does not match the shape with the same error', () => {
    const bad: InferInput[] = [{ name: 'x', datatype: 'INT32', shape: [1, 3], data: new Int32Array(4) }];
    expect(() => encodeInferRequest(bad)).toThrow("input 'x' has 4 elements but shape [1,3] expects 3");
    expect(() => general(bad)).toThrow("input 'x' has 4 elements but shape [1,3] expects 3");
  });
});
