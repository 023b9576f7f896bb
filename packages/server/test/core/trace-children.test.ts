/**
 * Traces of requests a model sends, as tritonserver writes them (`qa/L0_trace`'s ensemble case), on
 * the real server over HTTP and gRPC: an ensemble's trace has no compute timestamps of its own and
 * each of its steps is a child trace — its own id, `parent_id` the ensemble's, the step model's
 * name, and the step's REQUEST_START … COMPUTE_* … REQUEST_END — written to the same file, also for
 * a nested ensemble (a grandchild names its parent step). Python models (the step here, and a
 * decoupled model over a gRPC stream) get COMPUTE_START / COMPUTE_INPUT_END / COMPUTE_OUTPUT_START /
 * COMPUTE_END in order. A Python model's BLS request built with `trace=request.trace()` is a child
 * of its request's trace too; one built without it is not traced (as in Triton's Python backend).
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { addSubPythonModel, decoupledPythonModel, writePythonModels } from '../../src/testing/index.js';
import { step } from '../ensemble/fixtures.js';
import { GrpcTestClient, int32Bytes } from '../grpc/helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const PYTHON = '/usr/bin/python3';
const COMPUTE = ['COMPUTE_START', 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START', 'COMPUTE_END'];

interface TraceObject {
  id: number;
  model_name?: string;
  model_version?: number;
  request_id?: string;
  parent_id?: number;
  timestamps?: { name: string; ns: number }[];
}

interface Trace {
  id: number;
  model?: TraceObject;
  names: string[];
}

const io = [
  '{ name: "A" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "B" data_type: TYPE_FP32 dims: [ 4 ] }',
  '{ name: "INFO" data_type: TYPE_STRING dims: [ 1 ] }',
] as const;

const ensembleConfig = (name: string, inner: string, map: Record<string, string>): string => `name: "${name}"
platform: "ensemble"
max_batch_size: 0
input [ ${io[0]} ]
output [ ${io[1]} ]
ensemble_scheduling { step [ ${step(inner, map, { INFO: 'INFO' })} ] }
`;

/** `py_bls`: A, B → two BLS calls of py_add, the first with `trace=request.trace()`; INFO of the first. */
const blsModel = {
  name: 'py_bls',
  files: {
    'config.pbtxt': `name: "py_bls"
backend: "python"
max_batch_size: 0
input [ ${io[0]} ]
output [ ${io[1]} ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`,
    '1/model.py': `import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            inputs = [
                pb_utils.Tensor("INPUT0", pb_utils.get_input_tensor_by_name(request, "A").as_numpy()),
                pb_utils.Tensor("INPUT1", pb_utils.get_input_tensor_by_name(request, "B").as_numpy()),
            ]
            traced = pb_utils.InferenceRequest(
                model_name="py_add", inputs=inputs, requested_output_names=["INFO"], trace=request.trace()
            ).exec()
            pb_utils.InferenceRequest(model_name="py_add", inputs=inputs, requested_output_names=["INFO"]).exec()
            responses.append(pb_utils.InferenceResponse([traced.output_tensors()[0]]))
        return responses
`,
  },
};

