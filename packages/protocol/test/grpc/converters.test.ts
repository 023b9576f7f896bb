/** The protobuf ↔ codec converters: refusals, edge cases and views (no oracle needed). */
import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/errors.js';
import type { InferRequestOptions } from '../../src/http/hints.js';
import {
  ModelInferResponseSchema,
  create,
  decodeMessage,
  exactInteger,
  fromInferParameter,
  fromModelInferResponse,
  toInferParameter,
  toModelInferRequest,
} from '../../src/grpc/index.js';

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
    // The user-facing options (with their HTTP-only hints) may be passed as they are.
    const userOptions: InferRequestOptions = {
      binaryDataOutput: false,
      outputs: [{ name: 'Y', binaryData: false }],
    };
    const message = toModelInferRequest({ modelName: 'm', inputs: [], request: userOptions });
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

// The server-side reader of ModelInferRequest is the embedded server's: its tests are in
// packages/server/test/grpc/infer-request.test.ts.
