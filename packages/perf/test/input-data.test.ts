/**
 * buildInputDataset: perf_analyzer's --input-data semantics on real files in a temporary directory
 * (zero, seeded random, JSON with plain arrays, b64 and content/shape, validation data, several
 * files merged, streams for sequence models, data directories), batching with -b, the errors, and
 * one end-to-end check: requests built from a JSON file, sent to `simple` on the embedded server,
 * give the outputs the file's validation_data expects.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { TritonClient, type Datatype } from '@tritonserver-ts/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildInputDataset } from '../src/data/input-data.js';
import { RANDOM_INT_LIMIT } from '../src/data/tensor-values.js';
import { PerfError } from '../src/errors.js';
import { fetchModelProfile } from '../src/model/model-profile.js';
import { perfOptions, type PerfOptions } from '../src/options/perf-options.js';
import type { ModelProfile, PreparedRequest, TensorSpec } from '../src/types.js';
import { startEmbedded, type Embedded } from './helpers/embedded.js';

let dir: string;

const tensor = (
  name: string,
  datatype: Datatype,
  dims: number[],
  extra: Partial<TensorSpec> = {},
): TensorSpec => ({
  name,
  datatype,
  dims,
  optional: false,
  isShapeTensor: false,
  ...extra,
});

/** A plain ModelProfile value (what fetchModelProfile returns), for models the tests describe. */
function profile(p: Partial<ModelProfile> & Pick<ModelProfile, 'inputs' | 'outputs'>): ModelProfile {
  return {
    name: 'm',
    version: '',
    maxBatchSize: 8,
    decoupled: false,
    sequenceBatching: false,
    dynamicBatching: false,
    responseCacheEnabled: false,
    composingModels: [],
    config: { name: 'm' },
    ...p,
  };
}

const SIMPLE = profile({
  name: 'simple',
  inputs: [tensor('INPUT0', 'INT32', [16]), tensor('INPUT1', 'INT32', [16])],
  outputs: [tensor('OUTPUT0', 'INT32', [16]), tensor('OUTPUT1', 'INT32', [16])],
});
const VARIABLE = profile({
  inputs: [tensor('IN', 'FP32', [-1, 2]), tensor('TEXT', 'BYTES', [2], { optional: true })],
  outputs: [tensor('OUT', 'FP32', [-1, 2])],
});

const options = (o: Partial<PerfOptions> = {}): PerfOptions => perfOptions({ modelName: 'm', ...o });

