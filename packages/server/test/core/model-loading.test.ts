/**
 * Model loading as Triton's `qa/L0_lifecycle` checks it, on the real server in explicit mode over
 * HTTP and gRPC (through the client package): the instances of one model are created at the same
 * time (`test_concurrent_model_instance_load_speedup`: Python instances whose `initialize` sleeps);
 * loads of different models run at the same time (`test_concurrent_model_load_speedup`: identity
 * models with `creation_delay_sec`); a reload without a config keeps the config override the model
 * was loaded with (until it is unloaded); an `instance_group` given as one JSON object in an
 * override is one group, as protobuf's JSON parser reads it.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { TritonClient } from '@tritonserver-ts/client';
import { createGrpcClient } from '@tritonserver-ts/client/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestServer, type TestServer } from '../helpers/server.js';

const PYTHON = '/usr/bin/python3';
/** `initialize` of each `py_slow` instance. */
const INIT_SLEEP_SEC = 2;
const PY_INSTANCES = 3;
/** `creation_delay_sec` of the identity models. */
const CREATION_DELAY_SEC = 2;

const identityConfig = (name: string, maxBatchSize = 8): string => `name: "${name}"
backend: "identity"
max_batch_size: ${maxBatchSize}
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
parameters { key: "creation_delay_sec" value: { string_value: "${CREATION_DELAY_SEC}" } }
`;

let server: TestServer;
let http: TritonClient;
let grpc: TritonClient;

beforeAll(async () => {
  server = await startTestServer({
    modelControlMode: 'explicit',
    grpcPort: 0,
    python: { interpreter: PYTHON },
    fill: async (root) => {
      const put = async (path: string, text: string): Promise<void> => {
        await mkdir(join(root, path, '..'), { recursive: true });
        await writeFile(join(root, path), text);
      };
      for (const name of ['delay_a', 'delay_b', 'delay_c', 'delay_d']) {
        await put(`${name}/config.pbtxt`, identityConfig(name));
        await put(`${name}/1/.keep`, '');
      }
      await put(`plain/config.pbtxt`, identityConfig('plain').replace(/parameters .*\n/, ''));
      await put('plain/1/.keep', '');
      await put(
        'py_slow/config.pbtxt',
        `name: "py_slow"
backend: "python"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: ${PY_INSTANCES} } ]
`,
      );
      await put(
        'py_slow/1/model.py',
        `import time

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        time.sleep(${INIT_SLEEP_SEC})

    def execute(self, requests):
        return [
            pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())])
            for r in requests
        ]
`,
      );
    },
  });
  http = new TritonClient({ url: server.url });
  grpc = createGrpcClient({ url: server.running.grpcUrl });
}, 60_000);

afterAll(async () => {
  await http.close();
  await grpc.close();
  await server.close();
});

async function timed(run: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await run();
  return (performance.now() - t0) / 1000;
}

describe('parallel loading', () => {
  it(`the ${PY_INSTANCES} instances of a Python model start at the same time`, async () => {
    const seconds = await timed(() => http.loadModel('py_slow'));
    const result = await http.infer('py_slow', [
      { name: 'INPUT0', datatype: 'FP32', shape: [1], data: Float32Array.of(7) },
    ]);
    expect(Array.from(result.asTypedArray('OUTPUT0', 'FP32'))).toEqual([7]);
    // One after another they need PY_INSTANCES × INIT_SLEEP_SEC seconds before any stub overhead.
    expect(seconds).toBeGreaterThanOrEqual(INIT_SLEEP_SEC);
    expect(seconds).toBeLessThan(PY_INSTANCES * INIT_SLEEP_SEC);
  });

  it('loads of different models run at the same time, over one wire and across both', async () => {
    const both = await timed(() => Promise.all([http.loadModel('delay_a'), http.loadModel('delay_b')]));
    const across = await timed(() => Promise.all([http.loadModel('delay_c'), grpc.loadModel('delay_d')]));
    for (const seconds of [both, across]) {
      expect(seconds).toBeGreaterThanOrEqual(CREATION_DELAY_SEC);
      // One after another: 2 × CREATION_DELAY_SEC.
      expect(seconds).toBeLessThan(2 * CREATION_DELAY_SEC);
    }
    for (const name of ['delay_a', 'delay_b', 'delay_c', 'delay_d']) {
      expect(await http.isModelReady(name)).toBe(true);
    }
  });

  it('two loads of one model still follow each other', async () => {
    const seconds = await timed(() => Promise.all([http.loadModel('delay_a'), grpc.loadModel('delay_a')]));
    expect(seconds).toBeGreaterThanOrEqual(2 * CREATION_DELAY_SEC);
  });
});

describe.each([
  ['HTTP', (): TritonClient => http],
  ['gRPC', (): TritonClient => grpc],
] as const)('%s: config overrides', (_wire, client) => {
  const override = (maxBatchSize: number): Record<string, unknown> => ({
    backend: 'identity',
    max_batch_size: maxBatchSize,
    input: [{ name: 'INPUT0', data_type: 'TYPE_INT32', dims: [-1] }],
    output: [{ name: 'OUTPUT0', data_type: 'TYPE_INT32', dims: [-1] }],
  });
  const maxBatchSize = async (): Promise<number> =>
    Number((await client().getModelConfig('plain')).max_batch_size);

  it('a reload without a config keeps the override the model was loaded with; after an unload the files count again', async () => {
    await client().loadModel('plain', { config: override(2) });
    expect(await maxBatchSize()).toBe(2);
    await client().loadModel('plain');
    expect(await maxBatchSize()).toBe(2);
    await client().unloadModel('plain');
    await client().loadModel('plain');
    expect(await maxBatchSize()).toBe(8);
    await client().unloadModel('plain');
  });

  it('an instance_group given as one object is one group', async () => {
    await client().loadModel('plain', {
      config: { ...override(4), instance_group: { kind: 'KIND_CPU', count: 2 } },
    });
    const config = await client().getModelConfig('plain');
    expect(config.instance_group).toHaveLength(1);
    expect(config.instance_group?.[0]).toMatchObject({ kind: 'KIND_CPU', count: 2 });
    await client().unloadModel('plain');
  });
});
