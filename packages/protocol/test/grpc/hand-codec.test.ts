/**
 * The client's hand-written infer codec against protobuf-es (issue 11): `encodeInferCall` writes
 * the bytes of `toModelInferRequest` + `encodeModelInferRequest`, and `readModelInferResponse` /
 * `readModelStreamInferResponse` read what `fromBinary` + `fromModelInferResponse` read — the same
 * response, or the same typed error — for a broad sample of messages, truncated and mutated ones
 * included. Each sample also states whether the hand-written path (not the protobuf-es fallback)
 * took it, so a decoder that silently falls back on everything fails here.
 */
import { fromBinary, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import {
  InferParameterSchema,
  InferResponseParts,
  ModelInferResponseSchema,
  ModelStreamInferResponseSchema,
  StreamResponseParts,
  create,
  decodeMessage,
  encodeInferCall,
  encodeModelInferRequest,
  fromInferResponseParts,
  fromModelInferResponse,
  fromReadInferResponse,
  isCommonInferCall,
  readModelInferResponse,
  readModelStreamInferResponse,
  toModelInferRequest,
  type GrpcInferCall,
} from '../../src/grpc/index.js';
import { SEQUENCE_REQUEST, SIMPLE_REQUEST, TYPED_REQUEST } from '../../src/testing/grpc-samples.js';

type Outcome = { value: unknown } | { error: { name: string; code: unknown; message: string } };

function outcome(fn: () => unknown): Outcome {
  try {
    return { value: fn() };
  } catch (error) {
    const e = error as Error & { code?: unknown };
    return { error: { name: e.constructor.name, code: e.code, message: e.message } };
  }
}

// ---------------------------------------------------------------------------------------------
// Requests

/** The reference: protobuf-es messages, as before the hand-written encoder. */
function referenceBytes(call: GrpcInferCall, emptyFinal: boolean): Buffer {
  const request = toModelInferRequest(call);
  if (emptyFinal) {
    request.parameters.triton_enable_empty_final_response = create(InferParameterSchema, {
      parameterChoice: { case: 'boolParam', value: true },
    });
  }
  return encodeModelInferRequest(request);
}

const a16 = Int32Array.from({ length: 16 }, (_, i) => i - 8);
const big = Float32Array.from({ length: 300 }, (_, i) => i / 7);

const COMMON_CALLS: [string, GrpcInferCall][] = [
  ['simple sample', SIMPLE_REQUEST],
  [
    'simple without id, version or outputs',
    {
      modelName: 'simple',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: a16 },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array.from(a16) },
      ],
    },
  ],
  [
    'a 1200-byte input (two-byte lengths), FP32 from a plain array',
    {
      modelName: 'food',
      modelVersion: '12',
      inputs: [
        { name: 'image', datatype: 'FP32', shape: [3, 100], data: big },
        { name: 'x', datatype: 'FP32', shape: [2], data: [0.5, -1] },
      ],
      request: { requestId: 'r'.repeat(200), outputs: [{ name: 'probs' }, { name: '' }] },
    },
  ],
  [
    'BYTES, BOOL, FP16, INT64, UINT64 raw; empty, zero and large dimensions',
    {
      modelName: 'mixed',
      inputs: [
        { name: 'S', datatype: 'BYTES', shape: [2], data: ['ab', new Uint8Array([0xff, 0])] },
        { name: 'B', datatype: 'BOOL', shape: [3], data: [true, false, true] },
        { name: 'H', datatype: 'FP16', shape: [1], data: new Uint16Array([0x3c00]) },
        { name: 'I', datatype: 'INT64', shape: [1], data: new BigInt64Array([-(2n ** 63n)]) },
        { name: 'U', datatype: 'UINT64', shape: [1], data: [2n ** 64n - 1n] },
        { name: 'SCALAR', datatype: 'INT32', shape: [], data: [7] },
        { name: 'NONE', datatype: 'INT32', shape: [0, 4], data: [] },
        { name: 'WIDE', datatype: 'INT8', shape: [1, 2 ** 40, 0], data: [] },
      ],
      request: { binaryData: true, outputs: [{ name: 'OUT', classCount: 0 }] },
    },
  ],
  [
    'non-ASCII names and ids (UTF-8; a lone surrogate as TextEncoder writes it)',
    {
      modelName: 'modèle-ü',
      modelVersion: '版本',
      inputs: [{ name: 'entrée 🍕', datatype: 'UINT8', shape: [2], data: new Uint8Array([1, 2]) }],
      request: { requestId: 'id-\ud800-x', outputs: [{ name: 'sortie 🍝' }] },
    },
  ],
  [
    'empty parameter maps, HTTP-only hints and zero sequence/priority are ignored',
    {
      modelName: 'm',
      inputs: [{ name: 'A', datatype: 'INT32', shape: [1], data: [1], parameters: {}, binaryData: true }],
      request: {
        parameters: {},
        sequenceId: 0,
        priority: 0n,
        outputs: [{ name: 'O', parameters: {} }],
        binaryDataOutput: true,
      } as NonNullable<GrpcInferCall['request']>,
    },
  ],
  ['no inputs at all', { modelName: 'nothing', inputs: [] }],
  [
    'a wrong typed array',
    {
      modelName: 'm',
      inputs: [{ name: 'A', datatype: 'INT32', shape: [2], data: new Float64Array(2) }],
    },
  ],
  [
    'a non-number value',
    { modelName: 'm', inputs: [{ name: 'A', datatype: 'INT32', shape: [1], data: ['x'] }] },
  ],
];

