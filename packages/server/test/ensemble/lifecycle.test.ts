/**
 * Ensemble lifecycle in explicit mode, on the real server: a load of an ensemble loads its
 * composing models; unload leaves them loaded unless `unload_dependents` is set (and then keeps the
 * ones loaded by name); a reloaded composing model keeps the ensemble serving; an unloaded one
 * takes its ensembles down; and every load-time check fails with Triton's message (config checks,
 * missing / failed / invalid composing models, cycles, datatype, shape, batch size and map checks).
 */
import { rm } from 'node:fs/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startServer, type RunningServer } from '../../src/index.js';
import { infer } from '../helpers/server.js';
import { writeEnsembleRepository } from './fixtures.js';

let repository: string;
let server: RunningServer;

interface IndexRow {
  name: string;
  version?: string;
  state?: string;
  reason?: string;
}

async function post(path: string, body?: unknown): Promise<{ status: number; error?: string }> {
  const response = await fetch(server.url + path, {
    method: 'POST',
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await response.text();
  return {
    status: response.status,
    ...(response.status !== 200 ? { error: (JSON.parse(text) as { error: string }).error } : {}),
  };
}

async function index(): Promise<Map<string, IndexRow>> {
  const response = await fetch(`${server.url}/v2/repository/index`, { method: 'POST' });
  return new Map(((await response.json()) as IndexRow[]).map((r) => [r.name, r]));
}

async function states(names: string[]): Promise<(string | undefined)[]> {
  const rows = await index();
  return names.map((n) => rows.get(n)?.state);
}

const chainInput = [
  { name: 'IN', datatype: 'FP32' as const, shape: [1, 4], data: new Float32Array([1, 2, 3, 4]) },
];

beforeAll(async () => {
  repository = await writeEnsembleRepository();
  server = await startServer({
    modelRepositories: [repository],
    modelControlMode: 'explicit',
    httpPort: 0,
    logSink: () => undefined,
  });
});

afterAll(async () => {
  await server.close();
  await rm(repository, { recursive: true, force: true });
});

describe('ensemble lifecycle (explicit mode)', () => {
  it('loading an ensemble loads its composing models; unload keeps them unless unload_dependents', async () => {
    expect(await states(['chain', 'double', 'plus_one'])).toEqual([undefined, undefined, undefined]);
    expect((await post('/v2/repository/models/chain/load')).status).toBe(200);
    expect(await states(['chain', 'double', 'plus_one'])).toEqual(['READY', 'READY', 'READY']);
    expect((await infer(server.url, 'chain', chainInput)).status).toBe(200);

    expect((await post('/v2/repository/models/chain/unload')).status).toBe(200);
    expect(await states(['chain', 'double', 'plus_one'])).toEqual(['UNAVAILABLE', 'READY', 'READY']);

    expect((await post('/v2/repository/models/chain/load')).status).toBe(200);
    const unload = await post('/v2/repository/models/chain/unload', {
      parameters: { unload_dependents: true },
    });
    expect(unload.status).toBe(200);
    const rows = await index();
    expect(['chain', 'double', 'plus_one'].map((n) => [rows.get(n)?.state, rows.get(n)?.reason])).toEqual([
      ['UNAVAILABLE', 'unloaded'],
      ['UNAVAILABLE', 'unloaded'],
      ['UNAVAILABLE', 'unloaded'],
    ]);
  });

  it('unload_dependents keeps a composing model that was loaded by name', async () => {
    expect((await post('/v2/repository/models/plus_one/load')).status).toBe(200);
    expect((await post('/v2/repository/models/chain/load')).status).toBe(200);
    await post('/v2/repository/models/chain/unload', { parameters: { unload_dependents: true } });
    expect(await states(['chain', 'double', 'plus_one'])).toEqual(['UNAVAILABLE', 'UNAVAILABLE', 'READY']);
  });

  it('a reloaded composing model keeps the ensemble serving; an unloaded one takes it down until it is back', async () => {
    expect((await post('/v2/repository/models/chain/load')).status).toBe(200);
    expect((await post('/v2/repository/models/double/load')).status).toBe(200);
    const after = await infer(server.url, 'chain', chainInput);
    expect(after.status).toBe(200);
    expect([...(after.decoded?.outputs[0]?.data as Float32Array)]).toEqual([3, 5, 7, 9]);

    expect((await post('/v2/repository/models/double/unload')).status).toBe(200);
    expect(await states(['chain', 'double', 'plus_one'])).toEqual(['UNAVAILABLE', 'UNAVAILABLE', 'READY']);
    const gone = await infer(server.url, 'chain', chainInput);
    expect(gone.status).toBe(404);
    expect(gone.error).toBe("Request for unknown model: 'chain' has no available versions");

    // As in Triton, the ensemble loads again when its composing model comes back.
    expect((await post('/v2/repository/models/double/load')).status).toBe(200);
    expect(await states(['chain', 'double', 'plus_one'])).toEqual(['READY', 'READY', 'READY']);
    expect((await infer(server.url, 'chain', chainInput)).status).toBe(200);
  });

  it("a composing model that fails or is invalid makes the ensemble UNAVAILABLE with Triton's reason", async () => {
    const viaBroken = ensemble(
      [{ model: 'broken', inputs: { INPUT0: 'IN', INPUT1: 'IN2' }, outputs: { OUTPUT0: 'OUT' } }],
      {
        inputs: ['IN', 'IN2'],
      },
    );
    const broken = await post('/v2/repository/models/bad/load', {
      parameters: { config: JSON.stringify(viaBroken) },
    });
    expect(broken.status).toBe(400);
    expect(broken.error).toMatch(
      /^load failed for model 'bad': ensemble 'bad' depends on 'broken' which has no loaded version\. Model 'broken' loading failed with error: version 1 is at UNAVAILABLE state: .+\n$/,
    );
    const row = (await index()).get('bad');
    expect(row?.state).toBe('UNAVAILABLE');
    expect(`load failed for model 'bad': ${row?.reason}\n`).toBe(broken.error);

    const viaInvalid = ensemble([
      { model: 'invalid', inputs: { INPUT0: 'IN' }, outputs: { OUTPUT0: 'OUT' } },
    ]);
    const invalid = await post('/v2/repository/models/bad/load', {
      parameters: { config: JSON.stringify(viaInvalid) },
    });
    expect(invalid.error).toBe(
      "load failed for model 'bad': ensemble 'bad' depends on 'invalid' which is not valid. Model 'invalid' failed with error: 'max_batch_size' must be non-negative value for invalid\n",
    );
  });

  it('ensembles that use each other are refused as a circular dependency', async () => {
    const r = await post('/v2/repository/models/cyc_a/load');
    expect(r.status).toBe(400);
    expect(r.error).toBe(
      "load failed for model 'cyc_a': circular dependency between ensembles: cyc_a -> ... -> cyc_b -> cyc_a\n",
    );
    const rows = await index();
    expect(rows.get('cyc_b')?.reason).toBe(
      'circular dependency between ensembles: cyc_b -> ... -> cyc_a -> cyc_b',
    );
  });

  it('a decoupled step makes the ensemble decoupled; the mixed-sources check as Triton', async () => {
    const one = ensemble([{ model: 'dec_ident', inputs: { INPUT0: 'IN' }, outputs: { OUTPUT0: 'OUT' } }]);
    const r = await post('/v2/repository/models/bad/load', { parameters: { config: JSON.stringify(one) } });
    expect(r.status).toBe(200);
    const config = (await (await fetch(`${server.url}/v2/models/bad/config`)).json()) as {
      model_transaction_policy?: { decoupled: boolean };
    };
    expect(config.model_transaction_policy?.decoupled).toBe(true);
    expect((await post('/v2/repository/models/bad/unload')).status).toBe(200);
    const two = ensemble([
      { model: 'dec_ident', inputs: { INPUT0: 'IN' }, outputs: { OUTPUT0: 'a' } },
      { model: 'dec_ident', inputs: { INPUT0: 'IN' }, outputs: { OUTPUT0: 'b' } },
      { model: 'add', inputs: { A: 'a', B: 'b' }, outputs: { SUM: 's' } },
      { model: 'plus_one', inputs: { X: 's' }, outputs: { Y: 'OUT' } },
    ]);
    const mixed = await post('/v2/repository/models/bad/load', {
      parameters: { config: JSON.stringify(two) },
    });
    expect(mixed.status).toBe(400);
    expect(mixed.error).toBe(
      "load failed for model 'bad': in ensemble bad, step of model 'add' receives inputs originated from different decoupled models\n",
    );
  });

  describe("load-time checks answer with Triton's messages", () => {
    const chainSteps: Step[] = [
      { model: 'double', inputs: { INPUT0: 'IN' }, outputs: { OUTPUT0: 'doubled' } },
      { model: 'plus_one', inputs: { X: 'doubled' }, outputs: { Y: 'OUT' } },
    ];
    const cases: [string, object, string][] = [
      ['no steps', ensemble([]), "must specify 'step' for ensemble 'bad'"],
      [
        'an ensemble input nobody reads',
        ensemble(chainSteps, { inputs: ['IN', 'IN2'] }),
        "ensemble input 'IN2' for ensemble bad' is not used",
      ],
      [
        'an output produced from a tensor nobody writes',
        ensemble([
          { model: 'plus_one', inputs: { X: 'ghost' }, outputs: { Y: 'OUT' } },
          chainSteps[0] as Step,
        ]),
        "output 'OUT' for ensemble 'bad' is not written",
      ],
      [
        'a tensor produced twice',
        ensemble([
          { model: 'double', inputs: { INPUT0: 'IN' }, outputs: { OUTPUT0: 'OUT' } },
          { model: 'plus_one', inputs: { X: 'IN' }, outputs: { Y: 'OUT' } },
        ]),
        "ensemble tensor 'OUT' can appear in an output map only once for ensemble 'bad' step 1",
      ],
      [
        'an intermediate tensor nobody reads',
        ensemble([
          { model: 'double', inputs: { INPUT0: 'IN' }, outputs: { OUTPUT0: 'doubled' } },
          { model: 'plus_one', inputs: { X: 'IN' }, outputs: { Y: 'OUT' } },
        ]),
        "ensemble tensor 'doubled' is unused in ensemble 'bad'",
      ],
      [
        'an instance group',
        { ...ensemble(chainSteps), instance_group: [{ kind: 'KIND_CPU', count: 1 }] },
        "instance group should not be specified for ensemble 'bad'",
      ],
      [
        'a missing composing model',
        ensemble([{ model: 'nope', inputs: { X: 'IN' }, outputs: { Y: 'OUT' } }]),
        'ensemble bad contains models that are not available or ambiguous: nope',
      ],
      [
        'a pinned version that is not loaded',
        ensemble([{ model: 'double', version: 2, inputs: { INPUT0: 'IN' }, outputs: { OUTPUT0: 'OUT' } }]),
        "ensemble 'bad' depends on 'double' whose required version 2 is not loaded.",
      ],
      [
        'a datatype clash',
        ensemble(chainSteps, { datatype: 'TYPE_INT32' }),
        'in ensemble bad, ensemble tensor IN: inconsistent data type: TYPE_INT32 is inferred from model bad while TYPE_FP32 is inferred from model double',
      ],
      [
        'a shape clash',
        ensemble(chainSteps, { dims: [5] }),
        'in ensemble bad, ensemble tensor IN: inconsistent shape: [-1,5] is inferred from model bad while [-1,4] is inferred from model double',
      ],
      [
        'a larger batch than a step allows',
        ensemble(chainSteps, { maxBatchSize: 16 }),
        'ensemble bad allows maximum batch size 16, but it contains model double which only allows maximum batch size to be 8',
      ],
      [
        'an input map key that is no input of the step',
        ensemble([{ model: 'double', inputs: { WRONG: 'IN' }, outputs: { OUTPUT0: 'OUT' } }]),
        'in ensemble bad, ensemble tensor IN is mapping to non-existing input WRONG in model double',
      ],
      [
        'a required step input left unmapped',
        ensemble([{ model: 'add', inputs: { A: 'IN' }, outputs: { SUM: 'OUT' } }]),
        'in ensemble bad, input B in model add is not mapped to any ensemble tensors',
      ],
      [
        'an output map key that is no output of the step',
        ensemble([{ model: 'double', inputs: { INPUT0: 'IN' }, outputs: { NOPE: 'OUT' } }]),
        'in ensemble bad, ensemble tensor OUT is mapped from non-existing output NOPE in model double',
      ],
    ];
    it.each(cases)('%s', async (_label, config, message) => {
      const r = await post('/v2/repository/models/bad/load', {
        parameters: { config: JSON.stringify(config) },
      });
      expect(r.status).not.toBe(200);
      expect(r.error).toContain(message);
      const row = (await index()).get('bad');
      expect(row?.state).toBe('UNAVAILABLE');
      expect(row?.reason).toBe(message);
    });
  });
});

interface Step {
  model: string;
  version?: number;
  inputs: Record<string, string>;
  outputs: Record<string, string>;
}

/** The JSON config of ensemble `bad` (its load override). */
function ensemble(
  steps: Step[],
  io: { inputs?: string[]; datatype?: string; dims?: number[]; maxBatchSize?: number } = {},
): Record<string, unknown> {
  const tensor = (name: string): object => ({
    name,
    data_type: io.datatype ?? 'TYPE_FP32',
    dims: io.dims ?? [4],
  });
  return {
    name: 'bad',
    platform: 'ensemble',
    max_batch_size: io.maxBatchSize ?? 8,
    input: (io.inputs ?? ['IN']).map(tensor),
    output: [{ name: 'OUT', data_type: 'TYPE_FP32', dims: io.dims ?? [4] }],
    ensemble_scheduling: {
      step: steps.map((s) => ({
        model_name: s.model,
        model_version: s.version ?? -1,
        input_map: s.inputs,
        output_map: s.outputs,
      })),
    },
  };
}
