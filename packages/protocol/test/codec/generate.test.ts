/**
 * The generate extension's JSON mapping (`src/http/generate.ts`) in both directions, as Triton's
 * `ConvertGenerateRequest` / `ExactMappingInput` / `ExactMappingOutput` map it, and the SSE framing
 * of `generate_stream` (its reading: sse.test.ts).
 */
import { describe, expect, it } from 'vitest';

import { BytesList } from '../../src/bytes-list.js';
import { ProtocolError } from '../../src/errors.js';
import {
  decodeGenerateEvent,
  decodeGenerateRequest,
  encodeGenerateError,
  encodeGenerateRequest,
  encodeGenerateResponse,
  frameServerSentEvent,
  generateInputShape,
  parseGenerateRequestBody,
  type GenerateModelInput,
} from '../../src/http/index.js';

const inputs: GenerateModelInput[] = [
  { name: 'text_input', datatype: 'BYTES', shape: [1] },
  { name: 'max_tokens', datatype: 'INT32', shape: [1] },
  { name: 'ids', datatype: 'INT64', shape: [-1] },
  { name: 'batched', datatype: 'FP32', shape: [-1, -1] },
  { name: 'pairs', datatype: 'FP32', shape: [-1, 2] },
  { name: 'half', datatype: 'FP16', shape: [-1] },
  { name: 'flag', datatype: 'BOOL', shape: [1] },
];

function decode(body: unknown, maxInputSize?: number) {
  return decodeGenerateRequest(body, inputs, maxInputSize === undefined ? {} : { maxInputSize });
}

function refusal(body: unknown, maxInputSize?: number): string {
  try {
    decode(body, maxInputSize);
  } catch (error) {
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).status).toBe(400);
    return (error as Error).message;
  }
  throw new Error('not refused');
}

describe('decodeGenerateRequest', () => {
  it('maps members named like inputs to inputs, the others to parameters, in document order', () => {
    const d = decode(
      parseGenerateRequestBody(
        '{"text_input":"What is Triton?","temperature":0.5,"parameters":{"max_tokens":16,"stream":false,"stop":"\\n"},"n":3}',
      ),
    );
    expect(d.id).toBeUndefined();
    expect(d.inputs.map((i) => [i.name, i.datatype, i.shape])).toEqual([
      ['text_input', 'BYTES', [1]],
      ['max_tokens', 'INT32', [1]],
    ]);
    expect(BytesList.isBytesList(d.inputs[0]?.data)).toBe(true);
    expect((d.inputs[0]?.data as BytesList).toStrings()).toEqual(['What is Triton?']);
    expect(Array.from(d.inputs[1]?.data as Int32Array)).toEqual([16]);
    expect(Object.entries(d.parameters)).toEqual([
      ['temperature', 0.5],
      ['stream', false],
      ['stop', '\n'],
      ['n', 3],
    ]);
  });

  it("reads 'id' as the request id and, as Triton, also keeps it as a parameter", () => {
    const d = decode({ id: 'r1', text_input: 'x' });
    expect(d.id).toBe('r1');
    expect(d.parameters).toEqual({ id: 'r1' });
    expect(refusal({ id: 5 })).toBe("Unable to parse 'id': attempt to access JSON non-string as string");
  });

  it('spreads an array over the shape: fixed dims first, the innermost variable dim takes the rest', () => {
    expect(generateInputShape('x', [-1], 5)).toEqual([5]);
    expect(generateInputShape('x', [-1, -1], 5)).toEqual([1, 5]);
    expect(generateInputShape('x', [-1, 2], 6)).toEqual([3, 2]);
    expect(generateInputShape('x', [2, -1, 3], 12)).toEqual([2, 2, 3]);
    expect(generateInputShape('x', [1], 1)).toEqual([1]);
    expect(generateInputShape('x', [-1], 0)).toEqual([0]);
    expect(() => generateInputShape('x', [2], 3)).toThrow(
      "The schema can not convert input 'x' to tensor with proper shape",
    );
    expect(() => generateInputShape('x', [3], 0)).toThrow(/can not convert input 'x'/);
    const d = decode({ ids: [1, 2, 9007199254740993n], batched: [0.5, 1.5], pairs: [1, 2, 3, 4] });
    expect(d.inputs.map((i) => i.shape)).toEqual([[3], [1, 2], [2, 2]]);
    expect(Array.from(d.inputs[0]?.data as BigInt64Array)).toEqual([1n, 2n, 9007199254740993n]);
    expect(Array.from(d.inputs[2]?.data as Float32Array)).toEqual([1, 2, 3, 4]);
  });

  it('refuses what Triton refuses, with its messages', () => {
    expect(refusal({ max_tokens: [1, 2] })).toBe(
      "The schema can not convert input 'max_tokens' to tensor with proper shape",
    );
    expect(refusal({ pairs: [1, 2, 3] })).toBe(
      "The schema can not convert input 'pairs' to tensor with proper shape",
    );
    expect(refusal({ text_input: 5 })).toBe(
      'Unable to parse JSON bytes array: attempt to access JSON non-string as string',
    );
    expect(refusal({ max_tokens: 'ten' })).toBe(
      "Unable to parse 'data': attempt to access JSON non-signed-integer as signed-integer",
    );
    expect(refusal({ flag: 1 })).toBe(
      "Unable to parse 'data': attempt to access JSON non-boolean as boolean",
    );
    expect(refusal({ ids: [[1, 2], [3]] })).toBe(
      "Unable to parse 'data': Shape does not match true shape of 'data' field",
    );
    expect(refusal({ half: [1] })).toBe(
      'receiving FP16 data via JSON is not supported. Please use the binary data format for input half',
    );
    expect(refusal({ other: null })).toBe(
      "parameter 'other' has invalid type. It should be either 'int', 'bool', or 'string'.",
    );
    expect(refusal({ other: { a: 1 } })).toMatch(/^parameter 'other' has invalid type/);
    expect(refusal({ parameters: 3 })).toBe(
      "Expected JSON object for keyword: 'parameters': attempt to access JSON non-object as object",
    );
    expect(refusal({ parameters: { ids: ['a'] } })).toBe(
      "Converting keyword: 'parameters': Unable to parse 'data': attempt to access JSON non-signed-integer as signed-integer",
    );
    expect(refusal([1, 2])).toBe('attempt to get members for non-object');
    expect(() =>
      decodeGenerateRequest({ parameters: {} }, [{ name: 'parameters', datatype: 'INT32', shape: [1] }]),
    ).toThrow("Keyword 'parameters' for nested schema also given as input tensor name");
    expect(() => parseGenerateRequestBody('{"a":')).toThrow(/^failed to parse the request JSON buffer: /);
  });

  it('bounds the inputs by --http-max-input-size (BYTES: UTF-8 length + 4 per string)', () => {
    expect(decode({ text_input: 'abcdef' }, 10).inputs).toHaveLength(1);
    expect(refusal({ text_input: 'abcdefg' }, 10)).toBe(
      "request size of 11 bytes with input 'text_input' of size 11 bytes exceeds the maximum allowed input size of 10. Use --http-max-input-size to increase the limit.",
    );
    expect(refusal({ max_tokens: 1, ids: [1, 2] }, 16)).toBe(
      "request size of 20 bytes with input 'ids' of size 16 bytes exceeds the maximum allowed input size of 16. Use --http-max-input-size to increase the limit.",
    );
  });
});

