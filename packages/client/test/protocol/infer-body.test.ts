import { describe, expect, it } from 'vitest';
import {
  decodeInferRequest,
  decodeInferResponse,
  encodeInferRequest,
  encodeInferResponse,
  encodeRawBinaryRequest,
  outputWantsBinary,
  ProtocolError,
  type ProtocolErrorCode,
} from '../../src/protocol/index.js';

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
    expect(failure(() => decodeInferRequest(utf8(simpleHeader))).message).toContain(
      "must specify valid 'Infer-Header-Content-Length'",
    );
    expect(failure(() => decodeInferRequest(utf8('{"inputs":'))).message).toMatch(
      /^failed to parse the request JSON buffer: /,
    );
    expect(
      failure(() =>
        decodeInferRequest(utf8('{"inputs":[{"name":"A","shape":[2],"datatype":"FP32","data":[1]}]}')),
      ).message,
    ).toBe("Unable to parse 'data': Shape does not match true shape of 'data' field");
    expect(failure(() => decodeInferRequest(utf8('{"outputs":[]}'))).message).toBe(
      "Unable to parse 'inputs'",
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