async function json(name: string, content: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

async function fails(model: ModelProfile, o: Partial<PerfOptions>): Promise<string> {
  const error = await buildInputDataset(model, options(o)).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(PerfError);
  expect((error as PerfError).code).toBe('INPUT_DATA');
  return (error as PerfError).message;
}

const values = (r: PreparedRequest | undefined, i = 0): number[] =>
  Array.from(r?.inputs[i]?.data as ArrayLike<number>);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'perf-data-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('generated data', () => {
  it('random: typed arrays with the batch dimension, seeded and reproducible, small ints', async () => {
    const a = await buildInputDataset(SIMPLE, options({ batchSize: 4 }));
    expect(a.streams).toHaveLength(1);
    expect(a.streams[0]).toHaveLength(1);
    const input = a.streams[0]?.[0]?.inputs[0];
    expect(input?.name).toBe('INPUT0');
    expect(input?.datatype).toBe('INT32');
    expect(input?.shape).toEqual([4, 16]);
    expect(input?.data).toBeInstanceOf(Int32Array);
    const v = values(a.streams[0]?.[0]);
    expect(v).toHaveLength(64);
    expect(v.every((x) => Number.isInteger(x) && x >= 0 && x < RANDOM_INT_LIMIT)).toBe(true);
    expect(new Set(v).size).toBeGreaterThan(5);
    // the one entry is repeated across the batch, as perf_analyzer reuses its generated data
    expect(v.slice(0, 16)).toEqual(v.slice(16, 32));
    const again = await buildInputDataset(SIMPLE, options({ batchSize: 4 }));
    expect(values(again.streams[0]?.[0])).toEqual(v);
    const other = await buildInputDataset(SIMPLE, options({ batchSize: 4, seed: 2 }));
    expect(values(other.streams[0]?.[0])).not.toEqual(v);
  });

  it('random floats are in [0, 1); zero data is all zeros; --shape fills variable dims', async () => {
    const shapes = new Map([['IN', [3, 2]]]);
    const r = await buildInputDataset(VARIABLE, options({ shapes, stringData: 'hi' }));
    const input = r.streams[0]?.[0]?.inputs[0];
    expect(input?.shape).toEqual([1, 3, 2]);
    expect(input?.data).toBeInstanceOf(Float32Array);
    expect(values(r.streams[0]?.[0]).every((x) => x >= 0 && x < 1)).toBe(true);
    const z = await buildInputDataset(VARIABLE, options({ shapes, inputData: ['zero'], batchSize: 2 }));
    expect(z.streams[0]?.[0]?.inputs[0]?.shape).toEqual([2, 3, 2]);
    expect(values(z.streams[0]?.[0]).every((x) => x === 0)).toBe(true);
  });

  it('BYTES: --string-data in every element, else random strings of --string-length', async () => {
    const shapes = new Map([['IN', [1, 2]]]);
    const fixed = await buildInputDataset(VARIABLE, options({ shapes, stringData: 'hello' }));
    const text = fixed.streams[0]?.[0]?.inputs[1];
    expect(text?.shape).toEqual([1, 2]);
    expect((text?.data as Uint8Array[]).map((e) => new TextDecoder().decode(e))).toEqual(['hello', 'hello']);
    const random = await buildInputDataset(VARIABLE, options({ shapes, stringLength: 7 }));
    const strings = (random.streams[0]?.[0]?.inputs[1]?.data as Uint8Array[]).map((e) =>
      new TextDecoder().decode(e),
    );
    expect(strings.map((s) => s.length)).toEqual([7, 7]);
    expect(strings.every((s) => /^[A-Za-z0-9]{7}$/.test(s))).toBe(true);
  });

  it('errors: a variable dim without --shape, -b beyond max_batch_size, -b on a model that does not batch, an unknown --shape name', async () => {
    expect(await fails(VARIABLE, {})).toMatch(/input IN contains dynamic shape \[-1,2\], provide shapes/);
    expect(await fails(SIMPLE, { batchSize: 9 })).toBe(
      "expecting batch size <= 8 for model 'simple', got -b 9",
    );
    expect(await fails(profile({ ...SIMPLE, maxBatchSize: 0 }), { batchSize: 2 })).toMatch(
      /does not support batching/,
    );
    expect(await fails(SIMPLE, { shapes: new Map([['NOPE', [1]]]) })).toMatch(/--shape names 'NOPE'/);
    expect(
      await fails(profile({ inputs: [tensor('S', 'INT32', [2], { isShapeTensor: true })], outputs: [] }), {}),
    ).toBe("can not generate data for shape tensor 'S', user-provided data is needed.");
  });
});