describe('encodeGenerateResponse', () => {
  const tensor = (name: string, datatype: string, shape: number[], data: unknown) => ({
    name,
    classification: false,
    tensor: { name, datatype, shape, data },
  });

  it('writes members in key order, single elements as scalars, BYTES as strings', () => {
    const text = encodeGenerateResponse({
      modelName: 'llm',
      modelVersion: '1',
      id: 'r1',
      parameters: { finish: 'stop', count: 2 },
      outputs: [
        tensor('text_output', 'BYTES', [1], BytesList.from(['Hello'])),
        tensor('OUT', 'INT32', [1, 1], Int32Array.of(7)),
        tensor('probs', 'FP32', [2], Float32Array.of(0.5, 0.25)),
        tensor('empty', 'INT32', [0], new Int32Array(0)),
      ] as never,
    });
    expect(text).toBe(
      '{"OUT":7,"count":2,"empty":[],"finish":"stop","id":"r1","model_name":"llm","model_version":"1","probs":[0.5,0.25],"text_output":"Hello"}',
    );
  });

  it('on a name clash keeps the reserved member, then the parameter, then the output', () => {
    const text = encodeGenerateResponse({
      modelName: 'm',
      modelVersion: '2',
      parameters: { model_name: 'x', out: true },
      outputs: [
        tensor('out', 'INT32', [1], Int32Array.of(1)),
        tensor('model_version', 'INT32', [1], Int32Array.of(3)),
      ] as never,
    });
    expect(text).toBe('{"model_name":"m","model_version":"2","out":true}');
  });

  it('frames events as Triton does and writes errors as {"error": …}', () => {
    expect(frameServerSentEvent('{"a":1}')).toBe('data: {"a":1}\n\n');
    expect(encodeGenerateError('bad "x"')).toBe('{"error":"bad \\"x\\""}');
  });
});

describe('client side: encodeGenerateRequest, decodeGenerateEvent', () => {
  it('round-trips a request through the server-side decoder', () => {
    const body = encodeGenerateRequest(
      { text_input: 'hi', ids: BigInt64Array.of(1n, 2n), batched: Float32Array.of(1, 2) },
      { id: 'q', parameters: { max_tokens: 4, temperature: 0.25 } },
    );
    expect(body).toBe(
      '{"id":"q","text_input":"hi","ids":[1,2],"batched":[1,2],"parameters":{"max_tokens":4,"temperature":0.25}}',
    );
    const d = decode(parseGenerateRequestBody(body));
    expect(d.inputs.map((i) => i.name)).toEqual(['text_input', 'ids', 'batched', 'max_tokens']);
    expect(d.parameters).toEqual({ id: 'q', temperature: 0.25 });
    expect(() => encodeGenerateRequest({ parameters: 1 })).toThrow(ProtocolError);
  });

  it('decodes responses and error events', () => {
    expect(decodeGenerateEvent('{"OUT":[1,2],"id":"r","model_name":"m","model_version":"1"}')).toEqual({
      kind: 'response',
      response: { modelName: 'm', modelVersion: '1', id: 'r', values: { OUT: [1, 2] } },
    });
    expect(decodeGenerateEvent('{"error":"boom"}')).toEqual({ kind: 'error', message: 'boom' });
    expect(() => decodeGenerateEvent('[1]')).toThrow(ProtocolError);
    expect(() => decodeGenerateEvent('{"x":1}')).toThrow(/model_name/);
  });
});
