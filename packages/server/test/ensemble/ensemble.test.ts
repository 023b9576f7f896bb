/**
 * Ensembles on the real server (explicit mode, HTTP, gRPC and metrics): loading an ensemble loads
 * its composing models; a chain, a diamond whose independent steps run at once, a nested ensemble
 * and an ensemble over a dynamically batched model answer right; a failing step fails the request
 * with Triton's message; statistics and `/metrics` count the ensemble and each composing model as
 * Triton does.
 */
import { rm } from 'node:fs/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startServer, type RunningServer } from '../../src/index.js';
import { GrpcTestClient } from '../grpc/helpers.js';
import { infer } from '../helpers/server.js';
import { writeEnsembleRepository } from './fixtures.js';

let repository: string;
let server: RunningServer;

const input = (
  values: number[],
  rows = 1,
): { name: string; datatype: 'FP32'; shape: number[]; data: Float32Array } => ({
  name: 'IN',
  datatype: 'FP32',
  shape: [rows, values.length / rows],
  data: new Float32Array(values),
});

async function json<T>(path: string, init?: RequestInit): Promise<{ status: number; body: T }> {
  const response = await fetch(server.url + path, init);
  return { status: response.status, body: (await response.json()) as T };
}

interface Stats {
  model_stats: {
    name: string;
    inference_count: number;
    execution_count: number;
    inference_stats: Record<string, { count: number; ns: number }>;
    batch_stats: { batch_size: number }[];
  }[];
}

async function stats(model: string): Promise<Stats['model_stats'][number]> {
  const { body } = await json<Stats>(`/v2/models/${model}/stats`);
  return body.model_stats[0] as Stats['model_stats'][number];
}

beforeAll(async () => {
  repository = await writeEnsembleRepository();
  server = await startServer({
    modelRepositories: [repository],
    modelControlMode: 'explicit',
    loadModels: ['chain', 'diamond', 'loose', 'flat', 'batched', 'par', 'nested'],
    httpPort: 0,
    grpcPort: 0,
    metricsPort: 0,
    logSink: () => undefined,
  });
});

afterAll(async () => {
  await server.close();
  await rm(repository, { recursive: true, force: true });
});

