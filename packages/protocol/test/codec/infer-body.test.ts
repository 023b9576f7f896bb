import { describe, expect, it } from 'vitest';
import {
  decodeInferRequest,
  encodeInferRequest,
  encodeInferRequestBody,
  encodeRawBinaryRequest,
  outputWantsBinary,
} from '../../src/http/infer-request.js';
import { decodeInferResponse, encodeInferResponse } from '../../src/http/infer-response.js';
import { splitRequestOptions, type InferRequestOptions } from '../../src/http/hints.js';
import { ProtocolError, type InferInput, type ProtocolErrorCode } from '../../src/index.js';

const utf8 = (s: string) => new TextEncoder().encode(s);

function failure(fn: () => unknown): { code: ProtocolErrorCode; message: string } {
  try {
    fn();
  } catch (e) {
    if (e instanceof ProtocolError) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected a ProtocolError');
}

const simpleHeader =
  '{"inputs":[{"name":"A","shape":[2],"datatype":"INT32","parameters":{"binary_data_size":8}}]}';
const simpleBody = new Uint8Array([...utf8(simpleHeader), 1, 0, 0, 0, 2, 0, 0, 0]);
const simpleLength = String(utf8(simpleHeader).length);

describe('encodeInferRequest', () => {
  it('refuses reserved custom parameters and triton_ prefixed keys', () => {
    const input = { name: 'A', datatype: 'INT32' as const, shape: [1], data: [1] };
    for (const key of ['sequence_id', 'priority', 'binary_data_output', 'headers', 'triton_x']) {
      expect(failure(() => encodeInferRequest([input], { parameters: { [key]: 1 } })).code).toBe(
        'RESERVED_PARAMETER',
      );
    }
  });

  it('sends numeric and bigint sequence ids with both flags and omits a zero id and zero priority', () => {
    const input = { name: 'A', datatype: 'INT32' as const, shape: [1], data: [1] };
    expect(encodeInferRequest([input], { sequenceId: 2n ** 63n, sequenceEnd: true }).json.parameters).toEqual(
      {
        sequence_id: 2n ** 63n,
        sequence_start: false,
        sequence_end: true,
        binary_data_output: true,
      },
    );
    const plain = encodeInferRequest([input], { sequenceId: 0, priority: 0, binaryDataOutput: false });
    expect(plain.json.parameters).toBeUndefined();
    expect(new TextDecoder().decode(encodeInferRequest([input], { sequenceId: 2n ** 63n }).body)).toContain(
      '"sequence_id":9223372036854775808',
    );
  });

  it('puts shared-memory inputs and outputs in parameters with no data', () => {
    const { json, headerLength } = encodeInferRequest(
      [{ name: 'A', datatype: 'FP32', shape: [4], sharedMemory: { region: 'in', byteSize: 16 } }],
      { outputs: [{ name: 'B', sharedMemory: { region: 'out', byteSize: 16, offset: 32 } }] },
    );
    expect(headerLength).toBeUndefined();
    expect(json.inputs[0]).toEqual({
      name: 'A',
      shape: [4],
      datatype: 'FP32',
      parameters: { shared_memory_region: 'in', shared_memory_byte_size: 16 },
    });
    expect(json.outputs?.[0]?.parameters).toEqual({
      binary_data: false,
      shared_memory_region: 'out',
      shared_memory_byte_size: 16,
      shared_memory_offset: 32,
    });
  });

  it('refuses FP16 as JSON and a shape that does not match the data', () => {
    expect(
      failure(() =>
        encodeInferRequest([{ name: 'H', datatype: 'FP16', shape: [1], data: [1], binaryData: false }]),
      ).message,
    ).toBe('receiving FP16 data via JSON is not supported. Please use the binary data format for input H');
    expect(
      failure(() => encodeInferRequest([{ name: 'A', datatype: 'FP32', shape: [3], data: [1] }])).code,
    ).toBe('ELEMENT_COUNT_MISMATCH');
  });
});

describe('decodeInferRequest', () => {
  it('splits at the header length and slices the tail per input', () => {
    const decoded = decodeInferRequest(simpleBody, simpleLength);
    if (decoded.kind !== 'json') throw new Error('expected json');
    expect(Array.from(decoded.inputs[0]?.data as Int32Array)).toEqual([1, 2]);
  });

  it.each([
    ['-1', 'INVALID_HEADER_LENGTH'],
    ['abc', 'INVALID_HEADER_LENGTH'],
    ['1e3', 'INVALID_HEADER_LENGTH'],
    ['2147483648', 'INVALID_HEADER_LENGTH'],
    ['500', 'INVALID_HEADER_LENGTH'],
    [String(utf8(simpleHeader).length - 1), 'MALFORMED_JSON'],
  ])('rejects header length %s with %s', (value, code) => {
    expect(failure(() => decodeInferRequest(simpleBody, value)).code).toBe(code);
  });

  it('rejects binary data shorter or longer than announced', () => {
    expect(
      failure(() => decodeInferRequest(simpleBody.subarray(0, simpleBody.length - 1), simpleLength)).code,
    ).toBe('BINARY_SIZE_MISMATCH');
    expect(failure(() => decodeInferRequest(new Uint8Array([...simpleBody, 0]), simpleLength)).code).toBe(
      'BINARY_SIZE_MISMATCH',
    );
  });

  it('words size and header errors like Triton, naming the model', () => {
    const short = simpleBody.subarray(0, simpleBody.length - 3);
    expect(failure(() => decodeInferRequest(short, simpleLength, { modelName: 'simple' })).message).toBe(
      "unexpected size for input 'A', expecting 3 additional bytes for model 'simple'",
    );
    expect(
      failure(() =>
        decodeInferRequest(new Uint8Array([...simpleBody, 0]), simpleLength, { modelName: 'simple' }),
      ).message,
    ).toBe("unexpected additional input data for model 'simple'");
    expect(failure(() => decodeInferRequest(simpleBody, '-1')).message).toBe(
      `inference header size should be in range (0, ${simpleBody.length}), got: -1`,
    );
    expect(failure(() => decodeInferRequest(simpleBody, 'abc')).message).toBe(
      'Unable to parse Inference-Header-Content-Length, got: abc',
    );
    // Without the header the whole body is JSON, so the binary input finds no bytes (as Triton says).
    expect(failure(() => decodeInferRequest(utf8(simpleHeader), undefined, { modelName: 'm' })).message).toBe(
      "unexpected size for input 'A', expecting 8 additional bytes for model 'm'",
    );
    expect(failure(() => decodeInferRequest(utf8('{"inputs":'))).message).toMatch(
      /^failed to parse the request JSON buffer: /,
    );
    expect(
      failure(() =>
        decodeInferRequest(utf8('{"inputs":[{"name":"A","shape":[2],"datatype":"FP32","data":[1]}]}')),
      ).message,
    ).toBe("Failed to parse 'data' field: shape does not match true shape");
    expect(failure(() => decodeInferRequest(utf8('{"outputs":[]}'))).message).toBe(
      "Unable to parse 'inputs': attempt to access non-existing object member 'inputs'",
    );
    expect(
      failure(() =>
        decodeInferRequest(utf8('{"inputs":[{"name":"A","shape":[1],"datatype":"FP128","data":[1]}]}')),
      ).message,
    ).toBe('invalid datatype for input A');
  });

  it('rejects malformed JSON, unknown datatypes, shape/data mismatch and duplicate outputs', () => {
    expect(failure(() => decodeInferRequest(utf8('{"inputs":'))).code).toBe('MALFORMED_JSON');
    expect(
      failure(() =>
        decodeInferRequest(utf8('{"inputs":[{"name":"A","shape":[1],"datatype":"FP128","data":[1]}]}')),
      ).code,
    ).toBe('UNKNOWN_DATATYPE');
    expect(
      failure(() =>
        decodeInferRequest(utf8('{"inputs":[{"name":"A","shape":[2],"datatype":"FP32","data":[1]}]}')),
      ).code,
    ).toBe('ELEMENT_COUNT_MISMATCH');
    expect(
      failure(() =>
        decodeInferRequest(utf8('{"inputs":[{"name":"A","shape":[1],"datatype":"FP16","data":[1]}]}')),
      ).message,
    ).toBe('receiving FP16 data via JSON is not supported. Please use the binary data format for input A');
    expect(
      failure(() =>
        decodeInferRequest(
          utf8(
            '{"inputs":[{"name":"A","shape":[1],"datatype":"FP32","data":[1]}],"outputs":[{"name":"X"},{"name":"X"}]}',
          ),
        ),
      ).message,
    ).toBe("output 'X' already exists in request");
  });

  it('rejects a BYTES length prefix past the end of the input', () => {
    const header =
      '{"inputs":[{"name":"S","shape":[1],"datatype":"BYTES","parameters":{"binary_data_size":5}}]}';
    const body = new Uint8Array([...utf8(header), 9, 0, 0, 0, 65]);
    expect(failure(() => decodeInferRequest(body, String(utf8(header).length))).code).toBe(
      'INVALID_BYTES_ELEMENT',
    );
  });

  it('encodes a raw BYTES request as the single element without a length prefix', () => {
    const { body, headerLength } = encodeRawBinaryRequest('BYTES', ['ramen']);
    expect(headerLength).toBe(0);
    expect(Array.from(body)).toEqual(Array.from(utf8('ramen')));
    expect(failure(() => encodeRawBinaryRequest('BYTES', ['a', 'b'])).code).toBe('INVALID_FIELD');
  });

  it('returns raw requests for header length 0 with the body untouched', () => {
    const decoded = decodeInferRequest(new Uint8Array(new Float32Array([1, 2, 3, 4, 5, 6]).buffer), '0');
    expect(decoded.kind).toBe('raw');
    if (decoded.kind !== 'raw') return;
    expect(decoded.data.byteLength).toBe(24);
    expect(outputWantsBinary(decoded, 'anything')).toBe(true);
  });

  it('decides binary outputs as Triton: a listed output by its own binary_data, unlisted ones by binary_data_output', () => {
    const req = decodeInferRequest(
      utf8(
        '{"inputs":[],"outputs":[{"name":"A","parameters":{"binary_data":false}},{"name":"B"},{"name":"C","parameters":{"binary_data":true}}],"parameters":{"binary_data_output":true}}',
      ),
    );
    expect(outputWantsBinary(req, 'A')).toBe(false);
    // Listed without its own binary_data: JSON, although binary_data_output is true (Triton's
    // CheckBinaryOutputData defaults a listed output to JSON).
    expect(outputWantsBinary(req, 'B')).toBe(false);
    expect(outputWantsBinary(req, 'C')).toBe(true);
    const all = decodeInferRequest(utf8('{"inputs":[],"parameters":{"binary_data_output":true}}'));
    expect(outputWantsBinary(all, 'A')).toBe(true);
    expect(outputWantsBinary(decodeInferRequest(utf8('{"inputs":[]}')), 'A')).toBe(false);
  });
});

describe('decodeInferRequest, as Triton reads a request (http_server.cc, triton_json.h)', () => {
  const message = (json: string, header?: string): string =>
    failure(() => decodeInferRequest(utf8(json), header, { modelName: 'm' })).message;
  const input = (fields: string) => `{"inputs":[{${fields}}]}`;

  it("adds TritonJson's reason to every 'Unable to parse' message", () => {
    expect(message('[1,2]')).toBe(
      "Unable to parse 'inputs': attempt to access non-existing object member 'inputs'",
    );
    expect(message('{"inputs":{}}')).toBe(
      "Unable to parse 'inputs': attempt to access JSON non-array as array",
    );
    expect(message('{"id":5,"inputs":[]}')).toBe(
      "Unable to parse 'id': attempt to access JSON non-string as string",
    );
    expect(message(input('"shape":[1],"datatype":"FP32","data":[1]'))).toBe(
      "Unable to parse 'name': attempt to access non-existing object member 'name'",
    );
    expect(message(input('"name":7,"shape":[1],"datatype":"FP32","data":[1]'))).toBe(
      "Unable to parse 'name': attempt to access JSON non-string as string",
    );
    expect(message(input('"name":"A","shape":[1],"data":[1]'))).toBe(
      "Unable to parse 'datatype': attempt to access non-existing object member 'datatype'",
    );
    expect(message(input('"name":"A","shape":"1","datatype":"FP32","data":[1]'))).toBe(
      "Unable to parse 'shape': attempt to access JSON non-array as array",
    );
    expect(message(input('"name":"A","shape":[1],"datatype":"FP32","data":{}'))).toBe(
      "Unable to parse 'data': attempt to access JSON non-array as array",
    );
    expect(
      message(input('"name":"A","shape":[1],"datatype":"FP32","parameters":{"binary_data_size":-1}')),
    ).toBe(
      "Unable to parse 'binary_data_size': attempt to access JSON non-unsigned-integer as unsigned-integer",
    );
    expect(
      message(input('"name":"A","shape":[1],"datatype":"FP32","parameters":{"shared_memory_region":1}')),
    ).toBe("Unable to parse 'shared_memory_region': attempt to access JSON non-string as string");
  });

  it('refuses a negative or fractional dimension as Triton reads shape dims (uint64)', () => {
    for (const dims of ['[2,-5]', '[-1,1]', '[1.5]', '["1"]', '[18446744073709551616]']) {
      expect(message(input(`"name":"A","shape":${dims},"datatype":"FP32","data":[1]`))).toBe(
        "Unable to parse 'shape': attempt to access JSON non-unsigned-integer as unsigned-integer",
      );
    }
  });

  it('refuses element counts and byte sizes past int64 for JSON data, keeping 64-bit dims exact', () => {
    expect(message(input('"name":"A","shape":[16,1152921504606846978],"datatype":"FP32","data":[1]'))).toBe(
      "input 'A' with shape [16,1152921504606846978] causes total element count to exceed maximum size of 9223372036854775807",
    );
    expect(message(input('"name":"A","shape":[9223372036854775808],"datatype":"FP32","data":[1]'))).toMatch(
      /causes total element count to exceed maximum size of 9223372036854775807$/,
    );
    expect(message(input('"name":"A","shape":[4,1152921504606846978],"datatype":"FP32","data":[1]'))).toMatch(
      /^byte size overflow for input 'A'/,
    );
    // Binary and shared-memory data cannot be sized against such a shape (protocol.md §6.1).
    expect(
      message(
        input(
          '"name":"A","shape":[4294967296,4294967296],"datatype":"FP32","parameters":{"binary_data_size":0}',
        ),
      ),
    ).toBe("input 'A' has too many elements of datatype FP32");
    // A zero dim makes the count 0 and, as in Triton, 'data' is not looked at.
    const decoded = decodeInferRequest(
      utf8(input('"name":"A","shape":[0,1152921504606846978],"datatype":"FP32","data":"x"')),
    );
    expect(decoded.kind === 'json' && decoded.inputs[0]?.data?.length).toBe(0);
  });

  it("checks an input's content fields with Triton's ValidateInputContentType", () => {
    const base =
      "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But";
    expect(message(input('"name":"A","shape":[1],"datatype":"FP32"'))).toBe(`${base} no field is set`);
    expect(message('{"inputs":[5]}')).toBe(`${base} no field is set`);
    expect(
      message(
        input(
          '"name":"A","shape":[1],"datatype":"FP32","data":[1],"parameters":{"binary_data_size":4,"shared_memory_region":"r"}',
        ),
      ),
    ).toBe(`${base} set 'data' 'binary_data_size' 'shared_memory_region'`);
  });

  it("reads the request parameters first, in document order, with Triton's messages", () => {
    const withParams = (params: string) => `{"parameters":${params},"inputs":[{"name":"A"}]}`;
    expect(message(withParams('{"priority":-1}'))).toBe(
      "Unable to parse 'priority': attempt to access JSON non-unsigned-integer as unsigned-integer",
    );
    expect(message(withParams('{"timeout":1.5}'))).toBe(
      "Unable to parse 'timeout': attempt to access JSON non-unsigned-integer as unsigned-integer",
    );
    expect(message(withParams('{"sequence_start":1}'))).toBe(
      "Unable to parse 'sequence_start': attempt to access JSON non-boolean as boolean",
    );
    expect(message(withParams('{"binary_data_output":"yes"}'))).toBe(
      "Unable to parse 'binary_data_output': attempt to access JSON non-boolean as boolean",
    );
    expect(message(withParams('{"sequence_id":-1}'))).toBe(
      "Unable to parse 'sequence_id': attempt to access JSON non-string as string",
    );
    expect(message(withParams('{"x":1,"triton_y":true,"priority":-1}'))).toBe(
      "parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified.",
    );
    expect(message(withParams('{"x":[1]}'))).toBe(
      "parameter 'x' has invalid type. It should be either 'int', 'bool', or 'string'.",
    );
    expect(message(withParams('[]'))).toBe(
      'failed to get request params.: attempt to get members for non-object',
    );
  });

  it('reads inputs before outputs, checks the tail before outputs, and names duplicates with the request id', () => {
    const badInput = '{"name":"A","shape":[1],"datatype":"FP32","data":["x"]}';
    expect(message(`{"outputs":5,"inputs":[${badInput}]}`)).toBe(
      "Unable to parse 'data': attempt to access JSON non-number as double",
    );
    const a = '{"name":"A","shape":[1],"datatype":"FP32","data":[1]}';
    expect(message(`{"id":"r1","inputs":[${a},${a}]}`)).toBe(
      "[request id: r1] input 'A' already exists in request",
    );
    expect(message(`{"id":"r1","inputs":[${a}],"outputs":[{"name":"X"},{"name":"X"}]}`)).toBe(
      "[request id: r1] output 'X' already exists in request",
    );
    expect(message(`{"inputs":[${a}],"outputs":[{"parameters":{"classification":-2}, "name":"X"}]}`)).toBe(
      "Unable to set 'classification': attempt to access JSON non-unsigned-integer as unsigned-integer",
    );
    expect(message(`{"inputs":[${a}],"outputs":[{"name":"X","parameters":{"binary_data":1}}]}`)).toBe(
      "Unable to parse 'binary_data': attempt to access JSON non-boolean as boolean",
    );
    expect(
      message(
        `{"inputs":[${a}],"outputs":[{"name":"X","parameters":{"shared_memory_region":"r","classification":1}}]}`,
      ),
    ).toBe("Output can't set both 'shared_memory_region' and 'classification'");
    expect(
      message(
        `{"inputs":[${a}],"outputs":[{"name":"X","parameters":{"shared_memory_region":"r","binary_data":true}}]}`,
      ),
    ).toBe("Output can't set both 'shared_memory_region' and 'binary_data'");
    expect(message(`{"inputs":[${a}],"outputs":{}}`)).toBe(
      "Unable to parse 'outputs': attempt to access JSON non-array as array",
    );
  });

  it('keeps shared-memory offsets and sizes exact up to 2^64 - 1, defaulting to 0', () => {
    const decoded = decodeInferRequest(
      utf8(
        '{"inputs":[{"name":"A","shape":[1],"datatype":"FP32","parameters":{"shared_memory_region":"r","shared_memory_offset":18446744073709551615}}],' +
          '"outputs":[{"name":"X","parameters":{"shared_memory_region":"r","shared_memory_byte_size":18446744073709551614}}]}',
      ),
    );
    if (decoded.kind !== 'json') throw new Error('expected json');
    expect(decoded.inputs[0]?.sharedMemory).toEqual({ region: 'r', byteSize: 0, offset: 2n ** 64n - 1n });
    expect(decoded.outputs?.[0]?.sharedMemory).toEqual({ region: 'r', byteSize: 2n ** 64n - 2n });
  });

  it('leaves the element count of binary data to the model, refusing only partial elements', () => {
    const header =
      '{"inputs":[{"name":"A","shape":[4],"datatype":"FP32","parameters":{"binary_data_size":8}}]}';
    const decoded = decodeInferRequest(
      new Uint8Array([...utf8(header), ...new Uint8Array(8)]),
      String(utf8(header).length),
    );
    expect(decoded.kind === 'json' && decoded.inputs[0]?.data?.length).toBe(2);
    const partial = header.replace('"binary_data_size":8', '"binary_data_size":7');
    expect(
      failure(() =>
        decodeInferRequest(
          new Uint8Array([...utf8(partial), ...new Uint8Array(7)]),
          String(utf8(partial).length),
          {
            modelName: 'm',
          },
        ),
      ).message,
    ).toBe("input byte size mismatch for input 'A' for model 'm'. Expected 16, got 7");
  });

  it('treats an empty body without the header as a raw request, as Triton does', () => {
    expect(decodeInferRequest(new Uint8Array(0)).kind).toBe('raw');
  });
});

describe('response codec', () => {
  it('round-trips outputs through encodeInferResponse and decodeInferResponse', () => {
    const enc = encodeInferResponse({
      modelName: 'm',
      modelVersion: '1',
      outputs: [
        {
          tensor: { name: 'h', datatype: 'FP16', shape: [1], data: new Uint16Array([0x3c00]) },
          binary: true,
        },
        { tensor: { name: 'j', datatype: 'UINT8', shape: [2], data: new Uint8Array([1, 2]) }, binary: false },
        {
          tensor: { name: 's', datatype: 'FP32', shape: [2], data: new Float32Array(2) },
          binary: false,
          omitData: true,
          parameters: { shared_memory_region: 'r', shared_memory_byte_size: 8 },
        },
      ],
    });
    const dec = decodeInferResponse(enc.body, enc.headerLength);
    expect(dec.outputs[0]?.data).toEqual(new Uint16Array([0x3c00]));
    expect(dec.outputs[1]?.data).toEqual(new Uint8Array([1, 2]));
    expect(dec.outputs[2]?.data).toBeUndefined();
  });

  it('refuses FP16 JSON outputs on the server side with the sending wording', () => {
    const message = failure(() =>
      encodeInferResponse({
        modelName: 'm',
        modelVersion: '1',
        outputs: [
          { tensor: { name: 'h', datatype: 'FP16', shape: [1], data: new Uint16Array(1) }, binary: false },
        ],
      }),
    ).message;
    expect(message).toBe(
      'sending FP16 data via JSON is not supported. Please use the binary data format for output',
    );
  });

  it('rejects a response whose binary sizes overrun the body', () => {
    const header =
      '{"model_name":"m","outputs":[{"name":"o","datatype":"FP32","shape":[2],"parameters":{"binary_data_size":8}}]}';
    const body = new Uint8Array([...utf8(header), 0, 0, 0, 0]);
    expect(failure(() => decodeInferResponse(body, utf8(header).length)).code).toBe('BINARY_SIZE_MISMATCH');
  });
});

describe('neutral request options and HTTP hints', () => {
  const inputs: InferInput[] = [{ name: 'X', datatype: 'INT32', shape: [2], data: [1, 2] }];
  it('split, the encoder takes them side by side and gives the bytes of the user options', () => {
    const cases: InferRequestOptions[] = [
      {},
      { binaryDataOutput: false },
      { outputs: [{ name: 'A' }, { name: 'B' }] },
      { requestId: 'r', outputs: [{ name: 'A' }, { name: 'B', binaryData: false, classCount: 2 }] },
      { outputs: [{ name: 'A', binaryData: true }], binaryDataOutput: false, binaryData: false, priority: 1 },
      { outputs: [{ name: 'A', binaryData: false }, { name: 'B' }], binaryDataOutput: true },
    ];
    for (const options of cases) {
      const { request, http } = splitRequestOptions(options);
      expect('binaryDataOutput' in request).toBe(false);
      expect(request.outputs?.some((o) => 'binaryData' in o) ?? false).toBe(false);
      const split = encodeInferRequestBody(inputs, request, http, Infinity);
      const whole = encodeInferRequest(inputs, options);
      expect('body' in split).toBe(true);
      expect(Buffer.from((split as { body: Uint8Array }).body).equals(Buffer.from(whole.body))).toBe(true);
      expect(split.headerLength).toBe(whole.headerLength);
    }
  });

  it('the hints alone decide binary_data: a neutral output is not read for it', () => {
    const request = { outputs: [{ name: 'A', binaryData: false } as { name: string }] };
    const encoded = encodeInferRequestBody(inputs, request, {}, Infinity);
    expect(encoded.json.outputs?.[0]?.parameters).toEqual({ binary_data: true });
  });
});