const OTHER_CALLS: [string, GrpcInferCall][] = [
  ['sequence, custom parameters, shared memory, classification', SEQUENCE_REQUEST],
  ['typed contents', TYPED_REQUEST],
  ['a priority', { modelName: 'm', inputs: [], request: { priority: 3 } }],
  ['a timeout', { modelName: 'm', inputs: [], request: { timeout: 1000 } }],
  ['a string sequence id', { modelName: 'm', inputs: [], request: { sequenceId: 'abc' } }],
  [
    'input parameters',
    {
      modelName: 'm',
      inputs: [{ name: 'A', datatype: 'INT32', shape: [1], data: [1], parameters: { p: 1 } }],
    },
  ],
  [
    'output parameters',
    { modelName: 'm', inputs: [], request: { outputs: [{ name: 'O', parameters: { q: 'x' } }] } },
  ],
  [
    'a negative dimension',
    { modelName: 'm', inputs: [{ name: 'A', datatype: 'INT32', shape: [-1], data: [] }] },
  ],
];

/** Calls both encoders refuse, with the same error. */
const BAD_CALLS: [string, GrpcInferCall][] = [
  [
    'too few elements',
    { modelName: 'm', inputs: [{ name: 'A', datatype: 'INT32', shape: [1, 4], data: [1, 2, 3] }] },
  ],
  [
    'the second input too long',
    {
      modelName: 'm',
      inputs: [
        { name: 'A', datatype: 'INT32', shape: [1], data: [1] },
        { name: 'B', datatype: 'FP32', shape: [1], data: [1, 2] },
      ],
    },
  ],
  ['no data', { modelName: 'm', inputs: [{ name: 'A', datatype: 'INT32', shape: [1] }] }],
  [
    'a fractional dimension',
    { modelName: 'm', inputs: [{ name: 'A', datatype: 'INT32', shape: [1.5], data: [1] }] },
  ],
  ['a reserved parameter', { modelName: 'm', inputs: [], request: { parameters: { sequence_id: 1 } } }],
];

