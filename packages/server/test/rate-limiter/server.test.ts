/**
 * The rate limiter in the real server (`rateLimit: 'execution_count'`, the CLI's
 * `--rate-limit=execution_count`), with generated models: Python models that report each
 * execution's start and end on the host's monotonic clock (overlap is measured, not guessed), and
 * identity models with an execution delay (Triton's `L0_rate_limiter` models) for priorities and
 * load errors, whose messages are Triton's.
 */
import { afterEach, describe, expect, it } from 'vitest';

import type { StartServerOptions } from '../../src/index.js';
import {
  delayedRateLimitedModel,
  sleepingRateLimitedModel,
  writePythonModels,
  type GeneratedPythonModel,
} from '../../src/testing/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { inferJson, outputData, startPythonServer } from '../python-backend/helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Execution {
  readonly model: string;
  readonly start: number;
  readonly end: number;
}

/** Sends `perModel` concurrent requests to each model; returns every execution's interval. */
async function runConcurrently(
  url: string,
  models: readonly string[],
  perModel: number,
): Promise<Execution[]> {
  const calls = models.flatMap((model) =>
    Array.from({ length: perModel }, async (): Promise<Execution> => {
      const r = await inferJson(url, model, {
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1], data: [1] }],
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return {
        model,
        start: Number(outputData(r.body, 'START')?.[0]),
        end: Number(outputData(r.body, 'END')?.[0]),
      };
    }),
  );
  return Promise.all(calls);
}

/** Pairs of executions that ran at the same time. */
function overlaps(executions: readonly Execution[]): [Execution, Execution][] {
  const sorted = [...executions].sort((a, b) => a.start - b.start);
  const out: [Execution, Execution][] = [];
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length; j++) {
      const a = sorted[i] as Execution;
      const b = sorted[j] as Execution;
      if (b.start < a.end) out.push([a, b]);
    }
  }
  return out;
}

async function startIdentityServer(
  models: readonly GeneratedPythonModel[],
  options: Partial<StartServerOptions> = {},
): Promise<TestServer> {
  return startTestServer({ ...options, fill: (repository) => writePythonModels(repository, models) });
}

/** `POST /v2/repository/index` entry of `name`. */
async function indexEntry(url: string, name: string): Promise<{ state?: string; reason?: string }> {
  const response = await fetch(`${url}/v2/repository/index`, { method: 'POST', body: '{}' });
  const entries = (await response.json()) as { name: string; state?: string; reason?: string }[];
  return entries.find((e) => e.name === name) ?? {};
}

const shared = (name: string, extra: Partial<Parameters<typeof sleepingRateLimitedModel>[0]> = {}) =>
  sleepingRateLimitedModel({ name, resources: [{ name: 'R', count: 1 }], delayMs: 150, ...extra });

describe('rate limiter: executions and resources (real server, Python models)', () => {
  it('never overlaps two models sharing a one-copy resource; overlaps them with two copies', async () => {
    server = await startPythonServer([shared('rl_a'), shared('rl_b')], { rateLimit: 'execution_count' });
    const serial = await runConcurrently(server.url, ['rl_a', 'rl_b'], 3);
    expect(overlaps(serial)).toEqual([]);
    expect(new Set(serial.map((e) => e.model))).toEqual(new Set(['rl_a', 'rl_b']));
    await server.close();

    server = await startPythonServer([shared('rl_a'), shared('rl_b')], {
      rateLimit: 'execution_count',
      rateLimitResources: [{ name: 'R', count: 2, device: -1 }],
    });
    const parallel = await runConcurrently(server.url, ['rl_a', 'rl_b'], 3);
    expect(overlaps(parallel).length).toBeGreaterThan(0);
    // Each model has one instance: only executions of different models overlap.
    for (const [a, b] of overlaps(parallel)) expect(a.model).not.toBe(b.model);
  });

  it('limits two instances of one model sharing a global resource; rate limiting off ignores it', async () => {
    const model = shared('rl_two', { count: 2, resources: [{ name: 'G', count: 1, global: true }] });
    server = await startPythonServer([model], { rateLimit: 'execution_count' });
    const limited = await runConcurrently(server.url, ['rl_two'], 4);
    expect(overlaps(limited)).toEqual([]);
    expect(server.logs.some((l) => l.includes('rate_limiter'))).toBe(false);
    await server.close();

    server = await startPythonServer([model]);
    const free = await runConcurrently(server.url, ['rl_two'], 4);
    expect(overlaps(free).length).toBeGreaterThan(0);
    expect(
      server.logs.filter((l) =>
        l.includes(
          "model 'rl_two': rate_limiter of instance group(s) 'rl_two_0' has no effect: rate limiting is off",
        ),
      ),
    ).toHaveLength(1);
  });

  it('counts the wait for resources in the queue time of the waiting request', async () => {
    server = await startPythonServer([shared('rl_a', { delayMs: 300 }), shared('rl_b')], {
      rateLimit: 'execution_count',
    });
    const first = runConcurrently(server.url, ['rl_a'], 1);
    await new Promise((r) => setTimeout(r, 50));
    const second = runConcurrently(server.url, ['rl_b'], 1);
    const [[a], [b]] = await Promise.all([first, second]);
    expect(b?.start).toBeGreaterThanOrEqual(a?.end ?? Infinity);
    const stats = (await (await fetch(`${server.url}/v2/models/rl_b/stats`)).json()) as {
      model_stats: { inference_stats: { queue: { count: number; ns: number } } }[];
    };
    const queue = stats.model_stats[0]?.inference_stats.queue;
    expect(queue?.count).toBe(1);
    // rl_b waited for the resource while rl_a ran (300 ms, started ~50 ms earlier).
    expect(queue?.ns ?? 0).toBeGreaterThan(150e6);
  });
}, 60_000);

