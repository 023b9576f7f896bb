/**
 * The response cache through the real server, over both wires: `simple` (generated ONNX add/sub) and
 * `simple_cache`, the same model with `response_cache { enable: true }`, served with
 * `--cache-config local,size=…`. A repeated request is answered from the cache (statistics
 * `cache_hit`, no inference counted), requests differing in bytes, shape or requested outputs are
 * not, `simple` never uses the cache, and the `nv_cache_*_per_model` metrics appear for the cached
 * model only.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { TritonClient, type InferenceStatistics } from '@tritonserver-ts/client';
import { createGrpcClient } from '@tritonserver-ts/client/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { writeTestModelRepository } from '../../src/testing/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const transports = ['http', 'grpc'] as const;

/** `simple` and `simple_cache` (the same model with the response cache enabled). */
async function fill(repository: string): Promise<void> {
  await writeTestModelRepository(repository, { only: ['simple'] });
  await cp(join(repository, 'simple'), join(repository, 'simple_cache'), { recursive: true });
  const config = await readFile(join(repository, 'simple_cache', 'config.pbtxt'), 'utf8');
  await writeFile(
    join(repository, 'simple_cache', 'config.pbtxt'),
    `${config.replace('name: "simple"', 'name: "simple_cache"')}\nresponse_cache { enable: true }\n`,
  );
}

function inputs(
  value: number,
  rows = 1,
): { name: string; datatype: 'INT32'; shape: number[]; data: Int32Array }[] {
  const data = Int32Array.from({ length: rows * 16 }, (_, i) => value + i);
  return [
    { name: 'INPUT0', datatype: 'INT32', shape: [rows, 16], data },
    { name: 'INPUT1', datatype: 'INT32', shape: [rows, 16], data },
  ];
}

function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

interface Counts {
  hit: number;
  miss: number;
  success: number;
  inferences: number;
  executions: number;
}

function counts(stats: InferenceStatistics): Counts {
  const s = stats.model_stats[0];
  return {
    hit: Number(s?.inference_stats.cache_hit.count),
    miss: Number(s?.inference_stats.cache_miss.count),
    success: Number(s?.inference_stats.success.count),
    inferences: Number(s?.inference_count),
    executions: Number(s?.execution_count),
  };
}

let srv: TestServer;
const clients: Record<(typeof transports)[number], TritonClient> = {} as never;

beforeAll(async () => {
  srv = await startTestServer({
    fill,
    grpcPort: 0,
    metricsPort: 0,
    httpAddress: '127.0.0.1',
    responseCache: { name: 'local', settings: { size: '1048576' } },
  });
  clients.http = new TritonClient({ url: srv.url });
  clients.grpc = createGrpcClient({ url: srv.running.grpcUrl });
});
afterAll(async () => {
  await Promise.all(Object.values(clients).map((c) => c.close()));
  await srv.close();
});

describe.each(transports)('%s: response cache', (transport) => {
  const base = transport === 'http' ? 100 : 200;

  it('answers a repeated request from the cache, with the same outputs and no inference', async () => {
    const client = clients[transport];
    const before = counts(await client.getInferenceStatistics('simple_cache', '1'));
    const first = await client.infer('simple_cache', inputs(base));
    const second = await client.infer('simple_cache', inputs(base));
    for (const name of ['OUTPUT0', 'OUTPUT1']) {
      expect(Array.from(second.asTypedArray(name, 'INT32'))).toEqual(
        Array.from(first.asTypedArray(name, 'INT32')),
      );
    }
    expect(Array.from(second.asTypedArray('OUTPUT0', 'INT32')).slice(0, 2)).toEqual([2 * base, 2 * base + 2]);
    const after = counts(await client.getInferenceStatistics('simple_cache', '1'));
    expect({
      hit: after.hit - before.hit,
      miss: after.miss - before.miss,
      success: after.success - before.success,
      inferences: after.inferences - before.inferences,
      executions: after.executions - before.executions,
    }).toEqual({ hit: 1, miss: 1, success: 2, inferences: 1, executions: 1 });
  });

  it('keys on bytes, shape and requested outputs: each differing request runs the model', async () => {
    const client = clients[transport];
    const before = counts(await client.getInferenceStatistics('simple_cache', '1'));
    const v = base + 50;
    await client.infer('simple_cache', inputs(v));
    await client.infer('simple_cache', inputs(v + 1)); // other bytes
    await client.infer('simple_cache', inputs(v, 2)); // other shape (and bytes)
    const only0 = await client.infer('simple_cache', inputs(v), { outputs: [{ name: 'OUTPUT0' }] });
    expect(only0.inferResponse.outputs.map((o) => o.name)).toEqual(['OUTPUT0']);
    const only1 = await client.infer('simple_cache', inputs(v), { outputs: [{ name: 'OUTPUT1' }] });
    expect(only1.inferResponse.outputs.map((o) => o.name)).toEqual(['OUTPUT1']);
    const again1 = await client.infer('simple_cache', inputs(v), { outputs: [{ name: 'OUTPUT1' }] });
    expect(Array.from(again1.asTypedArray('OUTPUT1', 'INT32'))).toEqual(Array.from(new Int32Array(16)));
    const after = counts(await client.getInferenceStatistics('simple_cache', '1'));
    expect([after.miss - before.miss, after.hit - before.hit]).toEqual([5, 1]);
  });

  it('leaves a model without response_cache alone', async () => {
    const client = clients[transport];
    await client.infer('simple', inputs(base));
    await client.infer('simple', inputs(base));
    const s = counts(await client.getInferenceStatistics('simple', '1'));
    expect([s.hit, s.miss]).toEqual([0, 0]);
  });
});

describe('response cache metrics', () => {
  it('reports nv_cache_*_per_model for the cached model only, equal to its statistics', async () => {
    const stats = counts(await clients.http.getInferenceStatistics('simple_cache', '1'));
    const text = await (await fetch(srv.running.metricsUrl as string)).text();
    const m = parseMetrics(text);
    const l = '{model="simple_cache",version="1"}';
    expect(m.get(`nv_cache_num_hits_per_model${l}`)).toBe(stats.hit);
    expect(m.get(`nv_cache_num_misses_per_model${l}`)).toBe(stats.miss);
    expect(m.get(`nv_cache_hit_duration_per_model${l}`)).toBeGreaterThanOrEqual(0);
    expect(m.get(`nv_cache_miss_duration_per_model${l}`)).toBeGreaterThan(0);
    expect(text).toContain('# HELP nv_cache_num_hits_per_model Number of cache hits per model\n');
    expect(text).toContain(
      '# HELP nv_cache_miss_duration_per_model Total cache miss (insert+lookup) duration per model, in microseconds\n',
    );
    expect(text).not.toContain('nv_cache_num_hits_per_model{model="simple"');
    // A hit is a success but not an inference, as in Triton.
    expect(m.get(`nv_inference_request_success${l}`)).toBe(stats.success);
    expect(m.get(`nv_inference_count${l}`)).toBe(stats.inferences);
  });
});