let dir: string;
let file: string;
let traces: Trace[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'trace-children-'));
  file = join(dir, 'trace.json');
  const server: TestServer = await startTestServer({
    grpcPort: 0,
    python: { interpreter: PYTHON },
    trace: { trace_level: ['TIMESTAMPS'], trace_rate: '1', trace_file: file },
    fill: async (root) => {
      await writePythonModels(root, [addSubPythonModel('py_add'), decoupledPythonModel('py_dec'), blsModel]);
      for (const [name, text] of [
        ['ens', ensembleConfig('ens', 'py_add', { INPUT0: 'A', INPUT1: 'B' })],
        ['outer', ensembleConfig('outer', 'ens', { A: 'A', B: 'B' })],
      ] as const) {
        await mkdir(join(root, name, '1'), { recursive: true });
        await writeFile(join(root, name, 'config.pbtxt'), text);
      }
    },
  });
  const body = (id: string): string =>
    JSON.stringify({
      id,
      inputs: ['A', 'B'].map((name) => ({ name, datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] })),
    });
  // 1: ens over HTTP (child 2); 3: outer over HTTP (child 4: ens, grandchild 5: py_add).
  for (const [model, id] of [
    ['ens', 'h1'],
    ['outer', 'h2'],
  ] as const) {
    const r = await fetch(`${server.url}/v2/models/${model}/infer`, { method: 'POST', body: body(id) });
    expect(r.status).toBe(200);
  }
  const client = new GrpcTestClient(server.running.grpcUrl);
  // 6: ens over gRPC (child 7).
  await client.call('ModelInfer', {
    modelName: 'ens',
    id: 'g1',
    inputs: ['A', 'B'].map((name) => ({
      name,
      datatype: 'FP32',
      shape: [4n],
      contents: { fp32Contents: [1, 2, 3, 4] },
    })),
  });
  // 8: the decoupled Python model over a stream.
  const { stream, done } = client.collectingStream();
  stream.write({
    modelName: 'py_dec',
    inputs: [{ name: 'IN', datatype: 'INT32', shape: [1n] }],
    rawInputContents: [int32Bytes([2])],
  });
  stream.end();
  await done;
  client.close();
  // 9: the BLS model over HTTP (child 10: its traced BLS call; the other call is not traced).
  const bls = await fetch(`${server.url}/v2/models/py_bls/infer`, { method: 'POST', body: body('b1') });
  expect(bls.status).toBe(200);
  await server.close();
  const objects = JSON.parse(await readFile(file, 'utf8')) as TraceObject[];
  const byId = new Map<number, Trace>();
  for (const o of objects) {
    let t = byId.get(o.id);
    if (t === undefined) byId.set(o.id, (t = { id: o.id, names: [] }));
    if (o.model_name !== undefined) t.model = o;
    for (const ts of o.timestamps ?? []) t.names.push(ts.name);
  }
  traces = [...byId.values()].sort((a, b) => a.id - b.id);
}, 90_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const trace = (id: number): Trace => {
  const t = traces.find((x) => x.id === id);
  if (t === undefined) throw new Error(`no trace ${id}`);
  return t;
};

describe('child traces of ensemble steps', () => {
  it('every request and every step has its own trace, in one file', () => {
    expect(traces.map((t) => [t.id, t.model?.model_name, t.model?.parent_id])).toEqual([
      [1, 'ens', undefined],
      [2, 'py_add', 1],
      [3, 'outer', undefined],
      [4, 'ens', 3],
      [5, 'py_add', 4],
      [6, 'ens', undefined],
      [7, 'py_add', 6],
      [8, 'py_dec', undefined],
      [9, 'py_bls', undefined],
      [10, 'py_add', 9],
    ]);
    // A step carries the ensemble request's id.
    expect(trace(2).model?.request_id).toBe('h1');
    expect(trace(5).model?.request_id).toBe('h2');
  });

  it("HTTP: the ensemble's trace has no compute timestamps; its step's has the core's and the Python model's", () => {
    expect(trace(1).names).toEqual([
      'HTTP_RECV_START',
      'HTTP_RECV_END',
      'REQUEST_START',
      'QUEUE_START',
      'REQUEST_END',
      'INFER_RESPONSE_COMPLETE',
      'HTTP_SEND_START',
      'HTTP_SEND_END',
    ]);
    expect(trace(2).names).toEqual(['REQUEST_START', 'QUEUE_START', ...COMPUTE, 'REQUEST_END']);
    expect(trace(4).names).toEqual(['REQUEST_START', 'QUEUE_START', 'REQUEST_END']);
    expect(trace(5).names).toEqual(['REQUEST_START', 'QUEUE_START', ...COMPUTE, 'REQUEST_END']);
  });

  it('gRPC: the same, with the gRPC timestamps on the ensemble', () => {
    expect(trace(6).names[0]).toBe('GRPC_WAITREAD_START');
    expect(trace(6).names).not.toContain('COMPUTE_START');
    expect(trace(7).names).toEqual(['REQUEST_START', 'QUEUE_START', ...COMPUTE, 'REQUEST_END']);
  });

  it("a BLS request built with trace=request.trace() is its request's child; the one without is not traced", () => {
    expect(trace(10).names).toEqual(['REQUEST_START', 'QUEUE_START', ...COMPUTE, 'REQUEST_END']);
    expect(traces.filter((t) => t.model?.parent_id === 9)).toHaveLength(1);
    expect(trace(9).names.filter((n) => COMPUTE.includes(n))).toEqual(COMPUTE);
  });

  it('a decoupled Python model over a stream gets its compute timestamps', () => {
    const names = trace(8).names;
    expect(names.filter((n) => COMPUTE.includes(n))).toEqual(COMPUTE);
    expect(names.indexOf('COMPUTE_START')).toBeGreaterThan(names.indexOf('QUEUE_START'));
  });
});
