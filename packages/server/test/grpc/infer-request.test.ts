/**
 * The one `ModelInferRequest` decoder (`decodeGrpcInferRequest`), unit by unit: requests built by
 * the client's `toModelInferRequest` from the golden vectors' samples
 * (`@tritonserver-ts/client/testing`, shared with packages/client/test/grpc-protocol/golden.test.ts)
 * and hand-made ones, through the protobuf bytes, into the core's request. The wire behaviour is in
 * negative.test.ts and endpoints.test.ts; these pin the decoder's own refusals and what it hands the
 * core.
 */
import {
  ModelInferRequestSchema,
  decodeMessage,
  encodeMessage,
  toModelInferRequest,
  type ModelInferRequest,
} from '@tritonserver-ts/protocol/grpc';
import { create } from '@tritonserver-ts/protocol/grpc';
import {
  SEQUENCE_REQUEST,
  SIMPLE_INPUT0,
  SIMPLE_INPUT1,
  SIMPLE_REQUEST,
  TYPED_REQUEST,
} from '@tritonserver-ts/protocol/testing';
import { BytesList } from '@tritonserver-ts/protocol';
import { describe, expect, it } from 'vitest';

import { ServerError } from '../../src/common/errors.js';
import type { CoreInferInput } from '../../src/common/types.js';
import { decodeGrpcInferRequest } from '../../src/grpc/infer-request.js';

function invalidArg(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).kind).toBe('INVALID_ARG');
    return (error as ServerError).message;
  }
  throw new Error('expected a ServerError');
}

/** Encodes and decodes the message, as the server receives it. */
function received(message: ModelInferRequest): { bytes: Uint8Array; message: ModelInferRequest } {
  const bytes = encodeMessage(ModelInferRequestSchema, message);
  return { bytes, message: decodeMessage(ModelInferRequestSchema, bytes) };
}

