/**
 * Triton's `TENSORS` trace level through the real server, set over each wire with the client
 * package (issue 26): the level is accepted by the trace settings API of HTTP and gRPC (alone or with
 * `TIMESTAMPS`, reported as Triton reports it), and a traced request writes its input tensors when
 * queued (`TENSOR_QUEUE_INPUT`, after `QUEUE_START`) and its output tensors when answered
 * (`TENSOR_BACKEND_OUTPUT`, between `COMPUTE_END` and `REQUEST_END`) in Triton's layout
 * `{"id","activity","tensor":{"name","data","shape","dtype"}}`, with tritonserver's number text
 * (`%g`, 6 significant digits) and BYTES elements quoted. A `TENSORS`-only trace has no timestamps
 * and no model object, as in tritonserver.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { TritonClient, type InferInput } from '@tritonserver-ts/client';
import { createGrpcClient } from '@tritonserver-ts/client/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { formatStreamDouble } from '../../src/core/trace-tensors.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

interface TraceObject {
  id: number;
  model_name?: string;
  timestamps?: { name: string }[];
  activity?: string;
  tensor?: { name: string; data: string; shape: string; dtype: string };
}

let dir: string;
let srv: TestServer;
let file: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tritonserver-ts-trace-tensors-'));
  file = join(dir, 'trace.json');
  // log-frequency 1: every trace is written to <file>.<n> as soon as it is complete.
  srv = await startTestServer({
    only: ['simple', 'identity_fp32', 'identity_string'],
    grpcPort: 0,
    trace: { trace_file: file, trace_rate: '1', log_frequency: '1', trace_level: ['OFF'] },
  });
}, 60_000);
afterAll(async () => {
  await srv.close();
  await rm(dir, { recursive: true, force: true });
});

/** Every trace object written so far, file by file (`<file>.0`, `<file>.1`, …). */
function written(): TraceObject[] {
  const files = readdirSync(dir)
    .filter((f) => f.startsWith('trace.json.'))
    .sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()));
  return files.flatMap((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as TraceObject[]);
}

/** What one trace recorded, in order: timestamp names and `ACTIVITY:tensor` entries. */
function events(objects: readonly TraceObject[], id: number): string[] {
  return objects
    .filter((o) => o.id === id)
    .flatMap((o) =>
      o.timestamps !== undefined
        ? o.timestamps.map((t) => t.name)
        : o.activity !== undefined
          ? [`${o.activity}:${o.tensor?.name}`]
          : [`model:${o.model_name}`],
    );
}

function tensorsOf(
  objects: readonly TraceObject[],
  id: number,
  activity: string,
): Record<string, TraceObject['tensor']> {
  const out: Record<string, TraceObject['tensor']> = {};
  for (const o of objects) {
    if (o.id === id && o.activity === activity && o.tensor !== undefined) out[o.tensor.name] = o.tensor;
  }
  return out;
}

describe('%g text of FP32 / FP64 elements, as a C++ stream writes a double', () => {
  it.each([
    [0.1, '0.1'],
    [1e-7, '1e-07'],
    [1234567, '1.23457e+06'],
    [100000, '100000'],
    [1e6, '1e+06'],
    [-2.5, '-2.5'],
    [0.0001, '0.0001'],
    [0.00001234, '1.234e-05'],
    [3, '3'],
    [-0, '-0'],
    [Infinity, 'inf'],
    [Number.NaN, 'nan'],
    [1e300, '1e+300'],
  ])('%s → %s', (value, text) => {
    expect(formatStreamDouble(value)).toBe(text);
  });
});

