import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bytesToStrings } from '@tritonserver-ts/protocol';
import {
  decodeInferRequest,
  decodeInferResponse,
  encodeInferRequest,
  encodeInferResponse,
  encodeRawBinaryRequest,
  type DecodedInferRequest,
  type EncodedBody,
} from '@tritonserver-ts/protocol/http';

interface ManifestEntry {
  file: string;
  headerLength: number | null;
}
const dir = new URL('./golden/', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('manifest.json', dir), 'utf8')) as Record<
  string,
  ManifestEntry
>;

function golden(name: string): { body: Buffer; headerLength: number | null } {
  const entry = manifest[name];
  if (entry === undefined) throw new Error(`no golden vector ${name}`);
  return { body: readFileSync(new URL(entry.file, dir)), headerLength: entry.headerLength };
}

function expectSameBytes(
  encoded: EncodedBody<unknown> | { body: Uint8Array; headerLength: number },
  name: string,
) {
  const g = golden(name);
  expect(Buffer.from(encoded.body).toString('latin1')).toBe(g.body.toString('latin1'));
  expect(encoded.headerLength ?? null).toBe(g.headerLength);
}

function decodeRequest(name: string): DecodedInferRequest {
  const g = golden(name);
  const decoded = decodeInferRequest(g.body, g.headerLength);
  if (decoded.kind !== 'json') throw new Error('expected a JSON request');
  return decoded;
}

describe('golden request vectors', () => {
  it('encodes the INT32 binary request byte for byte and decodes its values', () => {
    const encoded = encodeInferRequest(
      [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 4], data: new Int32Array([1, 2, 3, -4]) },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 4], data: [10, 20, 30, 2147483647] },
      ],
      { requestId: '42', outputs: [{ name: 'OUTPUT0' }] },
    );
    expectSameBytes(encoded, 'request-int32-binary');
    const decoded = decodeRequest('request-int32-binary');
    expect(decoded.id).toBe('42');
    expect(Array.from(decoded.inputs[0]?.data as Int32Array)).toEqual([1, 2, 3, -4]);
    expect(Array.from(decoded.inputs[1]?.data as Int32Array)).toEqual([10, 20, 30, 2147483647]);
    expect(decoded.outputs).toEqual([
      { name: 'OUTPUT0', binaryData: true, parameters: { binary_data: true } },
    ]);
  });

  it('encodes an FP32 request without outputs with binary_data_output and decodes it', () => {
    const values = [0.5, -1.25, 3.0, 1e-3, 0, -0, 65504, 1.5, -2.5, 100, 0.1, 7];
    const encoded = encodeInferRequest([
      { name: 'image', datatype: 'FP32', shape: [1, 3, 2, 2], data: new Float32Array(values) },
    ]);
    expectSameBytes(encoded, 'request-fp32-binary');
    const decoded = decodeRequest('request-fp32-binary');
    expect(decoded.parameters).toEqual({ binary_data_output: true });
    expect(decoded.outputs).toBeUndefined();
    expect(decoded.inputs[0]?.data).toEqual(new Float32Array(values));
  });

  it('encodes binary and JSON BYTES inputs and decodes them as UTF-8', () => {
    const encoded = encodeInferRequest(
      [
        { name: 'TEXT', datatype: 'BYTES', shape: [3], data: ['hello', '', 'wörld'] },
        { name: 'TAGS', datatype: 'BYTES', shape: [2], data: ['a', 'ü'], binaryData: false },
      ],
      { outputs: [{ name: 'OUT', binaryData: false }] },
    );
    expectSameBytes(encoded, 'request-bytes');
    const decoded = decodeRequest('request-bytes');
    expect(bytesToStrings(decoded.inputs[0]?.data as Uint8Array[])).toEqual(['hello', '', 'wörld']);
    expect(bytesToStrings(decoded.inputs[1]?.data as Uint8Array[])).toEqual(['a', 'ü']);
    expect(decoded.inputs.map((i) => i.source)).toEqual(['binary', 'json']);
  });

  it('encodes mixed JSON/binary inputs with every request parameter and keeps INT64 exact', () => {
    const encoded = encodeInferRequest(
      [
        { name: 'COUNTS', datatype: 'INT32', shape: [2, 2], data: [1, 2, 3, 4], binaryData: false },
        { name: 'HALF', datatype: 'FP16', shape: [2], data: [1, -2] },
        { name: 'FLAGS', datatype: 'BOOL', shape: [3], data: [true, false, true], binaryData: false },
        {
          name: 'BIG',
          datatype: 'INT64',
          shape: [2],
          data: new BigInt64Array([9007199254740993n, -5n]),
          binaryData: false,
        },
      ],
      {
        requestId: 'mix-1',
        outputs: [{ name: 'A' }, { name: 'B', binaryData: false }],
        sequenceId: 'session-7',
        sequenceStart: true,
        priority: 2,
        timeout: 1500,
        parameters: { tenant: 'gg', boost: 1.5, trace: false },
      },
    );
    expectSameBytes(encoded, 'request-mixed');
    const decoded = decodeRequest('request-mixed');
    expect(decoded.parameters.sequence_id).toBe('session-7');
    expect(decoded.parameters.timeout).toBe(1500);
    expect(Array.from(decoded.inputs[1]?.data as Uint16Array)).toEqual([0x3c00, 0xc000]);
    expect(Array.from(decoded.inputs[2]?.data as Uint8Array)).toEqual([1, 0, 1]);
    expect(Array.from(decoded.inputs[3]?.data as BigInt64Array)).toEqual([9007199254740993n, -5n]);
  });

  it('encodes a classification request and reads the class count back', () => {
    const encoded = encodeInferRequest(
      [{ name: 'probs_in', datatype: 'FP32', shape: [1, 4], data: [0.1, 0.7, 0.15, 0.05] }],
      { outputs: [{ name: 'probs', classCount: 2, binaryData: false }] },
    );
    expectSameBytes(encoded, 'request-classification');
    expect(decodeRequest('request-classification').outputs?.[0]?.classCount).toBe(2);
  });

  it('encodes the raw binary request and decodes it as raw', () => {
    expectSameBytes(encodeRawBinaryRequest('FP32', [1, 2, 3, 4]), 'request-raw-binary');
    const g = golden('request-raw-binary');
    const decoded = decodeInferRequest(g.body, g.headerLength);
    expect(decoded.kind).toBe('raw');
  });
});