describe('JSON data files', () => {
  it('plain arrays, b64 and content/shape; -b takes consecutive entries and wraps around', async () => {
    const ints = (start: number): number[] => Array.from({ length: 16 }, (_, i) => start + i);
    const b64 = Buffer.from(new Int32Array(ints(200)).buffer).toString('base64');
    const file = await json('simple.json', {
      data: [
        { INPUT0: ints(0), INPUT1: ints(100) },
        { INPUT0: { b64 }, INPUT1: { content: ints(300), shape: [16] } },
        { INPUT0: { content: { b64 }, shape: [16] }, INPUT1: ints(400) },
      ],
    });
    const one = await buildInputDataset(SIMPLE, options({ inputData: [file] }));
    expect(one.streams[0]?.map((r) => values(r)[0])).toEqual([0, 200, 200]);
    expect(one.streams[0]?.map((r) => values(r, 1)[0])).toEqual([100, 300, 400]);
    const two = await buildInputDataset(SIMPLE, options({ inputData: [file], batchSize: 2 }));
    expect(two.streams[0]?.map((r) => r.inputs[0]?.shape)).toEqual([
      [2, 16],
      [2, 16],
      [2, 16],
    ]);
    const firstOfRow = (r: PreparedRequest | undefined): number[] => [
      values(r, 1)[0] ?? -1,
      values(r, 1)[16] ?? -1,
    ];
    expect(two.streams[0]?.map(firstOfRow)).toEqual([
      [100, 300],
      [300, 400],
      [400, 100],
    ]);
  });

  it('variable shapes from the entry override --shape; BOOL, FP16, INT64 and BYTES values', async () => {
    const model = profile({
      maxBatchSize: 0,
      inputs: [
        tensor('IN', 'FP32', [-1, 2]),
        tensor('FLAG', 'BOOL', [2]),
        tensor('HALF', 'FP16', [1]),
        tensor('BIG', 'INT64', [2]),
        tensor('TEXT', 'BYTES', [-1]),
      ],
      outputs: [],
    });
    const file = await json('types.json', {
      data: [
        {
          IN: { content: [1, 2, 3, 4, 5, 6], shape: [3, 2] },
          FLAG: [true, 0],
          HALF: [1.5],
          BIG: ['9007199254740993', -1],
          TEXT: { content: ['a', 'bc'], shape: [2] },
        },
        { IN: [7, 8], FLAG: [false, true], HALF: [0], BIG: [1, 2], TEXT: { content: ['x'], shape: [1] } },
      ],
    });
    const r = await buildInputDataset(
      model,
      options({ inputData: [file], shapes: new Map([['IN', [1, 2]]]) }),
    );
    const [first, second] = r.streams[0] ?? [];
    expect(first?.inputs.map((i) => i.shape)).toEqual([[3, 2], [2], [1], [2], [2]]);
    expect(second?.inputs[0]?.shape).toEqual([1, 2]);
    expect([...(first?.inputs[1]?.data as Uint8Array)]).toEqual([1, 0]);
    expect([...(first?.inputs[2]?.data as Uint16Array)]).toEqual([0x3e00]);
    expect([...(first?.inputs[3]?.data as BigInt64Array)]).toEqual([9007199254740993n, -1n]);
    expect((first?.inputs[4]?.data as Uint8Array[]).map((e) => new TextDecoder().decode(e))).toEqual([
      'a',
      'bc',
    ]);
  });

  it('validation_data becomes expected outputs, batched like the inputs; several files merge', async () => {
    const a = await json('a.json', {
      data: [{ INPUT0: Array(16).fill(1), INPUT1: Array(16).fill(2) }],
      validation_data: [{ OUTPUT0: Array(16).fill(3), OUTPUT1: Array(16).fill(-1) }],
    });
    const b = await json('b.json', {
      data: [{ INPUT0: Array(16).fill(5), INPUT1: Array(16).fill(5) }],
      validation_data: [{ OUTPUT0: Array(16).fill(10) }],
    });
    const r = await buildInputDataset(SIMPLE, options({ inputData: [a, b], batchSize: 2 }));
    expect(r.streams).toHaveLength(1);
    expect(r.streams[0]).toHaveLength(2);
    const expected = r.streams[0]?.[0]?.expectedOutputs;
    expect(expected?.get('OUTPUT0')?.shape).toEqual([2, 16]);
    expect([...(expected?.get('OUTPUT0')?.data as Int32Array)].filter((_, i) => i % 16 === 0)).toEqual([
      3, 10,
    ]);
    // OUTPUT1 is given for one of the two batched entries only: not checked
    expect(expected?.has('OUTPUT1')).toBe(false);
  });

  it('streams: kept for a sequence model, joined into one for a model without sequence batching', async () => {
    const model = profile({
      maxBatchSize: 0,
      sequenceBatching: true,
      inputs: [tensor('INPUT', 'BYTES', [1])],
      outputs: [],
    });
    const file = await json('streams.json', {
      data: [
        [{ INPUT: ['1'] }, { INPUT: ['2'] }, { INPUT: ['3'] }],
        [{ INPUT: ['a'] }],
        [{ INPUT: ['x'] }, { INPUT: ['y'] }],
      ],
    });
    const seq = await buildInputDataset(model, options({ inputData: [file] }));
    const text = (r: PreparedRequest): string =>
      new TextDecoder().decode((r.inputs[0]?.data as Uint8Array[])[0]);
    expect(seq.streams.map((s) => s.map(text))).toEqual([['1', '2', '3'], ['a'], ['x', 'y']]);
    const plain = await buildInputDataset(
      { ...model, sequenceBatching: false },
      options({ inputData: [file] }),
    );
    expect(plain.streams.map((s) => s.map(text))).toEqual([['1', '2', '3', 'a', 'x', 'y']]);
  });

  it("errors with perf_analyzer's messages", async () => {
    const f = async (name: string, content: unknown, o: Partial<PerfOptions> = {}): Promise<string> =>
      fails(SIMPLE, { inputData: [await json(name, content)], ...o });
    const row: number[] = Array<number>(16).fill(1);
    expect(await f('nodata.json', { rows: [] })).toMatch(/The json file doesn't contain data field$/);
    expect(await f('badjson.json', '{"data": [')).toMatch(/failed to parse the specified json file/);
    expect(await f('missing.json', { data: [{ INPUT0: row }] })).toMatch(
      /missing tensor INPUT1 \( Location stream id: 0, step id: 0\)$/,
    );
    expect(await f('unknown.json', { data: [{ INPUT0: row, INPUT1: row, EXTRA: [1] }] })).toMatch(
      /The input or output 'EXTRA' is not found in the model configuration$/,
    );
    expect(await f('short.json', { data: [{ INPUT0: [1, 2], INPUT1: row }] })).toMatch(
      /mismatch in the data provided for INPUT0. Expected: 64 bytes, Got: 8 bytes$/,
    );
    expect(
      await f('shape.json', { data: [{ INPUT0: { content: row, shape: [4, 4] }, INPUT1: row }] }),
    ).toMatch(
      /The supplied shape of \[4,4\] for input "INPUT0" is incompatible with the model's input shape of \[16\]$/,
    );
    expect(
      await f('mixed.json', { data: [{ INPUT0: row, INPUT1: row }, [{ INPUT0: row, INPUT1: row }]] }),
    ).toMatch(/Inconsistency in input-data provided/);
    expect(await f('valid.json', { data: [{ INPUT0: row, INPUT1: row }], validation_data: [] })).toMatch(
      /The 'validation_data' field doesn't align with 'data' field in the json file$/,
    );
    expect(await f('type.json', { data: [{ INPUT0: [...row.slice(1), 'x'], INPUT1: row }] })).toMatch(
      /input 'INPUT0' .*element 15 \("x"\) is not a valid INT32 value/,
    );
    expect(await f('range.json', { data: [{ INPUT0: [...row.slice(1), 2 ** 31], INPUT1: row }] })).toMatch(
      /element 15 \(2147483648\) is not a valid INT32 value/,
    );
    expect(await f('nocontent.json', { data: [{ INPUT0: { shape: [16] }, INPUT1: row }] })).toMatch(
      /missing content field. \( Location stream id: 0, step id: 0\)$/,
    );
    expect(
      await fails(VARIABLE, { inputData: [await json('var.json', { data: [{ IN: [1, 2, 3, 4] }] })] }),
    ).toMatch(
      /The variable-sized tensor "IN" with model shape \[-1,2\] needs to have its shape fully defined/,
    );
    expect(
      await fails(SIMPLE, {
        inputData: [
          await json('batch.json', { data: [{ INPUT0: row, INPUT1: row }] }),
          join(dir, 'gone.json'),
        ],
      }),
    ).toMatch(/no such file or directory/);
  });
});

describe('data directories', () => {
  it('raw little-endian files per input, BYTES one string per line, optional output files for validation', async () => {
    const data = join(dir, 'dir-ok');
    await mkdir(data);
    await writeFile(join(data, 'IN'), Buffer.from(new Float32Array([1, 2, 3, 4]).buffer));
    await writeFile(join(data, 'TEXT'), 'first line\nsecond\n');
    await writeFile(join(data, 'OUT'), Buffer.from(new Float32Array([2, 4, 6, 8]).buffer));
    const r = await buildInputDataset(
      VARIABLE,
      options({ inputData: [data], shapes: new Map([['IN', [2, 2]]]), batchSize: 2 }),
    );
    const request = r.streams[0]?.[0];
    expect(request?.inputs[0]?.shape).toEqual([2, 2, 2]);
    expect(values(request)).toEqual([1, 2, 3, 4, 1, 2, 3, 4]);
    expect((request?.inputs[1]?.data as Uint8Array[]).map((e) => new TextDecoder().decode(e))).toEqual([
      'first line',
      'second',
      'first line',
      'second',
    ]);
    const out = request?.expectedOutputs?.get('OUT');
    expect(out?.shape).toEqual([2, 2, 2]);
    expect([...(out?.data as Float32Array)]).toEqual([2, 4, 6, 8, 2, 4, 6, 8]);
  });

  it('errors: a file that is no input or output, a wrong byte size, a wrong line count, a missing input', async () => {
    const make = async (name: string, files: Record<string, Uint8Array | string>): Promise<string> => {
      const d = join(dir, name);
      await mkdir(d);
      for (const [file, content] of Object.entries(files)) await writeFile(join(d, file), content);
      return d;
    };
    const shapes = new Map([['IN', [2, 2]]]);
    const in16 = Buffer.from(new Float32Array(4).buffer);
    expect(
      await fails(VARIABLE, { shapes, inputData: [await make('d1', { IN: in16, STRAY: 'x' })] }),
    ).toMatch(/Provided data file 'STRAY' does not correspond to a valid model input or output.$/);
    expect(
      await fails(VARIABLE, { shapes, inputData: [await make('d2', { IN: new Uint8Array(12) })] }),
    ).toMatch(/provided data for input IN has byte size 12, expect 16$/);
    expect(
      await fails(VARIABLE, { shapes, inputData: [await make('d3', { IN: in16, TEXT: 'one\n' })] }),
    ).toMatch(/provided data for input TEXT has 1 elements, expect 2$/);
    expect(await fails(SIMPLE, { inputData: [await make('d4', { INPUT0: new Uint8Array(64) })] })).toMatch(
      /failed to open file '.*INPUT1'$/,
    );
  });
});

describe('against the embedded server', () => {
  let embedded: Embedded;
  let client: TritonClient;

  beforeAll(async () => {
    embedded = await startEmbedded({ testModels: ['simple'] });
    client = new TritonClient({ url: embedded.url });
  });

  afterAll(async () => {
    await client.close();
    await embedded.close();
  });

  it('requests built from a JSON file give the outputs its validation_data expects (-b 3 over 2 entries)', async () => {
    const a = Array.from({ length: 16 }, (_, i) => i);
    const b = Array.from({ length: 16 }, (_, i) => 10 * i);
    const file = await json('e2e.json', {
      data: [
        { INPUT0: a, INPUT1: b },
        { INPUT0: b, INPUT1: a },
      ],
      validation_data: [
        { OUTPUT0: a.map((x, i) => x + (b[i] ?? 0)), OUTPUT1: a.map((x, i) => x - (b[i] ?? 0)) },
        { OUTPUT0: b.map((x, i) => x + (a[i] ?? 0)), OUTPUT1: b.map((x, i) => x - (a[i] ?? 0)) },
      ],
    });
    const model = await fetchModelProfile(client, 'simple', '');
    const dataset = await buildInputDataset(model, options({ inputData: [file], batchSize: 3 }));
    expect(dataset.streams[0]).toHaveLength(2);
    for (const request of dataset.streams[0] ?? []) {
      const result = await client.infer('simple', request.inputs);
      expect(request.expectedOutputs?.size).toBe(2);
      for (const [name, expected] of request.expectedOutputs ?? []) {
        const output = result.output(name);
        expect(output.shape).toEqual(expected.shape);
        expect([...(output.data as Int32Array)]).toEqual([...(expected.data as Int32Array)]);
      }
    }
  });
});