describe('encodeInferCall: the bytes of toModelInferRequest + encodeModelInferRequest', () => {
  for (const [name, call] of COMMON_CALLS) {
    it(`writes the common call itself: ${name}`, () => {
      expect(isCommonInferCall(call)).toBe(true);
      for (const emptyFinal of [false, true]) {
        const ours = encodeInferCall(call, emptyFinal);
        const reference = referenceBytes(call, emptyFinal);
        expect(ours.toString('hex')).toBe(reference.toString('hex'));
      }
    });
  }
  for (const [name, call] of OTHER_CALLS) {
    it(`hands other calls to protobuf-es: ${name}`, () => {
      expect(isCommonInferCall(call)).toBe(false);
      for (const emptyFinal of [false, true]) {
        expect(outcome(() => encodeInferCall(call, emptyFinal).toString('hex'))).toEqual(
          outcome(() => referenceBytes(call, emptyFinal).toString('hex')),
        );
      }
    });
  }
  for (const [name, call] of BAD_CALLS) {
    it(`refuses with the same error: ${name}`, () => {
      const reference = outcome(() => referenceBytes(call, false));
      expect(reference).toHaveProperty('error');
      expect(outcome(() => encodeInferCall(call))).toEqual(reference);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Responses

type ResponseInit = MessageInitShape<typeof ModelInferResponseSchema>;
type ParameterInit = MessageInitShape<typeof InferParameterSchema>;

const p = (c: ParameterInit['parameterChoice']): ParameterInit => ({ parameterChoice: c }) as ParameterInit;
const i32 = (...v: number[]): Uint8Array => new Uint8Array(Int32Array.from(v).buffer);

/** Every kind of parameter the hand-written decoder reads. */
const ALL_KINDS: Record<string, ParameterInit> = {
  b_true: p({ case: 'boolParam', value: true }),
  b_false: p({ case: 'boolParam', value: false }),
  i_small: p({ case: 'int64Param', value: 42n }),
  i_zero: p({ case: 'int64Param', value: 0n }),
  i_safe_max: p({ case: 'int64Param', value: 2n ** 53n - 1n }),
  i_past_safe: p({ case: 'int64Param', value: 2n ** 53n + 1n }),
  i_max: p({ case: 'int64Param', value: 2n ** 63n - 1n }),
  u_small: p({ case: 'uint64Param', value: 7n }),
  u_big: p({ case: 'uint64Param', value: 2n ** 62n + 3n }),
  s: p({ case: 'stringParam', value: 'text' }),
  s_empty: p({ case: 'stringParam', value: '' }),
  d: p({ case: 'doubleParam', value: 0.25 }),
  d_neg_zero: p({ case: 'doubleParam', value: -0 }),
  d_nan: p({ case: 'doubleParam', value: NaN }),
  d_inf: p({ case: 'doubleParam', value: -Infinity }),
  none: p({ case: undefined }),
  '': p({ case: 'stringParam', value: 'empty key' }),
  '7': p({ case: 'boolParam', value: true }),
};

const SIMPLE_RESPONSE: ResponseInit = {
  modelName: 'simple',
  modelVersion: '1',
  outputs: [
    { name: 'OUTPUT0', datatype: 'INT32', shape: [1n, 16n] },
    { name: 'OUTPUT1', datatype: 'INT32', shape: [1n, 16n] },
  ],
  rawOutputContents: [
    i32(...Array.from({ length: 16 }, (_, i) => 2 * i)),
    i32(...new Array<number>(16).fill(0)),
  ],
};

const bytesTensor = (...s: string[]): Uint8Array => {
  const parts = s.map((x) => Buffer.from(x, 'utf8'));
  const out = Buffer.alloc(parts.reduce((n, b) => n + 4 + b.byteLength, 0));
  let o = 0;
  for (const b of parts) {
    o = out.writeUInt32LE(b.byteLength, o);
    o += b.copy(out, o);
  }
  return out;
};

const COMMON_RESPONSES: [string, ResponseInit][] = [
  ['simple', SIMPLE_RESPONSE],
  ['empty message', {}],
  [
    'id, no outputs, final flag',
    { modelName: 'm', id: 'req-9', parameters: { triton_final_response: ALL_KINDS.b_true as ParameterInit } },
  ],
  [
    'parameters of every kind, on the response and an output',
    {
      modelName: 'm',
      parameters: ALL_KINDS,
      outputs: [{ name: 'O', datatype: 'FP64', shape: [1n], parameters: ALL_KINDS }],
      rawOutputContents: [new Uint8Array(new Float64Array([1.5]).buffer)],
    },
  ],
  [
    'BYTES, FP16, BOOL, UINT64 outputs, a scalar and an empty tensor',
    {
      modelName: 'm',
      outputs: [
        { name: 'S', datatype: 'BYTES', shape: [2n] },
        { name: 'H', datatype: 'FP16', shape: [1n] },
        { name: 'B', datatype: 'BOOL', shape: [3n] },
        { name: 'U', datatype: 'UINT64', shape: [] },
        { name: 'E', datatype: 'INT32', shape: [0n, 3n] },
      ],
      rawOutputContents: [
        bytesTensor('ab', 'çé'),
        new Uint8Array([0x00, 0x3c]),
        new Uint8Array([1, 0, 1]),
        new Uint8Array(new BigUint64Array([2n ** 64n - 1n]).buffer),
        new Uint8Array(0),
      ],
    },
  ],
  [
    'outputs in shared memory (empty raw entry, region parameter)',
    {
      modelName: 'm',
      outputs: [
        { name: 'A', datatype: 'INT32', shape: [2n] },
        {
          name: 'B',
          datatype: 'INT32',
          shape: [1n],
          parameters: { shared_memory_region: p({ case: 'stringParam', value: 'r1' }) },
        },
      ],
      rawOutputContents: [new Uint8Array(0), i32(5)],
    },
  ],
  [
    'fewer raw entries than outputs',
    {
      modelName: 'm',
      outputs: [
        { name: 'A', datatype: 'INT32', shape: [1n] },
        { name: 'B', datatype: 'INT32', shape: [1n] },
      ],
      rawOutputContents: [i32(1)],
    },
  ],
  [
    'dimensions past 2^53 (Number of the int64)',
    {
      modelName: 'm',
      outputs: [{ name: 'A', datatype: 'INT8', shape: [0n, 2n ** 53n + 1n, 2n ** 62n + 12345n] }],
      rawOutputContents: [new Uint8Array(0)],
    },
  ],
  [
    'a 600-byte raw entry (two-byte length), unaligned after odd strings',
    {
      modelName: 'mm',
      modelVersion: '123',
      outputs: [{ name: 'ODD', datatype: 'FP32', shape: [1n, 150n] }],
      rawOutputContents: [new Uint8Array(Float32Array.from({ length: 150 }, (_, i) => i / 3).buffer)],
    },
  ],
  [
    'no raw contents and no typed contents',
    {
      modelName: 'm',
      outputs: [{ name: 'A', datatype: 'INT32', shape: [2n] }],
    },
  ],
];

/** Protobuf-es decodes these and the hand-written decoder hands them over (or they fail alike). */
const OTHER_RESPONSES: [string, ResponseInit][] = [
  [
    'typed contents',
    {
      modelName: 'm',
      outputs: [
        { name: 'A', datatype: 'INT32', shape: [2n], contents: { intContents: [1, -2] } },
        { name: 'S', datatype: 'BYTES', shape: [1n], contents: { bytesContents: [new Uint8Array([104])] } },
      ],
    },
  ],
  [
    'a negative int64 parameter',
    { modelName: 'm', parameters: { n: p({ case: 'int64Param', value: -5n }) } },
  ],
  [
    'a uint64 parameter of 10 bytes',
    { modelName: 'm', parameters: { u: p({ case: 'uint64Param', value: 2n ** 64n - 1n }) } },
  ],
  ['a negative dimension', { modelName: 'm', outputs: [{ name: 'A', datatype: 'INT32', shape: [-1n] }] }],
  [
    'non-ASCII strings',
    {
      modelName: 'modèle',
      id: '🍕',
      parameters: { clé: p({ case: 'stringParam', value: 'valeur é' }) },
      outputs: [{ name: 'sortie', datatype: 'INT32', shape: [1n] }],
      rawOutputContents: [i32(3)],
    },
  ],
  [
    '__proto__ as a parameter key',
    { modelName: 'm', parameters: { ['__proto__']: p({ case: 'boolParam', value: true }) } },
  ],
];

const ERROR_RESPONSES: [string, ResponseInit, string][] = [
  [
    'an unknown datatype',
    { modelName: 'm', outputs: [{ name: 'A', datatype: 'INT33', shape: [1n] }], rawOutputContents: [i32(1)] },
    'UNKNOWN_DATATYPE',
  ],
  [
    'a raw entry of the wrong size',
    { ...SIMPLE_RESPONSE, rawOutputContents: [i32(1, 2), i32(3)] },
    'BINARY_SIZE_MISMATCH',
  ],
  ['more raw entries than outputs', { modelName: 'm', rawOutputContents: [i32(1)] }, 'INVALID_FIELD'],
];

/** Both readings of `bytes`: the reference (`decodeMessage` + `fromModelInferResponse`) and ours. */
function bothReadings(bytes: Uint8Array): { ours: Outcome; reference: Outcome } {
  return {
    reference: outcome(() => fromModelInferResponse(decodeMessage(ModelInferResponseSchema, bytes))),
    ours: outcome(() => fromReadInferResponse(readModelInferResponse(bytes))),
  };
}

const encode = (init: ResponseInit): Buffer =>
  Buffer.from(toBinary(ModelInferResponseSchema, create(ModelInferResponseSchema, init)));

/** Bytes of a varint. */
function varint(n: number | bigint): number[] {
  let v = BigInt(n);
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}
const field = (no: number, wire: number): number[] => varint(no * 8 + wire);
const delimited = (no: number, body: number[] | Uint8Array): number[] => [
  ...field(no, 2),
  ...varint(body.length),
  ...body,
];
const ascii = (s: string): number[] => [...Buffer.from(s, 'latin1')];

/** Unknown fields of every skippable wire type. */
const UNKNOWN = [
  ...field(99, 0),
  ...varint(2n ** 62n),
  ...field(100, 1),
  1,
  2,
  3,
  4,
  5,
  6,
  7,
  8,
  ...delimited(101, [1, 2, 3]),
  ...field(102, 5),
  9,
  9,
  9,
  9,
  ...field(2 ** 29 - 1, 0),
  1,
];

describe('readModelInferResponse: what fromBinary + fromModelInferResponse read', () => {
  for (const [name, init] of COMMON_RESPONSES) {
    it(`reads the common response itself: ${name}`, () => {
      const bytes = encode(init);
      expect(readModelInferResponse(bytes)).toBeInstanceOf(InferResponseParts);
      const { ours, reference } = bothReadings(bytes);
      expect(reference).toHaveProperty('value');
      expect(ours).toEqual(reference);
    });
  }

  it('raw outputs stay views into the received bytes', () => {
    const bytes = encode(SIMPLE_RESPONSE);
    const read = readModelInferResponse(bytes) as InferResponseParts;
    expect(read.raw[0]?.buffer).toBe(bytes.buffer);
    const data = fromReadInferResponse(read).outputs[0]?.data as Int32Array;
    if ((read.raw[0]?.byteOffset ?? 1) % 4 === 0) expect(data.buffer).toBe(bytes.buffer);
    expect(Array.from(data)).toEqual(Array.from({ length: 16 }, (_, i) => 2 * i));
  });

  for (const [name, init] of OTHER_RESPONSES) {
    it(`hands the unusual response to protobuf-es: ${name}`, () => {
      const bytes = encode(init);
      expect(readModelInferResponse(bytes)).not.toBeInstanceOf(InferResponseParts);
      const { ours, reference } = bothReadings(bytes);
      expect(ours).toEqual(reference);
    });
  }

  for (const [name, init, code] of ERROR_RESPONSES) {
    it(`fails alike: ${name}`, () => {
      const bytes = encode(init);
      expect(readModelInferResponse(bytes)).toBeInstanceOf(InferResponseParts);
      const { ours, reference } = bothReadings(bytes);
      expect(reference).toMatchObject({ error: { code } });
      expect(ours).toEqual(reference);
    });
  }

  it('skips unknown fields everywhere (response, output, map entry, parameter)', () => {
    const parameter = [...UNKNOWN, ...field(3, 2), ...varint(2), ...ascii('hi'), ...UNKNOWN];
    const entry = [...UNKNOWN, ...delimited(1, ascii('k')), ...UNKNOWN, ...delimited(2, parameter)];
    const output = [
      ...delimited(1, ascii('A')),
      ...UNKNOWN,
      ...delimited(2, ascii('INT32')),
      ...delimited(3, [1, 2]),
      ...delimited(4, entry),
    ];
    const bytes = new Uint8Array([
      ...UNKNOWN,
      ...delimited(1, ascii('m')),
      ...delimited(4, entry),
      ...delimited(5, output),
      ...UNKNOWN,
      ...delimited(6, i32(1, 2)),
    ]);
    expect(readModelInferResponse(bytes)).toBeInstanceOf(InferResponseParts);
    const { ours, reference } = bothReadings(bytes);
    expect(reference).toMatchObject({ value: { parameters: { k: 'hi' } } });
    expect(ours).toEqual(reference);
  });

  it('reads repeated scalars (last wins), unpacked and split packed shapes, a oneof set twice', () => {
    const parameter = [...field(1, 0), 1, ...field(3, 2), 1, ...ascii('s'), ...field(2, 0), ...varint(9)];
    const output = [
      ...delimited(1, ascii('X')),
      ...delimited(1, ascii('A')),
      ...delimited(2, ascii('INT32')),
      ...field(3, 0),
      1,
      ...delimited(3, [2, 1]),
      ...delimited(4, [...delimited(1, ascii('q')), ...delimited(2, parameter)]),
      ...delimited(4, [...delimited(2, [])]),
    ];
    const bytes = new Uint8Array([
      ...delimited(1, ascii('first')),
      ...delimited(1, ascii('second')),
      ...delimited(5, output),
      ...delimited(6, i32(1, 2)),
    ]);
    expect(readModelInferResponse(bytes)).toBeInstanceOf(InferResponseParts);
    const { ours, reference } = bothReadings(bytes);
    expect(reference).toMatchObject({
      value: { modelName: 'second', outputs: [{ shape: [1, 2, 1], parameters: { q: 9 } }] },
    });
    expect(ours).toEqual(reference);
  });

  it('hands over duplicate keys, merged values, groups and wrong wire types', () => {
    const cases: number[][] = [
      // The same key twice (the later entry wins in place).
      [
        ...delimited(4, [...delimited(1, ascii('k')), ...delimited(2, [8, 1])]),
        ...delimited(4, [...delimited(1, ascii('j'))]),
        ...delimited(4, [...delimited(1, ascii('k')), ...delimited(2, [16, 3])]),
      ],
      // Two values in one entry (merged).
      [...delimited(4, [...delimited(1, ascii('k')), ...delimited(2, [8, 1]), ...delimited(2, [])])],
      // A group (start 99, end 99).
      [...field(99, 3), ...field(1, 0), 5, ...field(99, 4), ...delimited(1, ascii('m'))],
      // model_name as a varint.
      [...field(1, 0), 5],
      // A shape as fixed32.
      [...delimited(5, [...field(3, 5), 1, 0, 0, 0])],
      // Field number 0.
      [0, 1],
    ];
    for (const c of cases) {
      const bytes = new Uint8Array(c);
      const read = outcome(() => readModelInferResponse(bytes));
      expect('value' in read && read.value instanceof InferResponseParts).toBe(false);
      const { ours, reference } = bothReadings(bytes);
      expect(ours).toEqual(reference);
    }
  });

  it('every truncation of a response reads or fails as protobuf-es does, never otherwise', () => {
    const samples = [...COMMON_RESPONSES, ...OTHER_RESPONSES].map(([, init]) => encode(init));
    let failures = 0;
    for (const full of samples) {
      for (let n = 0; n < full.byteLength; n++) {
        const { ours, reference } = bothReadings(full.subarray(0, n));
        expect(ours).toEqual(reference);
        if ('error' in reference) failures++;
      }
    }
    expect(failures).toBeGreaterThan(50);
  });

  it('randomly mutated responses read or fail as protobuf-es does', () => {
    let seed = 11;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const samples = [...COMMON_RESPONSES, ...ERROR_RESPONSES].map(([, init]) => encode(init));
    let fast = 0;
    for (let k = 0; k < 3000; k++) {
      const bytes = Buffer.from(samples[k % samples.length] as Buffer);
      if (bytes.byteLength === 0) continue;
      for (let m = 1 + Math.floor(random() * 3); m > 0; m--) {
        bytes[Math.floor(random() * bytes.byteLength)] = Math.floor(random() * 256);
      }
      const read = outcome(() => readModelInferResponse(bytes));
      if ('value' in read && read.value instanceof InferResponseParts) fast++;
      const { ours, reference } = bothReadings(bytes);
      expect(ours).toEqual(reference);
    }
    expect(fast).toBeGreaterThan(300);
  });
});

describe('readModelStreamInferResponse', () => {
  const streamBytes = (init: MessageInitShape<typeof ModelStreamInferResponseSchema>): Buffer =>
    Buffer.from(toBinary(ModelStreamInferResponseSchema, create(ModelStreamInferResponseSchema, init)));

  it('reads a response, an error and an empty message itself, as protobuf-es does', () => {
    const samples = [
      streamBytes({
        inferResponse: {
          ...SIMPLE_RESPONSE,
          id: 'r1',
          parameters: { triton_final_response: p({ case: 'boolParam', value: false }) },
        },
      }),
      streamBytes({ errorMessage: 'in-band failure', inferResponse: { id: 'r2' } }),
      streamBytes({ errorMessage: 'no response' }),
      streamBytes({}),
      new Uint8Array([...UNKNOWN, ...streamBytes({ inferResponse: { modelName: 'x' } })]),
    ];
    for (const bytes of samples) {
      const read = readModelStreamInferResponse(bytes);
      expect(read).toBeInstanceOf(StreamResponseParts);
      const reference = fromBinary(ModelStreamInferResponseSchema, bytes);
      const parts = read as StreamResponseParts;
      expect(parts.errorMessage).toBe(reference.errorMessage);
      expect(parts.response === undefined).toBe(reference.inferResponse === undefined);
      if (reference.inferResponse !== undefined && parts.response !== undefined) {
        expect(fromInferResponseParts(parts.response)).toEqual(
          fromModelInferResponse(reference.inferResponse),
        );
      }
    }
  });

  it('hands unusual and malformed messages to protobuf-es (same message or same error)', () => {
    const twice = [
      ...streamBytes({ inferResponse: { modelName: 'a' } }),
      ...streamBytes({ inferResponse: { id: 'b' } }),
    ];
    const nonAscii = streamBytes({ errorMessage: 'échec' });
    expect(readModelStreamInferResponse(new Uint8Array(twice))).toEqual(
      fromBinary(ModelStreamInferResponseSchema, new Uint8Array(twice)),
    );
    expect(readModelStreamInferResponse(nonAscii)).toEqual(
      fromBinary(ModelStreamInferResponseSchema, nonAscii),
    );
    const full = streamBytes({ inferResponse: SIMPLE_RESPONSE });
    for (let n = 0; n < full.byteLength; n++) {
      const bytes = full.subarray(0, n);
      const reference = outcome(() => decodeMessage(ModelStreamInferResponseSchema, bytes));
      const ours = outcome(() => readModelStreamInferResponse(bytes));
      if ('error' in reference) expect(ours).toEqual(reference);
      else expect(ours).toHaveProperty('value');
    }
  });
});