describe('golden response vectors', () => {
  it('encodes binary outputs including a zero-size one and decodes them by cumulative offset', () => {
    const probs = new Float32Array([0.01, 0.02, 0.03, 0.04, 0.05, 0.5, 0.06, 0.07, 0.08, 0.09, 0.05]);
    const encoded = encodeInferResponse({
      modelName: 'food_classifier',
      modelVersion: '1',
      id: '42',
      outputs: [
        { tensor: { name: 'probs', datatype: 'FP32', shape: [1, 11], data: probs }, binary: true },
        {
          tensor: { name: 'argmax', datatype: 'INT32', shape: [1], data: new Int32Array([5]) },
          binary: true,
        },
        {
          tensor: { name: 'empty', datatype: 'FP32', shape: [0, 3], data: new Float32Array(0) },
          binary: true,
        },
      ],
    });
    expectSameBytes(encoded, 'response-fp32-binary');
    const g = golden('response-fp32-binary');
    const decoded = decodeInferResponse(g.body, g.headerLength);
    expect(decoded.outputs.map((o) => o.name)).toEqual(['probs', 'argmax', 'empty']);
    expect(decoded.outputs[0]?.data).toEqual(probs);
    expect(Array.from(decoded.outputs[1]?.data as Int32Array)).toEqual([5]);
    expect(decoded.outputs[2]?.data).toEqual(new Float32Array(0));
    expect(decoded.outputs[2]?.shape).toEqual([0, 3]);
  });

  it('encodes JSON classification, BOOL, exact INT64 and binary BYTES outputs and decodes them', () => {
    const enc = new TextEncoder();
    const encoded = encodeInferResponse({
      modelName: 'mixed',
      modelVersion: '3',
      outputs: [
        {
          tensor: {
            name: 'probs',
            datatype: 'BYTES',
            shape: [1, 2],
            data: [enc.encode('0.700000:1:pizza'), enc.encode('0.150000:2:sushi')],
          },
          binary: false,
        },
        {
          tensor: {
            name: 'names',
            datatype: 'BYTES',
            shape: [2],
            data: [enc.encode('ramen'), new Uint8Array(0)],
          },
          binary: true,
        },
        { tensor: { name: 'ok', datatype: 'BOOL', shape: [2], data: new Uint8Array([1, 0]) }, binary: false },
        {
          tensor: {
            name: 'ids',
            datatype: 'INT64',
            shape: [2],
            data: new BigInt64Array([2n ** 63n - 1n, -1n]),
          },
          binary: false,
        },
      ],
    });
    expectSameBytes(encoded, 'response-mixed');
    const g = golden('response-mixed');
    const decoded = decodeInferResponse(g.body, g.headerLength);
    expect(bytesToStrings(decoded.outputs[0]?.data as Uint8Array[])).toEqual([
      '0.700000:1:pizza',
      '0.150000:2:sushi',
    ]);
    expect(bytesToStrings(decoded.outputs[1]?.data as Uint8Array[])).toEqual(['ramen', '']);
    expect(Array.from(decoded.outputs[2]?.data as Uint8Array)).toEqual([1, 0]);
    expect(Array.from(decoded.outputs[3]?.data as BigInt64Array)).toEqual([2n ** 63n - 1n, -1n]);
  });

  it('encodes a JSON-only response without a header length and decodes the whole body as JSON', () => {
    const encoded = encodeInferResponse({
      modelName: 'simple',
      modelVersion: '1',
      outputs: [
        {
          tensor: { name: 'OUTPUT0', datatype: 'FP64', shape: [2], data: new Float64Array([0.25, -1.5]) },
          binary: false,
        },
      ],
    });
    expectSameBytes(encoded, 'response-json-only');
    const decoded = decodeInferResponse(golden('response-json-only').body);
    expect(decoded.outputs[0]?.data).toEqual(new Float64Array([0.25, -1.5]));
  });
});
