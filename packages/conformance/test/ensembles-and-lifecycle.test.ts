// Ensembles, request parameters, shared memory and model loading the way Triton's own QA uses them
// (qa/L0_simple_ensemble, the ensemble legs of qa/L0_infer, qa/L0_parameters, qa/L0_shared_memory,
// qa/L0_lifecycle), over both transports. The models are load overrides (config JSON plus `file:`
// contents) over the suite's repository models (`classifier`, `identity_fp32`, `py_decoupled`), so
// the repository stays read-only and a real Triton at TRITON_URL runs the same cases: an ensemble's
// own label_filename labels its classes; reshaped ensemble inputs and outputs keep their shapes; a
// step output a Python model leaves out is left out of the response; sequence ids and flags reach a
// step while `binary_data_output` never does; a decoupled step makes the ensemble decoupled (it
// streams over gRPC, HTTP refuses it); unregistering shared memory in use waits for the request;
// loads of different models run at the same time; an `instance_group` given as one object is one
// group.
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { InferInput, LoadModelOptions, TritonClient } from '@tritonserver-ts/client';
import type { GrpcTransport } from '@tritonserver-ts/client/grpc';
import { addSubPythonModel } from '@tritonserver-ts/server/testing';
import { newClient, transports } from './target.js';
import { differsOver, expectServerError } from './transport-differences.js';

const README = new TextEncoder().encode('a version directory');
const LABELS = ['E0', 'E1', 'E2', 'E3', 'E4'];

type TensorMap = Record<string, string>;
const stepOf = (model: string, input: TensorMap, output: TensorMap): object => ({
  model_name: model,
  model_version: -1,
  input_map: input,
  output_map: output,
});

function ensemble(
  name: string,
  maxBatchSize: number,
  input: object[],
  output: object[],
  steps: object[],
  files: Record<string, Uint8Array> = {},
): LoadModelOptions {
  return {
    config: {
      name,
      platform: 'ensemble',
      max_batch_size: maxBatchSize,
      input,
      output,
      ensemble_scheduling: { step: steps },
    },
    files: { 'file:1/README.txt': README, ...files },
  };
}

function python(name: string, source: string, io: { input: object[]; output: object[] }): LoadModelOptions {
  return {
    config: {
      name,
      backend: 'python',
      max_batch_size: 0,
      ...io,
      instance_group: [{ kind: 'KIND_CPU', count: 1 }],
    },
    files: { 'file:1/model.py': new TextEncoder().encode(source) },
  };
}

const fp32 = (name: string, dims: number[], extra: object = {}): object => ({
  name,
  data_type: 'TYPE_FP32',
  dims,
  ...extra,
});

/** Triton's `partial_add_sub`, written here: OUTPUT1 is declared and never sent. */
const PARTIAL_SOURCE = `import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            a = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            b = pb_utils.get_input_tensor_by_name(request, "INPUT1").as_numpy()
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", a + b)]))
        return responses
`;

const abInputs = (names: [string, string]): InferInput[] =>
  names.map((name) => ({ name, datatype: 'FP32', shape: [4], data: Float32Array.of(1, 2, 3, 4) }));

