/**
 * NVIDIA-style gRPC client (Python grpcio, stubs compiled from our .proto files) on the models of
 * issue 9 served by the real server: a Python-backend model, a BLS model calling an ONNX model, and
 * the transformer-deploy-style ensemble (Python tokenizer → ONNX classifier), unary and streaming.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startServer, type RunningServer } from '../../src/index.js';
import {
  addSubPythonModel,
  blsPythonModel,
  writePythonModels,
  writeTestModelRepository,
} from '../../src/testing/index.js';
import { CLASSES, SEQUENCE_LENGTH, expectedPipeline, writeTextPipeline } from '../pipelines/text-pipeline.js';
import { PYTHON, compilePythonStubs, runPythonClient } from './python-stubs.js';

const CLIENT = fileURLToPath(new URL('./python/triton_grpc_models_client.py', import.meta.url));

type Outputs = Record<string, [string, number[], (number | string)[]]>;
interface Answer {
  model_name?: string;
  id?: string;
  outputs?: Outputs;
  code?: string;
  details?: string;
}
interface ClientOutput {
  python: Answer;
  bls: Answer;
  bls_error: Answer;
  ensemble_metadata: { platform: string; inputs: unknown[]; outputs: unknown[] };
  ensemble: Answer;
  ensemble_error: Answer;
  stream: { error: string; id: string; outputs: Outputs }[];
}

let running: RunningServer;
let repository: string;
let stubs: string;
let out: ClientOutput;
const logs: string[] = [];

beforeAll(async () => {
  stubs = await compilePythonStubs();
  repository = await mkdtemp(join(tmpdir(), 'grpc-python-models-'));
  await writeTestModelRepository(repository, { only: ['identity_fp32'] });
  await writePythonModels(repository, [addSubPythonModel(), blsPythonModel()]);
  await writeTextPipeline(repository);
  running = await startServer({
    modelRepositories: [repository],
    httpPort: 0,
    grpcPort: 0,
    logSink: (line) => logs.push(line),
    python: { interpreter: PYTHON },
  });
  const r = await runPythonClient(CLIENT, [stubs, running.grpcUrl]);
  if (r.status !== 0) throw new Error(`the Python client failed:\n${r.stderr}\n${logs.join('\n')}`);
  out = JSON.parse(r.stdout) as ClientOutput;
}, 600_000);

afterAll(async () => {
  await running?.close();
  await rm(repository, { recursive: true, force: true });
  await rm(stubs, { recursive: true, force: true });
});

/** The expected [logits, input_ids] of a batch of texts, flattened as the client printed them. */
function expectPipelineOutputs(outputs: Outputs | undefined, texts: string[]): void {
  const [logitsType, logitsShape, logits] = outputs?.logits ?? [];
  const [idsType, idsShape, ids] = outputs?.input_ids ?? [];
  expect([logitsType, logitsShape]).toEqual(['FP32', [texts.length, CLASSES]]);
  expect([idsType, idsShape]).toEqual(['INT64', [texts.length, SEQUENCE_LENGTH]]);
  const expected = texts.map(expectedPipeline);
  expect(ids).toEqual(expected.flatMap((e) => e.ids));
  const flat = expected.flatMap((e) => e.logits);
  expect(logits).toHaveLength(flat.length);
  flat.forEach((value, i) => expect(logits?.[i]).toBeCloseTo(value, 5));
}

describe('a Python grpcio client on Python-backend models, BLS and an ensemble', () => {
  it('calls a Python-backend model with an id and a request parameter', () => {
    expect(out.python.model_name).toBe('py_add');
    expect(out.python.id).toBe('py-add-1');
    expect(out.python.outputs?.OUTPUT0).toEqual(['FP32', [4], [1.5, 2.5, 3.5, 4.5]]);
    expect(out.python.outputs?.OUTPUT1).toEqual(['FP32', [4], [0.5, 1.5, 2.5, 3.5]]);
    // The model echoes the request id and the parameters it received in INFO (compact JSON, as
    // Triton's backend writes request.parameters()).
    const [, , info] = out.python.outputs?.INFO ?? [];
    expect(String(info?.[0])).toMatch(/^py-add-1\|/);
    expect(String(info?.[0])).toContain('"flavour":"umami"');
  });

  it('calls a BLS model that runs an ONNX model, and gets the called model’s error through it', () => {
    expect(out.bls.outputs?.OUTPUT0).toEqual(['FP32', [3], [1.5, -2, 7]]);
    expect(out.bls.outputs?.SYNC_OUTPUT).toEqual(['FP32', [3], [1.5, -2, 7]]);
    expect(out.bls_error).toEqual({
      code: 'INVALID_ARGUMENT',
      details: "BLS failed: Request for unknown model: 'no_such_model' is not found",
    });
  });

  it("reads the ensemble's metadata and runs a batch of texts through tokenizer → classifier", () => {
    expect(out.ensemble_metadata).toEqual({
      platform: 'ensemble',
      inputs: [['TEXT', 'BYTES', [-1, 1]]],
      outputs: [
        ['logits', 'FP32', [-1, CLASSES]],
        ['input_ids', 'INT64', [-1, SEQUENCE_LENGTH]],
      ],
    });
    expect(out.ensemble.model_name).toBe('text_pipeline');
    expect(out.ensemble.id).toBe('pipe-1');
    expectPipelineOutputs(out.ensemble.outputs, [
      'Fresh pizza with cheese',
      'SUSHI, rice & a fried egg',
      'the quick brown fox',
    ]);
  });

  it("gets the Python step's error as INVALID_ARGUMENT for a bad row", () => {
    expect(out.ensemble_error).toEqual({
      code: 'INVALID_ARGUMENT',
      details:
        "in ensemble 'text_pipeline', tokenizer: TEXT row 1 is not valid UTF-8 (invalid start byte at byte 1)",
    });
  });

  it('streams two ensemble requests on one ModelStreamInfer call, answered in order', () => {
    expect(out.stream.map((r) => [r.error, r.id])).toEqual([
      ['', 's-1'],
      ['', 's-2'],
    ]);
    expectPipelineOutputs(out.stream[0]?.outputs, ['tomato soup']);
    expectPipelineOutputs(out.stream[1]?.outputs, ['egg']);
  });
});
