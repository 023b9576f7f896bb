/**
 * fetchModelProfile against the embedded server (in-process, generated models): shapes without the
 * batch dimension, datatypes, optional inputs, decoupled / sequence / dynamic batching / response
 * cache flags, an ensemble's composing models (nested, recursively), and the server's message in
 * the MODEL error for an unknown or unloaded model.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { TritonClient } from '@tritonserver-ts/client';
import { startServer, type RunningServer } from '@tritonserver-ts/server';
import { writeTestModelRepository } from '@tritonserver-ts/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PerfError } from '../src/errors.js';
import { fetchModelProfile } from '../src/model/model-profile.js';

let repo: string;
let server: RunningServer;
let client: TritonClient;

const identity = (name: string, extra = '', maxBatch = 8): string => `name: "${name}"
backend: "identity"
max_batch_size: ${maxBatch}
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] }, { name: "INPUT1" data_type: TYPE_INT64 dims: [ 2, 3 ] optional: true } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] }, { name: "OUTPUT1" data_type: TYPE_INT64 dims: [ 2, 3 ] } ]
${extra}`;

const ensemble = (name: string, steps: string[]): string => `name: "${name}"
platform: "ensemble"
max_batch_size: 8
input [ { name: "IN" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ -1 ] } ]
ensemble_scheduling { step [ ${steps.join(', ')} ] }
`;

const step = (model: string, version: number, input: string, output: string): string =>
  `{ model_name: "${model}" model_version: ${version} input_map { key: "INPUT0" value: "${input}" } output_map { key: "OUTPUT0" value: "${output}" } }`;

const stepEnsemble = (model: string, input: string, output: string): string =>
  `{ model_name: "${model}" model_version: -1 input_map { key: "IN" value: "${input}" } output_map { key: "OUT" value: "${output}" } }`;

async function writeModel(name: string, config: string): Promise<void> {
  await mkdir(join(repo, name, '1'), { recursive: true });
  await writeFile(join(repo, name, 'config.pbtxt'), config);
  await writeFile(join(repo, name, '1', '.keep'), '');
}

beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), 'perf-profile-'));
  await writeTestModelRepository(repo, { only: ['simple', 'simple_no_batch', 'slow_identity'] });
  await writeModel('ident_opt', identity('ident_opt', 'response_cache { enable: true }\n'));
  await writeModel('dec_ident', identity('dec_ident', 'model_transaction_policy { decoupled: true }\n'));
  await writeModel('dyn_ident', identity('dyn_ident', 'dynamic_batching { }\n'));
  await writeModel('ens_inner', ensemble('ens_inner', [step('slow_identity', 1, 'IN', 'OUT')]));
  await writeModel(
    'ens_outer',
    ensemble('ens_outer', [stepEnsemble('ens_inner', 'IN', 'MID'), step('slow_identity', -1, 'MID', 'OUT')]),
  );
  server = await startServer({
    modelRepositories: [repo],
    modelControlMode: 'explicit',
    loadModels: [
      'simple',
      'simple_no_batch',
      'slow_identity',
      'ident_opt',
      'dec_ident',
      'dyn_ident',
      'ens_inner',
      'ens_outer',
    ],
    httpPort: 0,
    grpcPort: 0,
    metricsPort: 0,
    logSink: () => undefined,
  });
  client = new TritonClient({ url: server.url });
});

afterAll(async () => {
  await client.close();
  await server.close();
  await rm(repo, { recursive: true, force: true });
});

describe('fetchModelProfile', () => {
  it('simple: INT32 [16] inputs and outputs without the batch dimension, max_batch_size 8, no flags', async () => {
    const p = await fetchModelProfile(client, 'simple', '');
    expect(p.name).toBe('simple');
    expect(p.version).toBe('');
    expect(p.maxBatchSize).toBe(8);
    expect(p.inputs).toEqual([
      { name: 'INPUT0', datatype: 'INT32', dims: [16], optional: false, isShapeTensor: false },
      { name: 'INPUT1', datatype: 'INT32', dims: [16], optional: false, isShapeTensor: false },
    ]);
    expect(p.outputs.map((o) => [o.name, o.datatype, o.dims])).toEqual([
      ['OUTPUT0', 'INT32', [16]],
      ['OUTPUT1', 'INT32', [16]],
    ]);
    expect(p.decoupled).toBe(false);
    expect(p.sequenceBatching).toBe(false);
    expect(p.dynamicBatching).toBe(false);
    expect(p.responseCacheEnabled).toBe(false);
    expect(p.composingModels).toEqual([]);
    expect(p.config.name).toBe('simple');
  });

  it('a model that does not batch keeps all its dims', async () => {
    const p = await fetchModelProfile(client, 'simple_no_batch', '1');
    expect(p.maxBatchSize).toBe(0);
    expect(p.version).toBe('1');
    expect(p.inputs[0]?.dims).toEqual([16]);
  });

  it('variable dims stay -1; optional inputs and the response cache are read from the config', async () => {
    const slow = await fetchModelProfile(client, 'slow_identity', '');
    expect(slow.maxBatchSize).toBe(16);
    expect(slow.inputs).toEqual([
      { name: 'INPUT0', datatype: 'FP32', dims: [-1], optional: false, isShapeTensor: false },
    ]);
    const opt = await fetchModelProfile(client, 'ident_opt', '');
    expect(opt.inputs.map((i) => [i.name, i.datatype, i.dims, i.optional])).toEqual([
      ['INPUT0', 'FP32', [-1], false],
      ['INPUT1', 'INT64', [2, 3], true],
    ]);
    expect(opt.responseCacheEnabled).toBe(true);
  });

  it('decoupled and dynamic batching flags', async () => {
    const dec = await fetchModelProfile(client, 'dec_ident', '');
    expect(dec.decoupled).toBe(true);
    expect(dec.dynamicBatching).toBe(false);
    expect((await fetchModelProfile(client, 'dyn_ident', '')).dynamicBatching).toBe(true);
  });

  it('an ensemble lists its composing models recursively', async () => {
    const inner = await fetchModelProfile(client, 'ens_inner', '');
    expect(inner.composingModels).toEqual([{ name: 'slow_identity', version: '1' }]);
    expect(inner.inputs.map((i) => [i.name, i.dims])).toEqual([['IN', [-1]]]);
    const outer = await fetchModelProfile(client, 'ens_outer', '');
    expect(outer.composingModels).toEqual([
      { name: 'ens_inner', version: '' },
      { name: 'slow_identity', version: '1' },
      { name: 'slow_identity', version: '' },
    ]);
    expect(outer.sequenceBatching).toBe(false);
  });

  // An in-process fake of the two client calls: the embedded server refuses sequence_batching
  // ('sequence_batching is not supported'), so a sequence model's config cannot come from it.
  it('FAKE CLIENT: sequence batching, directly or in an ensemble step, makes a sequence model', async () => {
    const configs: Record<string, object> = {
      seq: { name: 'seq', max_batch_size: 0, input: [], output: [], sequence_batching: {} },
      ens: {
        name: 'ens',
        platform: 'ensemble',
        max_batch_size: 0,
        input: [],
        output: [],
        ensemble_scheduling: { step: [{ model_name: 'seq', model_version: '2' }] },
      },
    };
    const fake = {
      getModelMetadata: (name: string) => Promise.resolve({ name, platform: '', inputs: [], outputs: [] }),
      getModelConfig: (name: string) => Promise.resolve(configs[name]),
    } as unknown as TritonClient;
    expect((await fetchModelProfile(fake, 'seq', '')).sequenceBatching).toBe(true);
    const ens = await fetchModelProfile(fake, 'ens', '');
    expect(ens.sequenceBatching).toBe(true);
    expect(ens.composingModels).toEqual([{ name: 'seq', version: '2' }]);
  });

  it("an unknown model, an unknown version: PerfError MODEL with the server's message", async () => {
    const unknown = await fetchModelProfile(client, 'no_such_model', '').catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(PerfError);
    expect((unknown as PerfError).code).toBe('MODEL');
    expect((unknown as PerfError).message).toMatch(/^failed to get the model metadata of 'no_such_model': /);
    expect((unknown as PerfError).message).toContain("Request for unknown model: 'no_such_model'");
    const version = await fetchModelProfile(client, 'simple', '7').catch((e: unknown) => e);
    expect((version as PerfError).code).toBe('MODEL');
    expect((version as PerfError).message).toContain("'simple'");
  });
});