describe.each(transports)('%s: ensembles as Triton QA uses them', (transport) => {
  const client: TritonClient = newClient(transport, { timeoutMs: 60_000 });
  const loaded: string[] = [];
  const load = async (name: string, options: LoadModelOptions): Promise<void> => {
    await client.loadModel(name, options);
    loaded.push(name);
  };
  afterAll(async () => {
    for (const name of loaded.reverse()) await client.unloadModel(name).catch(() => undefined);
    await client.close();
  });

  it("classification through an ensemble labels the classes from the ensemble's own label_filename", async () => {
    const name = `conf25_cls_${transport}`;
    await load(
      name,
      ensemble(
        name,
        8,
        [fp32('IN', [5])],
        [fp32('OUT', [5], { label_filename: 'ens_labels.txt' })],
        [stepOf('classifier', { input: 'IN' }, { probs: 'OUT' })],
        { 'file:ens_labels.txt': new TextEncoder().encode(`${LABELS.join('\n')}\n`) },
      ),
    );
    const result = await client.infer(
      name,
      [{ name: 'IN', datatype: 'FP32', shape: [1, 5], data: Float32Array.of(0.1, 2, 0.5, -1, 1) }],
      { outputs: [{ name: 'OUT', classCount: 2 }] },
    );
    expect(result.shape('OUT')).toEqual([1, 2]);
    expect(result.classifications('OUT').map((e) => [e.index, e.label])).toEqual([
      [1, 'E1'],
      [4, 'E4'],
    ]);
  });

  it('reshaped ensemble inputs and outputs keep the shapes the ensemble declares', async () => {
    const name = `conf25_reshape_${transport}`;
    await load(
      name,
      ensemble(
        name,
        8,
        [fp32('IN', [2, 2], { reshape: { shape: [4] } })],
        [fp32('OUT', [2, 2], { reshape: { shape: [4] } })],
        [stepOf('identity_fp32', { INPUT0: 'IN' }, { OUTPUT0: 'OUT' })],
      ),
    );
    const result = await client.infer(name, [
      { name: 'IN', datatype: 'FP32', shape: [2, 2, 2], data: Float32Array.of(1, 2, 3, 4, 5, 6, 7, 8) },
    ]);
    expect(result.shape('OUT')).toEqual([2, 2, 2]);
    expect(Array.from(result.asTypedArray('OUT', 'FP32'))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('a step output the model does not produce is left out, and the request succeeds (partial_add_sub)', async () => {
    const model = `conf25_partial_${transport}`;
    await load(
      model,
      python(model, PARTIAL_SOURCE, {
        input: [fp32('INPUT0', [4]), fp32('INPUT1', [4])],
        output: [fp32('OUTPUT0', [4]), fp32('OUTPUT1', [4])],
      }),
    );
    const name = `conf25_partial_ens_${transport}`;
    await load(
      name,
      ensemble(
        name,
        0,
        [fp32('A', [4]), fp32('B', [4])],
        [fp32('SUM', [4]), fp32('DIFF', [4])],
        [stepOf(model, { INPUT0: 'A', INPUT1: 'B' }, { OUTPUT0: 'SUM', OUTPUT1: 'DIFF' })],
      ),
    );
    const result = await client.infer(name, abInputs(['A', 'B']));
    expect(result.outputNames).toEqual(['SUM']);
    expect(Array.from(result.asTypedArray('SUM', 'FP32'))).toEqual([2, 4, 6, 8]);
  });

  it('sequence ids and flags reach a step; binary_data_output never reaches a model (qa/L0_parameters)', async () => {
    const echo = `conf25_echo_${transport}`;
    const source = addSubPythonModel(echo).files['1/model.py'] as string;
    await load(
      echo,
      python(echo, source, {
        input: [fp32('INPUT0', [4]), fp32('INPUT1', [4])],
        output: [
          fp32('OUTPUT0', [4]),
          fp32('OUTPUT1', [4]),
          { name: 'INFO', data_type: 'TYPE_STRING', dims: [1] },
        ],
      }),
    );
    const name = `conf25_seq_${transport}`;
    await load(
      name,
      ensemble(
        name,
        0,
        [fp32('A', [4]), fp32('B', [4])],
        [{ name: 'INFO', data_type: 'TYPE_STRING', dims: [1] }],
        [stepOf(echo, { INPUT0: 'A', INPUT1: 'B' }, { INFO: 'INFO' })],
      ),
    );
    // INFO is "<request id>|<correlation id>|<flags>|<parameters the model sees>".
    const through = await client.infer(name, abInputs(['A', 'B']), {
      requestId: 'r1',
      sequenceId: 42,
      sequenceStart: true,
      parameters: { key1: 'value1' },
    });
    expect(through.asStrings('INFO')).toEqual(['r1|42|1|{"key1":"value1"}']);
    // The HTTP client asks binary_data_output when no outputs are listed: the model never sees it.
    const direct = await client.infer(echo, abInputs(['INPUT0', 'INPUT1']), { parameters: { key2: 2 } });
    expect(direct.asStrings('INFO')).toEqual(['|0|0|{"key2":2}']);
  });

  it('a decoupled step makes the ensemble decoupled: streamed over gRPC, refused by HTTP and ModelInfer', async () => {
    const name = `conf25_dec_${transport}`;
    const int32 = (n: string): object => ({ name: n, data_type: 'TYPE_INT32', dims: [1] });
    await load(
      name,
      ensemble(
        name,
        0,
        [int32('IN')],
        [int32('OUT')],
        [stepOf('py_decoupled', { IN: 'IN' }, { OUT: 'OUT' })],
      ),
    );
    const config = await client.getModelConfig(name);
    expect(config.model_transaction_policy?.decoupled).toBe(true);
    const count = (n: number): InferInput[] => [
      { name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.of(n) },
    ];
    const error = await expectServerError(client.infer(name, count(2)), transport, 'UNSUPPORTED');
    expect(error.message).toMatch(/ doesn't support models with decoupled transaction policy$/);
    if (!differsOver(transport, 'model-stream-infer')) return;
    const stream = (client.transport as GrpcTransport).openStream();
    const responses = await stream.inferAll(name, count(3), { requestId: 'e3' });
    stream.end();
    expect(responses.map((r) => [r.id, r.final, r.empty])).toEqual([
      ['e3', false, false],
      ['e3', false, false],
      ['e3', false, false],
      ['e3', true, true],
    ]);
    expect(responses.slice(0, 3).map((r) => r.result?.asTypedArray('OUT', 'INT32')[0])).toEqual([0, 1, 2]);
  });
});

describe.each(transports)(
  '%s: shared memory unregistered during an inference (qa/L0_shared_memory)',
  (transport) => {
    const client: TritonClient = newClient(transport, { timeoutMs: 60_000 });
    const model = `conf25_slow_${transport}`;
    afterAll(async () => {
      await client.unloadModel(model).catch(() => undefined);
      await client.close();
    });

    it('unregister succeeds at once; the regions stay until the request is answered, then go', async () => {
      await client.loadModel(model, {
        config: {
          name: model,
          backend: 'identity',
          max_batch_size: 0,
          input: [fp32('INPUT0', [4])],
          output: [fp32('OUTPUT0', [4])],
          parameters: { execute_delay_ms: { string_value: '600' } },
        },
        files: { 'file:1/README.txt': README },
      });
      const tag = `${transport}_${process.pid}_${randomBytes(4).toString('hex')}`;
      const keys = [`/conf25_in_${tag}`, `/conf25_out_${tag}`];
      const input = Buffer.alloc(16);
      new Float32Array(input.buffer, input.byteOffset, 4).set([1, 2, 3, 4]);
      writeFileSync(`/dev/shm${keys[0]}`, input);
      writeFileSync(`/dev/shm${keys[1]}`, Buffer.alloc(16));
      try {
        await client.registerSystemSharedMemory(`in_${tag}`, keys[0] as string, 16);
        await client.registerSystemSharedMemory(`out_${tag}`, keys[1] as string, 16);
        const pending = client.infer(
          model,
          [
            {
              name: 'INPUT0',
              datatype: 'FP32',
              shape: [4],
              sharedMemory: { region: `in_${tag}`, byteSize: 16 },
            },
          ],
          { outputs: [{ name: 'OUTPUT0', sharedMemory: { region: `out_${tag}`, byteSize: 16 } }] },
        );
        await new Promise((r) => setTimeout(r, 200));
        await client.unregisterSystemSharedMemory();
        const during = (await client.getSystemSharedMemoryStatus()).map((s) => s.name).sort();
        expect(during).toEqual([`in_${tag}`, `out_${tag}`]);
        await pending;
        const written = readFileSync(`/dev/shm${keys[1]}`);
        expect(Array.from(new Float32Array(written.buffer, written.byteOffset, 4))).toEqual([1, 2, 3, 4]);
        expect(await client.getSystemSharedMemoryStatus()).toEqual([]);
      } finally {
        for (const key of keys) rmSync(`/dev/shm${key}`, { force: true });
      }
    });
  },
);

describe.each(transports)('%s: model loading (qa/L0_lifecycle)', (transport) => {
  const client: TritonClient = newClient(transport, { timeoutMs: 60_000 });
  const names = [`conf25_delay_a_${transport}`, `conf25_delay_b_${transport}`, `conf25_group_${transport}`];
  afterAll(async () => {
    for (const name of names) await client.unloadModel(name).catch(() => undefined);
    await client.close();
  });

  const identity = (name: string, extra: object = {}): LoadModelOptions => ({
    config: {
      name,
      backend: 'identity',
      max_batch_size: 0,
      input: [fp32('INPUT0', [-1])],
      output: [fp32('OUTPUT0', [-1])],
      ...extra,
    },
    files: { 'file:1/README.txt': README },
  });

  it('loads of different models run at the same time (identity creation_delay_sec 2)', async () => {
    const delayed = { parameters: { creation_delay_sec: { string_value: '2' } } };
    const t0 = performance.now();
    await Promise.all([
      client.loadModel(names[0] as string, identity(names[0] as string, delayed)),
      client.loadModel(names[1] as string, identity(names[1] as string, delayed)),
    ]);
    const seconds = (performance.now() - t0) / 1000;
    expect(seconds).toBeGreaterThanOrEqual(2);
    expect(seconds).toBeLessThan(4);
  });

  it('an instance_group given as one object is one group', async () => {
    const name = names[2] as string;
    await client.loadModel(name, identity(name, { instance_group: { kind: 'KIND_CPU', count: 2 } }));
    const config = await client.getModelConfig(name);
    expect(config.instance_group).toHaveLength(1);
    expect(config.instance_group?.[0]).toMatchObject({ kind: 'KIND_CPU', count: 2 });
  });
});
