// The response cache as Triton's qa/L0_response_cache uses it, over both transports. The server under
// test must run with a cache (`--cache-config=local,size=1048576`; the embedded server does, see
// global-setup.ts and the README): an identity model loaded through a load override with
// `response_cache { enable: true }` answers a repeated request from the cache (a `cache_hit`, a
// success with no inference or execution counted) and a new one from the model (a `cache_miss`);
// a decoupled model with the cache enabled is refused at load with Triton's message.
import { afterAll, describe, expect, it } from 'vitest';
import type { LoadModelOptions, TritonClient } from '@tritonserver-ts/client';
import { newClient, transports } from './target.js';
import { expectServerError } from './transport-differences.js';

const NO_MODEL_FILE = { 'file:1/README.txt': new TextEncoder().encode('identity backend: no model file') };

function identityModel(name: string, decoupled: boolean): LoadModelOptions {
  return {
    config: {
      name,
      backend: 'identity',
      max_batch_size: 0,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
      instance_group: [{ kind: 'KIND_CPU', count: 1 }],
      response_cache: { enable: true },
      ...(decoupled ? { model_transaction_policy: { decoupled: true } } : {}),
    },
    files: NO_MODEL_FILE,
  };
}

describe.each(transports)('%s: response cache', (transport) => {
  const client: TritonClient = newClient(transport);
  const loaded: string[] = [];
  afterAll(async () => {
    for (const name of loaded) await client.unloadModel(name).catch(() => undefined);
    await client.close();
  });

  it('answers a repeated request from the cache: cache_hit and cache_miss in the statistics', async () => {
    const name = `conformance_cache_${transport}`;
    await client.loadModel(name, identityModel(name, false));
    loaded.push(name);
    const a = Float32Array.from([1, 2, 3, 4]);
    const b = Float32Array.from([5, 6, 7, 8]);
    for (const data of [a, a, b]) {
      const result = await client.infer(name, [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data }]);
      expect(Array.from(result.asTypedArray('OUTPUT0', 'FP32'))).toEqual(Array.from(data));
    }
    const stats = await client.getInferenceStatistics(name, '1');
    const s = stats.model_stats[0];
    expect(Number(s?.inference_stats.cache_hit.count)).toBe(1);
    expect(Number(s?.inference_stats.cache_miss.count)).toBe(2);
    expect(Number(s?.inference_stats.success.count)).toBe(3);
    // A hit runs nothing: Triton counts neither an inference nor an execution for it.
    expect(Number(s?.inference_count)).toBe(2);
    expect(Number(s?.execution_count)).toBe(2);
    expect(Number(s?.inference_stats.compute_infer.count)).toBe(2);
    expect(Number(s?.inference_stats.cache_hit.ns)).toBeGreaterThan(0);
    expect(Number(s?.inference_stats.cache_miss.ns)).toBeGreaterThan(0);
  });

  it('refuses a decoupled model with the cache enabled, with Triton message', async () => {
    const name = `conformance_cache_decoupled_${transport}`;
    const error = await expectServerError(client.loadModel(name, identityModel(name, true)), transport);
    expect(error.message).toContain(
      `Response Cache does not currently support model ${name} with 'decoupled' transaction policy`,
    );
  });
});
