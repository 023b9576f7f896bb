// Reload keeps serving, as Triton 2.73's model lifecycle does (qa/L0_lifecycle
// test_model_availability_on_reload_2 / _3 and test_model_reload_fail, reproduced through load
// overrides so the repository stays read-only): an identity model whose every version takes
// `creation_delay_sec` (Triton's identity backend parameter) to load is reloaded while requests
// keep arriving. Until the new version is READY the serving one stays READY and answers, the
// server stays live and a new version is LOADING; then the new one serves and the replaced one is
// UNAVAILABLE `unloaded`. A load in which a version fails changes nothing that served.
import { afterAll, describe, expect, it } from 'vitest';
import type { LoadModelOptions, TritonClient } from '@tritonserver-ts/client';
import { newClient, transports } from './target.js';
import { expectServerError } from './transport-differences.js';

/** Seconds each version takes to load. */
const DELAY_SEC = 2;

interface Variant {
  readonly versions: readonly number[];
  readonly generation: number;
  readonly outputType?: string;
}

function reloadModel(name: string, variant: Variant): LoadModelOptions {
  const text = new TextEncoder().encode('identity backend: no model file');
  return {
    config: {
      name,
      backend: 'identity',
      max_batch_size: 0,
      input: [{ name: 'INPUT0', data_type: 'TYPE_INT32', dims: [-1] }],
      output: [{ name: 'OUTPUT0', data_type: variant.outputType ?? 'TYPE_INT32', dims: [-1] }],
      instance_group: [{ count: 1, kind: 'KIND_CPU' }],
      version_policy: { specific: { versions: variant.versions } },
      parameters: {
        creation_delay_sec: { string_value: String(DELAY_SEC) },
        generation: { string_value: String(variant.generation) },
      },
    },
    files: { 'file:1/README.txt': text, 'file:2/README.txt': text },
  };
}

describe.each(transports)('%s: reload keeps serving', (transport) => {
  const client: TritonClient = newClient(transport, { timeoutMs: 60_000 });
  const name = `conformance_reload_${transport}`;
  afterAll(async () => {
    await client.unloadModel(name).catch(() => undefined);
    await client.close();
  });

  async function inferOk(version: number | undefined, value: number): Promise<void> {
    const result = await client.infer(
      name,
      [{ name: 'INPUT0', datatype: 'INT32', shape: [2], data: Int32Array.of(value, -value) }],
      version === undefined ? {} : { modelVersion: version },
    );
    expect(Array.from(result.asTypedArray('OUTPUT0', 'INT32'))).toEqual([value, -value]);
    if (version !== undefined) expect(result.modelVersion).toBe(String(version));
  }

  async function states(): Promise<Record<string, string>> {
    const index = await client.getModelRepositoryIndex();
    return Object.fromEntries(
      index
        .filter((e) => e.name === name)
        .map((e) => [e.version ?? '', `${e.state ?? ''} ${e.reason ?? ''}`]),
    );
  }

  /**
   * Loads `variant`, running `during` while the load is still running (checked before and after)
   * and unversioned requests back to back from the start of the load until just after its end.
   * @returns the load's error (or undefined) and the requests that failed
   */
  async function reload(variant: Variant, during: () => Promise<void>): Promise<unknown[]> {
    let settled = false;
    const load = client.loadModel(name, reloadModel(name, variant));
    void load.then(
      () => (settled = true),
      () => (settled = true),
    );
    const failures: unknown[] = [];
    let sent = 0;
    const traffic = (async () => {
      let stopAt = Infinity;
      while (Date.now() < stopAt) {
        if (settled && stopAt === Infinity) stopAt = Date.now() + 200;
        await inferOk(undefined, ++sent).catch((e: unknown) => failures.push(e));
      }
    })();
    await new Promise((r) => setTimeout(r, 400));
    expect(settled, 'the load ended before the checks').toBe(false);
    const start = performance.now();
    expect(await client.isServerLive()).toBe(true);
    expect(performance.now() - start).toBeLessThan(1000);
    await during();
    expect(settled, 'the load ended during the checks').toBe(false);
    await load;
    await traffic;
    expect(sent).toBeGreaterThan(3);
    return failures;
  }

  it('loads version 1', async () => {
    await client.loadModel(name, reloadModel(name, { versions: [1], generation: 1 }));
    expect(await client.isModelReady(name, 1)).toBe(true);
    await inferOk(1, 1);
  });

  it('a changed config of the serving version: the old one serves until the new one is READY', async () => {
    const generation = async (): Promise<string | undefined> =>
      (await client.getModelConfig(name, 1)).parameters?.['generation']?.string_value;
    const failures = await reload({ versions: [1], generation: 2 }, async () => {
      expect(await client.isModelReady(name, 1)).toBe(true);
      await inferOk(1, 2);
      expect(await generation()).toBe('1');
      expect(await states()).toEqual({ '1': 'READY ' });
    });
    expect(failures).toEqual([]);
    expect(await client.isModelReady(name, 1)).toBe(true);
    expect(await generation()).toBe('2');
    await inferOk(1, 3);
  });

  it('a new version policy: version 1 serves while version 2 is LOADING, then version 2 serves', async () => {
    const failures = await reload({ versions: [2], generation: 3 }, async () => {
      expect(await client.isModelReady(name, 1)).toBe(true);
      expect(await client.isModelReady(name, 2)).toBe(false);
      await inferOk(1, 4);
      expect(await states()).toEqual({ '1': 'READY ', '2': 'LOADING ' });
    });
    expect(failures).toEqual([]);
    expect(await client.isModelReady(name, 1)).toBe(false);
    expect(await client.isModelReady(name, 2)).toBe(true);
    await inferOk(2, 5);
    expect(await states()).toEqual({ '1': 'UNAVAILABLE unloaded', '2': 'READY ' });
  });

  it('a failed load leaves the serving version serving', async () => {
    const error = await expectServerError(
      client.loadModel(name, reloadModel(name, { versions: [1], generation: 4, outputType: 'TYPE_FP32' })),
      transport,
      'INTERNAL',
    );
    expect(error.message).toContain(`failed to load '${name}', version 1 is at UNAVAILABLE state: `);
    expect(error.message).toContain(
      'expected input and output datatype to match, got TYPE_INT32 and TYPE_FP32',
    );
    expect(await client.isModelReady(name, 2)).toBe(true);
    expect(await client.isModelReady(name, 1)).toBe(false);
    await inferOk(2, 6);
    await inferOk(undefined, 7);
    const after = await states();
    expect(after['2']).toBe('READY ');
    expect(after['1']).toMatch(/^UNAVAILABLE /);
  });
});
