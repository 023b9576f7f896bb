import { describe, expect, it } from 'vitest';
import {
  BytesList,
  bytesToStrings,
  deserializeBytesTensor,
  ProtocolError,
  serializeByteTensor,
  stringsToBytes,
  tensorDataToBytes,
} from '../../src/index.js';
import { bytesListFromJson, tensorDataToJson } from '../../src/http/json-data.js';
import { decodeInferRequest, encodeInferRequest } from '../../src/http/infer-request.js';
import { encodeInferResponse, decodeInferResponse } from '../../src/http/infer-response.js';

function failure(fn: () => unknown): ProtocolError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ProtocolError) return e;
    throw e;
  }
  throw new Error('expected a ProtocolError');
}

const words = ['hello', '', 'wörld', '\u{1F600}'];

describe('BytesList', () => {
  it('packs strings and bytes into the serialized layout and reads them back as views', () => {
    const list = BytesList.from([...words.slice(0, 2), new Uint8Array([0xff, 0]), words[2] as string]);
    expect(list.length).toBe(4);
    expect([...list.serialized]).toEqual([
      ...serializeByteTensor(['hello', '', new Uint8Array([0xff, 0]), 'wörld']),
    ]);
    expect(list.byteLength).toBe(list.serialized.byteLength);
    expect([...(list.at(2) as Uint8Array)]).toEqual([0xff, 0]);
    expect(list.at(-1)).toEqual(new TextEncoder().encode('wörld'));
    expect(list.at(4)).toBeUndefined();
    expect((list.at(0) as Uint8Array).buffer).toBe(list.serialized.buffer);
    expect(list.toArray().map((e) => [...e])).toEqual([...list].map((e) => [...e]));
  });

  it('is a view over serialized bytes, checked as deserializeBytesTensor checks them', () => {
    const wire = serializeByteTensor(words);
    const list = BytesList.fromSerialized(wire, 4);
    expect(list.serialized).toBe(wire);
    expect(list.toStrings()).toEqual(words);
    expect(bytesToStrings(list)).toEqual(bytesToStrings(deserializeBytesTensor(wire)));
    const short = failure(() =>
      BytesList.fromSerialized(wire.subarray(0, wire.byteLength - 1), 4, "input 'T'"),
    );
    expect(short.code).toBe('INVALID_BYTES_ELEMENT');
    expect(short.message).toBe(
      failure(() => deserializeBytesTensor(wire.subarray(0, wire.byteLength - 1), 4, "input 'T'")).message,
    );
    expect(failure(() => BytesList.fromSerialized(new Uint8Array(3))).code).toBe('INVALID_BYTES_ELEMENT');
    expect(failure(() => BytesList.fromSerialized(wire, 5)).message).toBe(
      failure(() => deserializeBytesTensor(wire, 5)).message,
    );
    expect(BytesList.fromSerialized(new Uint8Array(0)).length).toBe(0);
  });

  it('slices without copying and concatenates into one buffer', () => {
    const list = BytesList.from(words);
    const tail = list.slice(1, 3);
    expect(tail.toStrings()).toEqual(['', 'wörld']);
    expect(tail.serialized.buffer).toBe(list.serialized.buffer);
    expect(list.slice(-1).toStrings()).toEqual(['\u{1F600}']);
    expect(list.slice(3, 1).length).toBe(0);
    expect(list.slice()).toBe(list);
    const joined = BytesList.concat([list.slice(0, 1), BytesList.from([]), tail]);
    expect(joined.toStrings()).toEqual(['hello', '', 'wörld']);
    expect(joined.serialized).toEqual(serializeByteTensor(['hello', '', 'wörld']));
  });

  it('decodes strictly on request, naming the element', () => {
    const list = BytesList.from(['ok', new Uint8Array([0xc3]), '\uFFFD']);
    expect(list.toStrings()).toEqual(['ok', '\uFFFD', '\uFFFD']);
    const e = failure(() => list.toStrings({ fatal: true }));
    expect(e.code).toBe('INVALID_BYTES_ELEMENT');
    expect(e.message).toBe('BYTES element 1 is not valid UTF-8');
    // A real U+FFFD is valid UTF-8.
    expect(BytesList.from(['\uFFFD']).toStrings({ fatal: true })).toEqual(['\uFFFD']);
    expect(list.firstInvalidUtf8()).toBe(1);
    expect(BytesList.from(['a', 'wörld', '']).firstInvalidUtf8()).toBe(-1);
    expect(BytesList.from(['x'.repeat(200)]).firstInvalidUtf8()).toBe(-1);
  });

  it('writes the JSON text JSON.stringify writes for its strings', () => {
    const all = Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)).join('');
    const samples = [[], [''], words, [all, '"quoted" \\ back', '\u2028\u2029 ü 寿司 \u{1F600}', '\u007f']];
    for (const strings of samples) {
      const json = BytesList.from(strings).toJson();
      expect(Buffer.from(json).toString('utf8')).toBe(JSON.stringify(strings));
    }
    expect(failure(() => BytesList.from(['ok', new Uint8Array([0xff])]).toJson()).message).toBe(
      'BYTES element 1 is not valid UTF-8',
    );
  });

  it('is accepted by the encoders wherever BYTES data is', () => {
    const list = BytesList.from(words);
    expect(tensorDataToBytes('BYTES', list)).toBe(list.serialized);
    expect(tensorDataToJson('BYTES', list)).toEqual(words);
    expect(BytesList.isBytesList(list)).toBe(true);
    expect(BytesList.isBytesList(stringsToBytes(words))).toBe(false);
    const body = encodeInferResponse({
      modelName: 'm',
      modelVersion: '1',
      outputs: [
        { tensor: { name: 'A', datatype: 'BYTES', shape: [4], data: list }, binary: true },
        { tensor: { name: 'B', datatype: 'BYTES', shape: [4], data: list }, binary: false },
      ],
    });
    const decoded = decodeInferResponse(body.body, body.headerLength);
    expect(decoded.outputs.map((o) => bytesToStrings(o.data as Uint8Array[]))).toEqual([words, words]);
    // The same bytes as for one Uint8Array per element, and the same header object.
    const arrays = encodeInferResponse({
      modelName: 'm',
      modelVersion: '1',
      outputs: [
        { tensor: { name: 'A', datatype: 'BYTES', shape: [4], data: list.toArray() }, binary: true },
        { tensor: { name: 'B', datatype: 'BYTES', shape: [4], data: list.toArray() }, binary: false },
      ],
    });
    expect(Buffer.from(body.body).equals(Buffer.from(arrays.body))).toBe(true);
    expect(body.headerLength).toBe(arrays.headerLength);
    expect(body.json).toEqual(arrays.json);
  });

  it('is what decodeInferRequest gives for BYTES inputs with packBytes: binary data as a view, JSON packed', () => {
    const { body, headerLength } = encodeInferRequest([
      { name: 'BIN', datatype: 'BYTES', shape: [4], data: words },
      { name: 'JSON', datatype: 'BYTES', shape: [2, 2], data: words, binaryData: false },
      { name: 'NONE', datatype: 'BYTES', shape: [0], data: [], binaryData: false },
    ]);
    const decoded = decodeInferRequest(body, headerLength, { packBytes: true });
    if (decoded.kind !== 'json') throw new Error('expected a JSON request');
    const [bin, json, none] = decoded.inputs.map((i) => i.data as BytesList);
    expect(BytesList.isBytesList(bin)).toBe(true);
    expect((bin as BytesList).serialized.buffer).toBe(body.buffer);
    expect((bin as BytesList).toStrings()).toEqual(words);
    expect((json as BytesList).toStrings()).toEqual(words);
    expect((none as BytesList).length).toBe(0);
    // Without the option: one Uint8Array per element, as before.
    const plain = decodeInferRequest(body, headerLength);
    if (plain.kind !== 'json') throw new Error('expected a JSON request');
    expect(Array.isArray(plain.inputs[0]?.data)).toBe(true);
  });

  it('packs nested JSON strings and refuses what tensorDataFromJson refuses, with its messages', () => {
    expect(bytesListFromJson([['a'], ['b', ['c']]]).toStrings()).toEqual(['a', 'b', 'c']);
    expect(failure(() => bytesListFromJson('a')).message).toBe(
      "Unable to parse 'data': attempt to access JSON non-array as array",
    );
    expect(failure(() => bytesListFromJson(['a', 1])).message).toBe(
      'Unable to parse JSON bytes array: attempt to access JSON non-string as string',
    );
    let deep: unknown[] = ['x'];
    for (let i = 0; i < 150; i++) deep = [deep];
    expect(failure(() => bytesListFromJson(deep)).message).toBe(
      'JSON nesting depth exceeds maximum allowed limit (100)',
    );
  });
});