describe.each(['http', 'grpc'] as const)('TENSORS set and traced over %s', (transport) => {
  let client: TritonClient;
  beforeAll(() => {
    client =
      transport === 'http'
        ? new TritonClient({ url: srv.url })
        : createGrpcClient({ url: srv.running.grpcUrl });
  });
  afterAll(async () => {
    await client.updateTraceSettings({ trace_level: ['OFF'] });
    await client.close();
  });

  /** Infers `inputs` on `model` with the level set to `levels`; returns its trace's objects and id. */
  async function traced(
    levels: string[],
    model: string,
    inputs: InferInput[],
  ): Promise<{ objects: TraceObject[]; id: number }> {
    const before = written();
    const settings = await client.updateTraceSettings({ trace_level: levels });
    expect(settings.trace_level).toEqual(levels);
    expect((await client.getTraceSettings()).trace_level).toEqual(levels);
    await client.infer(model, inputs);
    await client.updateTraceSettings({ trace_level: ['OFF'] });
    const objects = written().slice(before.length);
    const ids = [...new Set(objects.map((o) => o.id))];
    expect(ids.length).toBe(1);
    return { objects, id: ids[0] as number };
  }

  it('TIMESTAMPS + TENSORS: inputs when queued, outputs when answered, among the timestamps', async () => {
    const { objects, id } = await traced(['TIMESTAMPS', 'TENSORS'], 'simple', [
      {
        name: 'INPUT0',
        datatype: 'INT32',
        shape: [1, 16],
        data: Int32Array.from({ length: 16 }, (_, i) => i),
      },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16).fill(-2) },
    ]);
    const seen = events(objects, id);
    const at = (e: string) => seen.indexOf(e);
    expect(at('model:simple')).toBe(at('REQUEST_START') - 1);
    for (const input of ['INPUT0', 'INPUT1']) {
      expect(at(`TENSOR_QUEUE_INPUT:${input}`)).toBeGreaterThan(at('QUEUE_START'));
      expect(at(`TENSOR_QUEUE_INPUT:${input}`)).toBeLessThan(at('COMPUTE_START'));
    }
    for (const output of ['OUTPUT0', 'OUTPUT1']) {
      expect(at(`TENSOR_BACKEND_OUTPUT:${output}`)).toBeGreaterThan(at('COMPUTE_END'));
      expect(at(`TENSOR_BACKEND_OUTPUT:${output}`)).toBeLessThan(at('REQUEST_END'));
    }
    const range = Array.from({ length: 16 }, (_, i) => i);
    expect(tensorsOf(objects, id, 'TENSOR_QUEUE_INPUT')).toEqual({
      INPUT0: { name: 'INPUT0', data: range.join(','), shape: '1,16', dtype: 'INT32' },
      INPUT1: { name: 'INPUT1', data: new Array(16).fill(-2).join(','), shape: '1,16', dtype: 'INT32' },
    });
    expect(tensorsOf(objects, id, 'TENSOR_BACKEND_OUTPUT')).toEqual({
      OUTPUT0: { name: 'OUTPUT0', data: range.map((i) => i - 2).join(','), shape: '1,16', dtype: 'INT32' },
      OUTPUT1: { name: 'OUTPUT1', data: range.map((i) => i + 2).join(','), shape: '1,16', dtype: 'INT32' },
    });
  });

  it('TENSORS alone: FP32 elements in %g text, no timestamps and no model object', async () => {
    const values = [0.1, 1e-7, 1234567, -2.5];
    const { objects, id } = await traced(['TENSORS'], 'identity_fp32', [
      { name: 'INPUT0', datatype: 'FP32', shape: [2, 2], data: Float32Array.from(values) },
    ]);
    expect(events(objects, id)).toEqual(['TENSOR_QUEUE_INPUT:INPUT0', 'TENSOR_BACKEND_OUTPUT:OUTPUT0']);
    const text = '0.1,1e-07,1.23457e+06,-2.5';
    expect(tensorsOf(objects, id, 'TENSOR_QUEUE_INPUT')['INPUT0']).toEqual({
      name: 'INPUT0',
      data: text,
      shape: '2,2',
      dtype: 'FP32',
    });
    expect(tensorsOf(objects, id, 'TENSOR_BACKEND_OUTPUT')['OUTPUT0']?.data).toBe(text);
  });

  it('BYTES elements are quoted', async () => {
    const { objects, id } = await traced(['TENSORS'], 'identity_string', [
      { name: 'INPUT0', datatype: 'BYTES', shape: [1, 2], data: ['ab', 'c d'] },
    ]);
    expect(tensorsOf(objects, id, 'TENSOR_QUEUE_INPUT')['INPUT0']).toEqual({
      name: 'INPUT0',
      data: '"ab","c d"',
      shape: '1,2',
      dtype: 'BYTES',
    });
    // Triton's file has the quotes escaped inside the JSON string.
    expect(
      readdirSync(dir).some((f) =>
        readFileSync(join(dir, f), 'utf8').includes('"data":"\\"ab\\",\\"c d\\""'),
      ),
    ).toBe(true);
  });
});
