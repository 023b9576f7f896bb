/** The protobuf ↔ codec converters: refusals, edge cases and views (no oracle needed). */
import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/protocol/errors.js';
import {
  ModelInferRequestSchema,
  ModelInferResponseSchema,
  create,
  decodeMessage,
  encodeMessage,
  exactInteger,
  fromInferParameter,
  fromModelInferRequest,
  fromModelInferResponse,
  toInferParameter,
  toModelInferRequest,
} from '../../src/protocol/grpc/index.js';

function protocolError(run: () => unknown): ProtocolError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ProtocolError);
    return error as ProtocolError;
  }
  throw new Error('expected a ProtocolError');
}

describe('client side', () => {
  it('refuses typed and raw inputs in one request (Triton refuses contents with raw_input_contents)', () => {
    const error = protocolError(() =>
      toModelInferRequest({
        modelName: 'm',
        inputs: [
          { name: 'A', datatype: 'INT32', shape: [1], data: [1] },
          { name: 'B', datatype: 'INT32', shape: [1], data: [2], binaryData: false },
        ],
      }),
    );
    expect(error.code).toBe('INVALID_FIELD');
    expect(error.message).toContain("input 'B'");
  });

  it('refuses FP16 / BF16 as typed contents (raw only)', () => {
    const error = protocolError(() =>
      toModelInferRequest({
        modelName: 'm',
        inputs: [{ name: 'H', datatype: 'FP16', shape: [1], data: [1.5] }],
        request: { binaryData: false },
      }),
    );
    expect(error.code).toBe('DATATYPE_NOT_JSON');
  });

  it('refuses reserved parameters, element-count mismatches and inputs without data', () => {
    expect(
      protocolError(() =>
        toModelInferRequest({ modelName: 'm', inputs: [], request: { parameters: { triton_x: 1 } } }),
      ).code,
    ).toBe('RESERVED_PARAMETER');
    expect(
      protocolError(() =>
        toModelInferRequest({
          modelName: 'm',
          inputs: [{ name: 'A', datatype: 'INT32', shape: [2], data: [1] }],
        }),
      ).code,
    ).toBe('ELEMENT_COUNT_MISMATCH');
    expect(
      protocolError(() =>
        toModelInferRequest({ modelName: 'm', inputs: [{ name: 'A', datatype: 'INT32', shape: [1] }] }),
      ).code,
    ).toBe('INVALID_VALUE');
  });

  it('HTTP-only options are not sent over gRPC', () => {
    const message = toModelInferRequest({
      modelName: 'm',
      inputs: [],
      request: { binaryDataOutput: false, outputs: [{ name: 'Y', binaryData: false }] },
    });
    expect(message.parameters).toEqual({});
    expect(message.outputs[0]?.parameters).toEqual({});
  });

  it('parameters: 64-bit values exact, numbers as int64 or double', () => {
    expect(toInferParameter(2n ** 64n - 1n).parameterChoice).toEqual({
      case: 'uint64Param',
      value: 2n ** 64n - 1n,
    });
    expect(toInferParameter(-3).parameterChoice).toEqual({ case: 'int64Param', value: -3n });
    expect(toInferParameter(0.5).parameterChoice).toEqual({ case: 'doubleParam', value: 0.5 });
    expect(protocolError(() => toInferParameter(2n ** 64n)).code).toBe('INVALID_VALUE');
    expect(protocolError(() => toInferParameter(Number.NaN)).code).toBe('INVALID_VALUE');
    expect(fromInferParameter(toInferParameter(2n ** 60n))).toBe(2n ** 60n);
    expect(fromInferParameter(toInferParameter(7))).toBe(7);
    expect(exactInteger(2n ** 53n)).toBe(2n ** 53n);
  });

  it('response: a raw entry of the wrong size is a protocol error; an empty entry with elements has no data', () => {
    const wrong = create(ModelInferResponseSchema, {
      outputs: [{ name: 'Y', datatype: 'FP32', shape: [2n] }],
      rawOutputContents: [new Uint8Array(4)],
    });
    expect(protocolError(() => fromModelInferResponse(wrong)).code).toBe('BINARY_SIZE_MISMATCH');
    const empty = create(ModelInferResponseSchema, {
      outputs: [
        { name: 'Y', datatype: 'FP32', shape: [2n] },
        { name: 'Z', datatype: 'FP32', shape: [0n] },
      ],
      rawOutputContents: [new Uint8Array(0), new Uint8Array(0)],
    });
    const decoded = fromModelInferResponse(empty);
    expect(decoded.outputs[0]?.data).toBeUndefined();
    expect(decoded.outputs[1]?.data).toEqual(new Float32Array(0));
    const unknown = create(ModelInferResponseSchema, {
      outputs: [{ name: 'Y', datatype: 'FP8', shape: [] }],
    });
    expect(protocolError(() => fromModelInferResponse(unknown)).code).toBe('UNKNOWN_DATATYPE');
  });

  it('malformed bytes are a protocol error naming the message', () => {
    const error = protocolError(() =>
      decodeMessage(ModelInferResponseSchema, new Uint8Array([0x0a, 0x05, 0x41])),
    );
    expect(error.code).toBe('INVALID_FIELD');
    expect(error.message).toContain('inference.ModelInferResponse');
  });
});

