import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { bytesToStrings, stringsToBytes, type BytesList } from '@tritonserver-ts/protocol';

import { InferenceServer, ServerError } from '../../src/index.js';
import { rawRequestInput } from '../../src/http/raw-request.js';
import { makeRepository } from '../helpers/server.js';

let dir: string;
let core: InferenceServer;

beforeAll(async () => {
  dir = await makeRepository(['simple_no_batch', 'identity_fp32', 'identity_string']);
  await mkdir(join(dir, 'raw_bytes', '1'), { recursive: true });
  await writeFile(
    join(dir, 'raw_bytes', 'config.pbtxt'),
    `name: "raw_bytes"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ 1 ] } ]
`,
  );
  await mkdir(join(dir, 'scores', '1'), { recursive: true });
  await writeFile(
    join(dir, 'scores', 'config.pbtxt'),
    `name: "scores"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] } ]
`,
  );
  core = await InferenceServer.create({ modelRepositories: [dir], logSink: () => undefined });
});

afterAll(async () => {
  await core.shutdown();
  await rm(dir, { recursive: true, force: true });
});

describe('the transport-neutral core', () => {
  // The raw binary request (HTTP `Inference-Header-Content-Length: 0`): its single input is deduced
  // from the resolved model's config at the HTTP edge (rawRequestInput), then run by the core.
  const rawRequest = async (modelName: string, body: Uint8Array) => {
    const model = core.models.resolve(modelName);
    return core.infer({ modelName, inputs: [rawRequestInput(model.definition.config, body)] }, { model });
  };

  it('runs a raw BYTES input as Triton does: the body is the element, shape [1]', async () => {
    const response = await rawRequest('raw_bytes', new TextEncoder().encode('hello'));
    const out = response.outputs[0];
    expect(out?.tensor.shape).toEqual([1]);
    expect(bytesToStrings(out?.tensor.data as BytesList)).toEqual(['hello']);
  });

  it('refuses a raw input for a model whose BYTES input is not [1] or that has several inputs', async () => {
    await expect(rawRequest('simple_no_batch', new Uint8Array(64))).rejects.toThrow(
      "Raw request must only have 1 input (found 1) to be deduced but got 2 inputs in 'simple_no_batch' model configuration",
    );
    // Triton's message names the input (server test suite: test_byte_too_many_elements).
    await expect(rawRequest('identity_string', new Uint8Array(3))).rejects.toThrow(
      "For BYTE datatype raw input 'INPUT0', the model must have input shape [1]",
    );
  });

  it('deduces the variable dim of a raw input from its byte size', async () => {
    const response = await rawRequest(
      'identity_fp32',
      new Uint8Array(Float32Array.from([1, 2, 3, 4, 5]).buffer),
    );
    expect(response.outputs[0]?.tensor.shape).toEqual([1, 5]);
  });

  it('classifies an integer output without a batch dimension as [k] with integer values', async () => {
    const response = await core.infer({
      modelName: 'scores',
      inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [4], data: Int32Array.from([5, 9, -1, 9]) }],
      outputs: [{ name: 'OUTPUT0', classCount: 3 }],
    });
    const out = response.outputs[0];
    expect(out?.tensor.shape).toEqual([3]);
    expect(bytesToStrings(out?.tensor.data as BytesList)).toEqual(['9:1', '9:3', '5:0']);
  });

  it('echoes the request id and prefixes validation errors with it, as Triton logs requests', async () => {
    const ok = await core.infer({
      modelName: 'raw_bytes',
      id: 'abc',
      inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1], data: stringsToBytes(['x']) }],
    });
    expect(ok.id).toBe('abc');
    const error = await core
      .infer({
        modelName: 'raw_bytes',
        id: 'abc',
        inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [2], data: stringsToBytes(['x', 'y']) }],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).kind).toBe('INVALID_ARG');
    expect((error as ServerError).message).toBe(
      "[request id: abc] unexpected shape for input 'INPUT0' for model 'raw_bytes'. Expected [1], got [2]",
    );
  });

  it('refuses a wildcard dim in a request shape', async () => {
    await expect(
      core.infer({
        modelName: 'identity_fp32',
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, -1], data: new Float32Array(1) }],
      }),
    ).rejects.toThrow(
      "All input dimensions should be specified for input 'INPUT0' for model 'identity_fp32', got [1,-1]",
    );
  });

  it('rejects an unknown version string that is not a number with INVALID_ARG', async () => {
    await expect(
      core.infer({ modelName: 'identity_fp32', modelVersion: 'v1', inputs: [] }),
    ).rejects.toMatchObject({
      kind: 'INVALID_ARG',
    });
  });
});

describe('capability gaps', () => {
  it('lists a model with an unsupported feature (iterative sequences) UNAVAILABLE without counting it as a startup failure', async () => {
    const repo = await makeRepository(['identity_fp32']);
    await mkdir(join(repo, 'seq', '1'), { recursive: true });
    await writeFile(
      join(repo, 'seq', 'config.pbtxt'),
      `name: "seq"
backend: "identity"
max_batch_size: 4
sequence_batching { iterative_sequence: true }
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
`,
    );
    const server = await InferenceServer.create({ modelRepositories: [repo], logSink: () => undefined });
    try {
      expect(server.startupFailures).toEqual([]);
      expect(server.startupUnsupported.map((u) => u.name)).toEqual(['seq']);
      const row = (await server.repositoryIndex()).find((e) => e.name === 'seq');
      expect(row?.state).toBe('UNAVAILABLE');
      expect(row?.reason).toContain('sequence_batching.iterative_sequence is not supported');
      expect(server.isReady()).toBe(true);
    } finally {
      await server.shutdown();
      await rm(repo, { recursive: true, force: true });
    }
  });
});
