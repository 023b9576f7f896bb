import type { BytesList } from '@tritonserver-ts/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  addSubPythonModel,
  autoCompletePythonModel,
  initFailPythonModel,
  noClassPythonModel,
  syntaxErrorPythonModel,
} from '../../src/testing/index.js';
import { inferJson, outputData, startPythonServer, type PythonTestServer } from './helpers.js';

async function index(url: string): Promise<{ name: string; state?: string; reason?: string }[]> {
  const r = await fetch(`${url}/v2/repository/index`, { method: 'POST' });
  return (await r.json()) as { name: string; state?: string; reason?: string }[];
}

describe('python backend: a model.py served by the embedded server', () => {
  let server: PythonTestServer;
  beforeAll(async () => {
    server = await startPythonServer([
      addSubPythonModel(),
      autoCompletePythonModel(),
      initFailPythonModel(),
      syntaxErrorPythonModel(),
      noClassPythonModel(),
    ]);
  }, 30_000);
  afterAll(async () => {
    await server.close();
  });

  it('runs execute and answers the outputs, the request id and its parameters', async () => {
    const r = await inferJson(server.url, 'py_add', {
      id: 'req-1',
      parameters: { color: 'red', n: 3, priority: 0, sequence_id: 42, sequence_start: true },
      inputs: [
        { name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] },
        { name: 'INPUT1', datatype: 'FP32', shape: [4], data: [10, 20, 30, 40] },
      ],
    });
    expect(r.status).toBe(200);
    expect(outputData(r.body, 'OUTPUT0')).toEqual([11, 22, 33, 44]);
    expect(outputData(r.body, 'OUTPUT1')).toEqual([-9, -18, -27, -36]);
    // Triton consumes priority and the sequence parameters (correlation id, flags START = 1); the
    // rest reach request.parameters() as compact JSON, as Triton's backend writes it.
    expect(outputData(r.body, 'INFO')).toEqual(['req-1|42|1|{"color":"red","n":3}']);
  });

  it('hands the model int64 parameters exactly, beyond 2^53', async () => {
    const big = 2n ** 60n + 1n;
    const r = await server.running.server.infer({
      modelName: 'py_add',
      id: 'big',
      parameters: { big, small: -3n, text: 'a"b' },
      inputs: [
        { name: 'INPUT0', datatype: 'FP32', shape: [4], data: Float32Array.from([1, 2, 3, 4]) },
        { name: 'INPUT1', datatype: 'FP32', shape: [4], data: Float32Array.from([1, 1, 1, 1]) },
      ],
      outputs: [{ name: 'INFO' }],
    });
    const info = (r.outputs.find((o) => o.name === 'INFO')?.tensor.data as BytesList).toArray();
    expect(Buffer.from(info[0] ?? []).toString()).toBe(
      'big|0|0|{"big":1152921504606846977,"small":-3,"text":"a\\"b"}',
    );
  });

  it('hands the model only the requested output names', async () => {
    const r = await inferJson(server.url, 'py_add', {
      inputs: [
        { name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] },
        { name: 'INPUT1', datatype: 'FP32', shape: [4], data: [1, 1, 1, 1] },
      ],
      outputs: [{ name: 'OUTPUT0' }],
    });
    expect(r.status).toBe(200);
    expect((r.body.outputs as { name: string }[]).map((o) => o.name)).toEqual(['OUTPUT0']);
  });

  it("calls initialize with Triton's args keys; Logger and the model's prints reach the server log", () => {
    expect(server.logs.some((l) => /^I.* py_add initialized \(CPU py_add_0_0\)$/.test(l))).toBe(true);
    expect(server.logs.some((l) => /^W.* a warning from py_add$/.test(l))).toBe(true);
    expect(
      server.logs.some((l) =>
        l.endsWith(
          'args keys: model_config,model_instance_device_id,model_instance_kind,model_instance_name,model_name,model_repository,model_version',
        ),
      ),
    ).toBe(true);
  });

  it('lists a model whose initialize raises UNAVAILABLE with the Python error', async () => {
    const entry = (await index(server.url)).find((e) => e.name === 'py_init_fail');
    expect(entry?.state).toBe('UNAVAILABLE');
    expect(entry?.reason).toMatch(
      /ValueError: initialize refused: py_init_fail\n\nAt:\n {2}.*model\.py\(3\): initialize/,
    );
  });

  it('lists a model.py with a syntax error or without TritonPythonModel UNAVAILABLE with the Python error', async () => {
    const entries = await index(server.url);
    const syntax = entries.find((e) => e.name === 'py_syntax');
    expect(syntax?.state).toBe('UNAVAILABLE');
    expect(syntax?.reason).toContain('SyntaxError');
    const noClass = entries.find((e) => e.name === 'py_no_class');
    expect(noClass?.state).toBe('UNAVAILABLE');
    expect(noClass?.reason).toContain("AttributeError: module 'model'");
    expect(noClass?.reason).toContain("has no attribute 'TritonPythonModel'");
  });

  it("completes a config with the model's auto_complete_config", async () => {
    const config = (await (await fetch(`${server.url}/v2/models/py_auto/config`)).json()) as {
      max_batch_size: number;
      input: { name: string; data_type: string; dims: string[] | number[] }[];
      output: { name: string }[];
      dynamic_batching?: object;
    };
    expect(config.max_batch_size).toBe(4);
    expect(config.input.map((i) => [i.name, i.data_type, i.dims.map(Number)])).toEqual([
      ['X', 'TYPE_FP32', [2]],
    ]);
    expect(config.output.map((o) => o.name)).toEqual(['Y']);
    expect(config.dynamic_batching).toBeDefined();
    const r = await inferJson(server.url, 'py_auto', {
      inputs: [{ name: 'X', datatype: 'FP32', shape: [1, 2], data: [1, 2] }],
    });
    expect(r.status).toBe(200);
    expect(outputData(r.body, 'Y')).toEqual([2, 3]);
  });
});

describe('python backend: settings', () => {
  it('does not run auto_complete_config when auto-complete is disabled', async () => {
    const server = await startPythonServer([autoCompletePythonModel()], { autoCompleteConfig: false });
    try {
      const config = (await (await fetch(`${server.url}/v2/models/py_auto/config`)).json()) as {
        max_batch_size: number;
        input?: unknown[];
      };
      expect(config.max_batch_size).toBe(0);
      expect(config.input ?? []).toEqual([]);
    } finally {
      await server.close();
    }
  }, 30_000);

  it('lists python models UNAVAILABLE, naming what is missing, when the interpreter cannot run them', async () => {
    const server = await startPythonServer([addSubPythonModel()], {
      python: { interpreter: '/nonexistent/python3' },
    });
    try {
      const entry = (await index(server.url)).find((e) => e.name === 'py_add');
      expect(entry?.state).toBe('UNAVAILABLE');
      expect(entry?.reason).toContain(
        "the python backend needs a Python 3 interpreter with numpy: '/nonexistent/python3': not found",
      );
    } finally {
      await server.close();
    }
  }, 30_000);
});