describe('server side', () => {
  const raw = (values: number[]): Uint8Array => new Uint8Array(new Int32Array(values).buffer);

  it('refuses contents when raw_input_contents is used', () => {
    const request = create(ModelInferRequestSchema, {
      modelName: 'simple',
      inputs: [
        { name: 'A', datatype: 'INT32', shape: [1n] },
        { name: 'B', datatype: 'INT32', shape: [1n], contents: { intContents: [1] } },
      ],
      rawInputContents: [raw([1])],
    });
    expect(protocolError(() => fromModelInferRequest(request)).message).toBe(
      "contents field must not be specified when using raw_input_contents for 'B' for model 'simple'",
    );
  });

  it("an input without a raw entry is refused with tritonserver's message; entries left over are ignored", () => {
    const missing = create(ModelInferRequestSchema, {
      modelName: 'simple',
      inputs: [
        { name: 'A', datatype: 'INT32', shape: [1n] },
        { name: 'B', datatype: 'INT32', shape: [1n] },
      ],
      rawInputContents: [raw([1])],
    });
    expect(protocolError(() => fromModelInferRequest(missing)).message).toBe(
      "unable to find data for input tensor 'B' for model 'simple' in request.",
    );
    const none = create(ModelInferRequestSchema, {
      modelName: 'simple',
      inputs: [{ name: 'A', datatype: 'INT32', shape: [1n] }],
    });
    expect(protocolError(() => fromModelInferRequest(none)).message).toBe(
      "unable to find data for input tensor 'A' for model 'simple' in request.",
    );
    const extra = create(ModelInferRequestSchema, {
      modelName: 'simple',
      inputs: [{ name: 'A', datatype: 'INT32', shape: [1n] }],
      rawInputContents: [raw([1]), raw([2])],
    });
    expect(fromModelInferRequest(extra).inputs[0]?.data).toEqual(new Int32Array([1]));
  });

  it('refuses contents on a shared-memory input', () => {
    const request = create(ModelInferRequestSchema, {
      modelName: 'simple',
      inputs: [
        {
          name: 'A',
          datatype: 'INT32',
          shape: [1n],
          parameters: { shared_memory_region: { parameterChoice: { case: 'stringParam', value: 'r' } } },
          contents: { intContents: [1] },
        },
      ],
    });
    expect(protocolError(() => fromModelInferRequest(request)).message).toBe(
      "unexpected 'content' provided when using shared memory for input tensor 'A' for model 'simple'",
    );
  });

  it('refuses wrongly typed shared-memory and classification parameters, unknown datatypes, duplicates', () => {
    const shm = create(ModelInferRequestSchema, {
      inputs: [
        {
          name: 'A',
          datatype: 'INT32',
          shape: [1n],
          parameters: { shared_memory_region: { parameterChoice: { case: 'int64Param', value: 1n } } },
        },
      ],
    });
    expect(protocolError(() => fromModelInferRequest(shm)).message).toBe(
      "invalid value type for 'shared_memory_region' parameter for tensor 'A', expected string_param.",
    );
    const cls = create(ModelInferRequestSchema, {
      outputs: [
        {
          name: 'Y',
          parameters: { classification: { parameterChoice: { case: 'stringParam', value: '3' } } },
        },
      ],
    });
    expect(protocolError(() => fromModelInferRequest(cls)).message).toBe(
      "invalid value type for 'classification' parameter, expected int64_param",
    );
    const unknown = create(ModelInferRequestSchema, {
      inputs: [{ name: 'A', datatype: 'FP8', shape: [1n] }],
    });
    expect(protocolError(() => fromModelInferRequest(unknown)).code).toBe('UNKNOWN_DATATYPE');
    const dup = create(ModelInferRequestSchema, { outputs: [{ name: 'Y' }, { name: 'Y' }] });
    expect(protocolError(() => fromModelInferRequest(dup)).code).toBe('DUPLICATE_OUTPUT');
  });

  it('a raw entry that does not divide into elements is refused with the core message', () => {
    const request = create(ModelInferRequestSchema, {
      modelName: 'simple',
      inputs: [{ name: 'A', datatype: 'INT32', shape: [2n] }],
      rawInputContents: [new Uint8Array(7)],
    });
    expect(protocolError(() => fromModelInferRequest(request)).message).toBe(
      "input byte size mismatch for input 'A' for model 'simple'. Expected 8, got 7",
    );
  });

  it('raw inputs decode as views into the received message when aligned', () => {
    const bytes = encodeMessage(ModelInferRequestSchema, {
      modelName: 'm',
      inputs: [{ name: 'A', datatype: 'UINT8', shape: [3n] }],
      rawInputContents: [new Uint8Array([1, 2, 3])],
    });
    const decoded = fromModelInferRequest(decodeMessage(ModelInferRequestSchema, bytes));
    expect((decoded.inputs[0]?.data as Uint8Array).buffer).toBe(bytes.buffer);
  });
});