const raw = (values: number[]): Uint8Array => new Uint8Array(new Int32Array(values).buffer);
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const bytesOf = (view: ArrayBufferView): number[] =>
  Array.from(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
/** The bytes of an input's decoded data (BYTES in the wire's length-prefixed layout). */
const dataBytes = (input: CoreInferInput | undefined): number[] => {
  const data = input?.data;
  if (data instanceof BytesList) return bytesOf(data.serialized);
  if (data === undefined || Array.isArray(data)) throw new Error(`input ${input?.name} has no packed data`);
  return bytesOf(data);
};

describe('client-built requests decode to what was sent', () => {
  it("the 'simple' request: raw INT32 inputs in input order, requested outputs, id and version", () => {
    const { message } = received(toModelInferRequest(SIMPLE_REQUEST));
    const { core } = decodeGrpcInferRequest(message);
    expect(core.inputs.map((i) => [i.name, i.datatype, i.shape, dataBytes(i)])).toEqual([
      ['INPUT0', 'INT32', [1, 16], bytesOf(SIMPLE_INPUT0)],
      ['INPUT1', 'INT32', [1, 16], bytesOf(SIMPLE_INPUT1)],
    ]);
    expect(core).toMatchObject({ modelName: 'simple', modelVersion: '1', id: 'req-1' });
    expect(core.outputs?.map((o) => o.name)).toEqual(['OUTPUT0', 'OUTPUT1']);
  });

  it('sequence and custom parameters, a BYTES raw input, a shared-memory input, classification and shared-memory outputs', () => {
    // The sample's uint64 custom parameter (a bigint past int64) is refused, as tritonserver does.
    expect(
      invalidArg(() => decodeGrpcInferRequest(received(toModelInferRequest(SEQUENCE_REQUEST)).message)),
    ).toBe(
      "invalid value type for 'custom_big' parameter, expected int64_param, bool_param, or string_param.",
    );
    const { custom_big: _uint64, ...parameters } = SEQUENCE_REQUEST.request?.parameters ?? {};
    const { message } = received(
      toModelInferRequest({ ...SEQUENCE_REQUEST, request: { ...SEQUENCE_REQUEST.request, parameters } }),
    );
    const { core } = decodeGrpcInferRequest(message);
    expect(core.parameters).toEqual({
      sequence_id: 42,
      sequence_start: true,
      sequence_end: false,
      custom_s: 'x',
      custom_b: true,
      custom_i: -5,
      custom_f: 0.25,
    });
    const [text, img] = core.inputs as CoreInferInput[];
    // BYTES raw data is decoded into one buffer in the wire's length-prefixed form.
    expect(dataBytes(text)).toEqual([2, 0, 0, 0, ...utf8('ab'), 2, 0, 0, 0, ...utf8('ü')]);
    expect(img?.data).toBeUndefined();
    expect(img?.sharedMemory).toEqual({ region: 'r0', byteSize: 4, offset: 16 });
    expect(core.outputs).toEqual([
      { name: 'SCORES', classCount: 3, parameters: { classification: 3 } },
      {
        name: 'EMB',
        sharedMemory: { region: 'r1', byteSize: 64, offset: 0 },
        parameters: { shared_memory_region: 'r1', shared_memory_byte_size: 64 },
      },
    ]);
  });

  it("typed contents become the datatype's raw bytes (INT8/INT16 from int_contents, UINT8/UINT16 from uint_contents, 64-bit exact, BOOL, BYTES)", () => {
    const { message } = received(toModelInferRequest(TYPED_REQUEST));
    expect(message.rawInputContents).toHaveLength(0);
    const { core } = decodeGrpcInferRequest(message);
    const byName = new Map(core.inputs.map((i) => [i.name, dataBytes(i)]));
    expect(byName.get('I8')).toEqual(bytesOf(new Int8Array([-128, 0, 127])));
    expect(byName.get('I16')).toEqual(bytesOf(new Int16Array([-32768, 32767])));
    expect(byName.get('U8')).toEqual([0, 255]);
    expect(byName.get('U16')).toEqual(bytesOf(new Uint16Array([0, 65535])));
    expect(byName.get('I32')).toEqual(bytesOf(new Int32Array([-2147483648])));
    expect(byName.get('U32')).toEqual(bytesOf(new Uint32Array([4294967295])));
    expect(byName.get('F32')).toEqual(bytesOf(new Float32Array([1.5])));
    expect(byName.get('I64')).toEqual(bytesOf(new BigInt64Array([2n ** 63n - 1n, -(2n ** 63n)])));
    expect(byName.get('U64')).toEqual(bytesOf(new BigUint64Array([2n ** 64n - 1n])));
    expect(byName.get('B')).toEqual([1, 0]);
    expect(byName.get('F64')).toEqual(bytesOf(new Float64Array([0.5, -1e300])));
    expect(byName.get('S')).toEqual([1, 0, 0, 0, 0x61, 2, 0, 0, 0, 0xff, 0]);
  });
});

describe("refusals with tritonserver's messages", () => {
  it('refuses contents when raw_input_contents is used', () => {
    const request = create(ModelInferRequestSchema, {
      modelName: 'simple',
      inputs: [
        { name: 'A', datatype: 'INT32', shape: [1n] },
        { name: 'B', datatype: 'INT32', shape: [1n], contents: { intContents: [1] } },
      ],
      rawInputContents: [raw([1])],
    });
    expect(invalidArg(() => decodeGrpcInferRequest(request))).toBe(
      "contents field must not be specified when using raw_input_contents for 'B' for model 'simple'",
    );
  });

  it('an input without a raw entry is refused; entries left over are ignored', () => {
    const missing = create(ModelInferRequestSchema, {
      modelName: 'simple',
      inputs: [
        { name: 'A', datatype: 'INT32', shape: [1n] },
        { name: 'B', datatype: 'INT32', shape: [1n] },
      ],
      rawInputContents: [raw([1])],
    });
    expect(invalidArg(() => decodeGrpcInferRequest(missing))).toBe(
      "unable to find data for input tensor 'B' for model 'simple' in request.",
    );
    const none = create(ModelInferRequestSchema, {
      modelName: 'simple',
      inputs: [{ name: 'A', datatype: 'INT32', shape: [1n] }],
    });
    expect(invalidArg(() => decodeGrpcInferRequest(none))).toBe(
      "unable to find data for input tensor 'A' for model 'simple' in request.",
    );
    const extra = create(ModelInferRequestSchema, {
      modelName: 'simple',
      inputs: [{ name: 'A', datatype: 'INT32', shape: [1n] }],
      rawInputContents: [raw([1]), raw([2])],
    });
    const inputs = decodeGrpcInferRequest(extra).core.inputs;
    expect(inputs).toHaveLength(1);
    expect(dataBytes(inputs[0])).toEqual(bytesOf(new Int32Array([1])));
  });

  it('refuses contents on a shared-memory input', () => {
    const request = create(ModelInferRequestSchema, {
      modelName: 'simple',
      inputs: [
        {
          name: 'A',
          datatype: 'INT32',
          shape: [1n],
          parameters: {
            shared_memory_region: { parameterChoice: { case: 'stringParam', value: 'r' } },
            shared_memory_byte_size: { parameterChoice: { case: 'int64Param', value: 4n } },
          },
          contents: { intContents: [1] },
        },
      ],
    });
    expect(invalidArg(() => decodeGrpcInferRequest(request))).toBe(
      "unexpected 'content' provided when using shared memory for input tensor 'A' for model 'simple'",
    );
  });

  it('refuses wrongly typed shared-memory, classification and custom parameters and duplicates', () => {
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
    expect(invalidArg(() => decodeGrpcInferRequest(shm))).toBe(
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
    expect(invalidArg(() => decodeGrpcInferRequest(cls))).toBe(
      "invalid value type for 'classification' parameter, expected int64_param",
    );
    // tritonserver takes no uint64 custom parameter (the client sends one for values past int64).
    const big = toModelInferRequest({
      modelName: 'm',
      inputs: [],
      request: { parameters: { custom_big: 2n ** 63n + 1n } },
    });
    expect(invalidArg(() => decodeGrpcInferRequest(big))).toBe(
      "invalid value type for 'custom_big' parameter, expected int64_param, bool_param, or string_param.",
    );
    const dup = create(ModelInferRequestSchema, { outputs: [{ name: 'Y' }, { name: 'Y' }] });
    expect(invalidArg(() => decodeGrpcInferRequest(dup))).toBe("output 'Y' already exists in request");
  });

  it('leaves datatype and byte-size refusals to the core (which knows the model), in its order', () => {
    const request = create(ModelInferRequestSchema, {
      modelName: 'simple',
      inputs: [{ name: 'A', datatype: 'FP8', shape: [2n] }],
      rawInputContents: [new Uint8Array(7)],
    });
    const [input] = decodeGrpcInferRequest(request).core.inputs;
    expect(input).toMatchObject({ name: 'A', datatype: 'FP8', shape: [2] });
    // An unknown datatype: nothing decoded, the core refuses the datatype.
    expect(input?.data).toBeUndefined();
    // 7 bytes for two FP32 elements: the core's refusal, kept for the core to throw after its
    // datatype and shape checks.
    const sized = create(ModelInferRequestSchema, {
      modelName: 'simple',
      inputs: [{ name: 'A', datatype: 'FP32', shape: [2n] }],
      rawInputContents: [new Uint8Array(7)],
    });
    const [fp32] = decodeGrpcInferRequest(sized).core.inputs;
    expect(fp32?.data).toBeUndefined();
    expect(fp32?.dataError?.message).toBe(
      "input byte size mismatch for input 'A' for model 'simple'. Expected 8, got 7",
    );
  });
});

it('raw inputs are decoded as views into the received message (no copy)', () => {
  const { bytes, message } = received(
    create(ModelInferRequestSchema, {
      modelName: 'm',
      inputs: [{ name: 'A', datatype: 'UINT8', shape: [3n] }],
      rawInputContents: [new Uint8Array([1, 2, 3])],
    }),
  );
  const [input] = decodeGrpcInferRequest(message).core.inputs;
  expect((input?.data as Uint8Array).buffer).toBe(bytes.buffer);
  expect(dataBytes(input)).toEqual([1, 2, 3]);
});