describe('ensembles', () => {
  it('loading the ensembles loaded their composing models; metadata and config say ensemble', async () => {
    const { body: index } = await json<{ name: string; state?: string }[]>('/v2/repository/index', {
      method: 'POST',
    });
    const ready = index.filter((r) => r.state === 'READY').map((r) => r.name);
    expect(ready).toEqual([
      'add',
      'batched',
      'chain',
      'diamond',
      'double',
      'flat',
      'loose',
      'nested',
      'par',
      'plus_one',
      'slow_ident',
    ]);
    expect(index.find((r) => r.name === 'bad')?.state).toBeUndefined();
    const { body: meta } = await json<{ platform: string; inputs: unknown[]; outputs: unknown[] }>(
      '/v2/models/chain',
    );
    expect(meta).toEqual({
      name: 'chain',
      versions: ['1'],
      platform: 'ensemble',
      inputs: [{ name: 'IN', datatype: 'FP32', shape: [-1, 4] }],
      outputs: [{ name: 'OUT', datatype: 'FP32', shape: [-1, 4] }],
    });
    const { body: config } = await json<{ platform: string; ensemble_scheduling: { step: unknown[] } }>(
      '/v2/models/chain/config',
    );
    expect(config.platform).toBe('ensemble');
    expect(config.ensemble_scheduling.step).toHaveLength(2);
    expect(config).not.toHaveProperty('instance_group.0');
  });

  it('a chain runs its steps in order and passes the batch through', async () => {
    const r = await infer(server.url, 'chain', [input([1, 2, 3, 4, 0, -1, 0.5, 10], 2)]);
    expect(r.status).toBe(200);
    const out = r.decoded?.outputs[0];
    expect(out?.name).toBe('OUT');
    expect(out?.shape).toEqual([2, 4]);
    expect([...(out?.data as Float32Array)]).toEqual([3, 5, 7, 9, 1, -1, 2, 21]);
  });

  it('a diamond runs its independent steps and joins them; a request for one output runs only its step', async () => {
    const r = await infer(server.url, 'diamond', [input([1, 2, 3, 4])]);
    expect(r.status).toBe(200);
    const byName = new Map(r.decoded?.outputs.map((o) => [o.name, [...(o.data as Float32Array)]]));
    expect(byName.get('SUM')).toEqual([4, 7, 10, 13]);
    expect(byName.get('DOUBLED')).toEqual([2, 4, 6, 8]);

    const before = await Promise.all(
      ['double', 'plus_one', 'add'].map(async (m) => (await stats(m)).inference_stats.success?.count),
    );
    const only = await infer(server.url, 'diamond', [input([1, 1, 1, 1])], {
      outputs: [{ name: 'DOUBLED' }],
    });
    expect(only.status).toBe(200);
    expect(only.decoded?.outputs.map((o) => o.name)).toEqual(['DOUBLED']);
    const after = await Promise.all(
      ['double', 'plus_one', 'add'].map(async (m) => (await stats(m)).inference_stats.success?.count),
    );
    expect(after).toEqual([(before[0] ?? 0) + 1, before[1], before[2]]);
  });

  it('a nested ensemble runs the inner ensemble as a step', async () => {
    const r = await infer(server.url, 'nested', [input([0, 1, 2, 3])]);
    expect(r.status).toBe(200);
    expect([...(r.decoded?.outputs[0]?.data as Float32Array)]).toEqual([1, 3, 5, 7]);
  });

  it("steps go through the composing model's dynamic batcher", async () => {
    const before = (await stats('slow_ident')).execution_count;
    const rs = await Promise.all(
      [0, 1, 2, 3].map((i) => infer(server.url, 'batched', [input([i, i, i, i])])),
    );
    rs.forEach((r, i) => {
      expect(r.status).toBe(200);
      expect([...(r.decoded?.outputs[0]?.data as Float32Array)]).toEqual([i, i, i, i]);
    });
    const s = await stats('slow_ident');
    expect(s.inference_count).toBeGreaterThanOrEqual(4);
    // Four requests in at most two executions: the batcher merged them.
    expect(s.execution_count - before).toBeLessThanOrEqual(2);
    expect(s.batch_stats.some((b) => b.batch_size > 1)).toBe(true);
  });

  it('independent steps are sent at once: both reach the batcher within its delay and run as one execution', async () => {
    const before = await stats('slow_ident');
    const r = await infer(server.url, 'par', [input([5, 6, 7, 8])]);
    expect(r.status).toBe(200);
    expect(r.decoded?.outputs.map((o) => [o.name, [...(o.data as Float32Array)]])).toEqual([
      ['A', [5, 6, 7, 8]],
      ['B', [5, 6, 7, 8]],
    ]);
    const after = await stats('slow_ident');
    expect(after.inference_count - before.inference_count).toBe(2);
    expect(after.execution_count - before.execution_count).toBe(1);
  });

  it('a cancelled request stops: its queued step is dropped and the ensemble fails CANCELLED', async () => {
    const controller = new AbortController();
    const pending = server.server.infer({
      modelName: 'batched',
      inputs: [{ name: 'IN', datatype: 'FP32', shape: [1, 4], data: new Float32Array(4) }],
      signal: controller.signal,
    });
    // Abort once the step is in slow_ident's scheduler (100 ms batcher delay, then a 150 ms
    // execution), not after a fixed pause a loaded machine can overrun.
    const scheduler = server.server.models.resolve('slow_ident').scheduler;
    const deadline = Date.now() + 10_000;
    while (scheduler.pendingCount < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
    expect(scheduler.pendingCount).toBeGreaterThanOrEqual(1);
    controller.abort();
    await expect(pending).rejects.toMatchObject({
      kind: 'CANCELLED',
      message: "in ensemble 'batched', Request was cancelled",
    });
  });

  it("a failing step fails the request with Triton's message, carrying the request id", async () => {
    const r = await infer(
      server.url,
      'loose',
      [{ name: 'IN', datatype: 'FP32', shape: [1, 3], data: new Float32Array(3) }],
      {
        requestId: 'req-7',
      },
    );
    // The step's own error (as `double` answers the same request, id included), after the ensemble's name.
    const direct = await infer(
      server.url,
      'double',
      [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 3], data: new Float32Array(3) }],
      { requestId: 'req-7' },
    );
    expect(direct.error).toMatch(
      /unexpected shape for input 'INPUT0' for model 'double'. Expected \[-1,4\], got \[1,3\]$/,
    );
    expect(r.status).toBe(400);
    expect(r.error).toBe(`in ensemble 'loose', ${direct.error}`);
    const s = await stats('loose');
    expect(s.inference_stats.fail?.count).toBe(1);
    // The ensemble's own checks still run first, with the ensemble's name.
    const wrong = await infer(server.url, 'chain', [
      { name: 'NOPE', datatype: 'FP32', shape: [1, 4], data: new Float32Array(4) },
    ]);
    expect(wrong.status).toBe(400);
    expect(wrong.error).toBe("unexpected inference input 'NOPE' for model 'chain'");
  });

  it('a non-batching ensemble hands its rows to batching steps as their batch; the request id reaches the steps', async () => {
    const ok = await infer(server.url, 'flat', [input([1, 2, 3, 4, 5, 6, 7, 8], 2)]);
    expect(ok.status).toBe(200);
    expect(ok.decoded?.outputs[0]?.shape).toEqual([2, 4]);
    expect([...(ok.decoded?.outputs[0]?.data as Float32Array)]).toEqual([3, 5, 7, 9, 11, 13, 15, 17]);
    const tooMany = await infer(server.url, 'flat', [input(new Array<number>(36).fill(1), 9)], {
      requestId: 'rows-9',
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.error).toBe(
      "in ensemble 'flat', [request id: rows-9] inference request batch-size must be <= 8 for 'double'",
    );
  });

  it("statistics: the ensemble counts requests, one execution each and its steps' compute time; steps count their own", async () => {
    const chainBefore = await stats('chain');
    const doubleBefore = await stats('double');
    for (let i = 0; i < 3; i++)
      expect((await infer(server.url, 'chain', [input([1, 2, 3, 4])])).status).toBe(200);
    const chain = await stats('chain');
    const double = await stats('double');
    const plusOne = await stats('plus_one');
    const delta = (k: string): number =>
      (chain.inference_stats[k]?.count ?? 0) - (chainBefore.inference_stats[k]?.count ?? 0);
    expect(delta('success')).toBe(3);
    expect(delta('queue')).toBe(3);
    expect(delta('compute_infer')).toBe(3);
    expect(chain.execution_count - chainBefore.execution_count).toBe(3);
    expect(chain.inference_count - chainBefore.inference_count).toBe(3);
    expect(chain.batch_stats.map((b) => b.batch_size)).toContain(1);
    // Compute time is the steps' (they ran ONNX sessions); the queue time is ~0.
    expect(chain.inference_stats.compute_infer?.ns).toBeGreaterThan(0);
    expect(
      (double.inference_stats.success?.count ?? 0) - (doubleBefore.inference_stats.success?.count ?? 0),
    ).toBe(3);
    expect(plusOne.execution_count).toBeGreaterThanOrEqual(3);

    const metrics = await (await fetch(server.metricsUrl as string)).text();
    const line = (name: string, model: string): number => {
      const m = new RegExp(`^${name}\\{model="${model}",version="1"\\} (\\d+)`, 'm').exec(metrics);
      return Number(m?.[1] ?? NaN);
    };
    expect(line('nv_inference_request_success', 'chain')).toBe(chain.inference_stats.success?.count);
    expect(line('nv_inference_exec_count', 'chain')).toBe(chain.execution_count);
    expect(line('nv_inference_request_success', 'double')).toBe(double.inference_stats.success?.count);
    expect(metrics).toMatch(/^nv_inference_request_failure\{model="loose",reason="OTHER",version="1"\} 1$/m);
  });

  it('answers over gRPC', async () => {
    const client = new GrpcTestClient(server.grpcUrl);
    const response = await client.call<{
      outputs: { name: string; shape: bigint[] }[];
      rawOutputContents: Uint8Array[];
    }>('ModelInfer', {
      modelName: 'chain',
      id: 'g1',
      inputs: [{ name: 'IN', datatype: 'FP32', shape: [1n, 4n], contents: { fp32Contents: [0, 1, 2, 3] } }],
    });
    client.close();
    expect(response.outputs[0]?.name).toBe('OUT');
    const raw = response.rawOutputContents[0] as Uint8Array;
    expect([...new Float32Array(new Uint8Array(raw).buffer)]).toEqual([1, 3, 5, 7]);
  });
});