describe('rate limiter: priority (real server, identity models)', () => {
  it('gives the priority-1 model about twice the executions of the priority-2 model', async () => {
    server = await startIdentityServer(
      [
        delayedRateLimitedModel({
          name: 'rl_p1',
          resources: [{ name: 'R', count: 1 }],
          priority: 1,
          delayMs: 20,
        }),
        delayedRateLimitedModel({
          name: 'rl_p2',
          resources: [{ name: 'R', count: 1 }],
          priority: 2,
          delayMs: 20,
        }),
      ],
      { rateLimit: 'execution_count' },
    );
    const url = server.url;
    const done = { rl_p1: 0, rl_p2: 0 };
    let stop = false;
    // Four requests in flight per model until the first model has 60 answers (Triton's test keeps
    // 8 in flight per model and compares the counts).
    const client = async (model: 'rl_p1' | 'rl_p2'): Promise<void> => {
      while (!stop) {
        const r = await inferJson(url, model, {
          inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1], data: [1] }],
        });
        expect(r.status).toBe(200);
        if (stop) return;
        done[model] += 1;
        if (done.rl_p1 + done.rl_p2 >= 90) stop = true;
      }
    };
    await Promise.all([0, 1, 2, 3].flatMap(() => [client('rl_p1'), client('rl_p2')]));
    const ratio = done.rl_p1 / done.rl_p2;
    expect(ratio, JSON.stringify(done)).toBeGreaterThan(1.6);
    expect(ratio, JSON.stringify(done)).toBeLessThan(2.5);
  });
}, 60_000);

describe('rate limiter: load errors (Triton messages)', () => {
  const needs4 = delayedRateLimitedModel({ name: 'rl_needs4', resources: [{ name: 'resource1', count: 4 }] });

  it('fails a model whose instance needs more than --rate-limit-resource gives', async () => {
    server = await startIdentityServer([needs4], {
      rateLimit: 'execution_count',
      rateLimitResources: [{ name: 'resource1', count: 1, device: -1 }],
    });
    const entry = await indexEntry(server.url, 'rl_needs4');
    expect(entry.state).toBe('UNAVAILABLE');
    expect(entry.reason).toContain(
      'Resource count for "resource1" is limited to 1 which will prevent scheduling of one or more model instances, the minimum required count is 4',
    );
    expect(server.logs.some((l) => l.includes('is limited to 1 which will prevent scheduling'))).toBe(true);
  });

  it('counts a value for another device as none (limited to 0)', async () => {
    server = await startIdentityServer([needs4], {
      rateLimit: 'execution_count',
      rateLimitResources: [{ name: 'resource1', count: 10, device: 10 }],
    });
    expect((await indexEntry(server.url, 'rl_needs4')).reason).toContain(
      'Resource count for "resource1" is limited to 0 which will prevent scheduling of one or more model instances, the minimum required count is 4',
    );
  });

  it('refuses a resource that is global for one model and per-device for another', async () => {
    server = await startIdentityServer(
      [
        delayedRateLimitedModel({
          name: 'rl_global',
          resources: [{ name: 'resource2', count: 2, global: true }],
        }),
        delayedRateLimitedModel({ name: 'rl_device', resources: [{ name: 'resource2', count: 2 }] }),
      ],
      { rateLimit: 'execution_count' },
    );
    const states = [await indexEntry(server.url, 'rl_global'), await indexEntry(server.url, 'rl_device')];
    // Whichever loads second fails (models load concurrently, as in Triton).
    const failed = states.filter((s) => s.state === 'UNAVAILABLE');
    expect(failed).toHaveLength(1);
    expect(failed[0]?.reason).toContain(
      'Resource "resource2" is present as both global and device-specific resource in the model configuration.',
    );
  });

  it('loads the same models with rate limiting off (the section has no effect)', async () => {
    server = await startIdentityServer([needs4], {
      rateLimitResources: [{ name: 'resource1', count: 1, device: -1 }],
    });
    expect((await indexEntry(server.url, 'rl_needs4')).state).toBe('READY');
  });
});
