import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildIdentityOnnx } from '../../src/testing/index.js';
import { get, infer, post, startTestServer, type TestServer } from '../helpers/server.js';

type IndexEntry = { name: string; version?: string; state?: string; reason?: string };

async function index(url: string): Promise<IndexEntry[]> {
  return (await post(url, '/v2/repository/index', undefined)).json as IndexEntry[];
}

const fp32 = (values: number[]) => [
  { name: 'INPUT0', datatype: 'FP32' as const, shape: [1, values.length], data: Float32Array.from(values) },
];

describe('explicit model control', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({
      only: ['simple', 'identity_fp32', 'broken_config', 'slow_identity'],
      modelControlMode: 'explicit',
      loadModels: ['simple', 'slow_identity'],
    });
  });
  afterAll(async () => {
    await srv.close();
  });

  it('loads only the --load-model models at startup and is ready', async () => {
    const entries = await index(srv.url);
    expect(entries.find((e) => e.name === 'simple')).toMatchObject({ version: '1', state: 'READY' });
    expect(entries.find((e) => e.name === 'identity_fp32')).toEqual({ name: 'identity_fp32' });
    expect((await get(srv.url, '/v2/health/ready')).status).toBe(200);
    const r = await infer(srv.url, 'identity_fp32', fp32([1]));
    expect(r.status).toBe(400);
    expect(r.error).toBe("Request for unknown model: 'identity_fp32' is not found");
  });

  it('loads and unloads a model through the repository API', async () => {
    expect((await post(srv.url, '/v2/repository/models/identity_fp32/load', undefined)).status).toBe(200);
    expect((await infer(srv.url, 'identity_fp32', fp32([4]))).status).toBe(200);
    const unload = await post(
      srv.url,
      '/v2/repository/models/identity_fp32/unload',
      '{"parameters":{"unload_dependents":true}}',
    );
    expect(unload.status).toBe(200);
    expect(unload.text).toBe('');
    expect((await index(srv.url)).find((e) => e.name === 'identity_fp32')).toEqual({
      name: 'identity_fp32',
      version: '1',
      state: 'UNAVAILABLE',
      reason: 'unloaded',
    });
    const r = await infer(srv.url, 'identity_fp32', fp32([4]));
    expect(r.status).toBe(404);
    expect(r.error).toBe("Request for unknown model: 'identity_fp32' has no available versions");
    // An unloaded model does not make the server unready.
    expect((await get(srv.url, '/v2/health/ready')).status).toBe(200);
  });

  it('reloads a model with a config override', async () => {
    const simpleConfig = (await get(srv.url, '/v2/models/simple/config')).json as Record<string, unknown>;
    const config = JSON.stringify({ ...simpleConfig, max_batch_size: 2 });
    const load = await post(
      srv.url,
      '/v2/repository/models/simple/load',
      JSON.stringify({ parameters: { config } }),
    );
    expect(load.status).toBe(200);
    expect(
      ((await get(srv.url, '/v2/models/simple/config')).json as { max_batch_size: number }).max_batch_size,
    ).toBe(2);
    const three = ['INPUT0', 'INPUT1'].map((name) => ({
      name,
      datatype: 'INT32' as const,
      shape: [3, 16],
      data: new Int32Array(48),
    }));
    const r = await infer(srv.url, 'simple', three);
    expect(r.error).toBe("inference request batch-size must be <= 2 for 'simple'");
  });

  it('loads a model from config and file contents that are not in the repository', async () => {
    const config = JSON.stringify({
      name: 'uploaded',
      backend: 'onnxruntime',
      max_batch_size: 4,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
    });
    const file = Buffer.from(buildIdentityOnnx('FP32')).toString('base64');
    const load = await post(
      srv.url,
      '/v2/repository/models/uploaded/load',
      JSON.stringify({ parameters: { config, 'file:1/model.onnx': file } }),
    );
    expect(load.text).toBe('');
    expect(load.status).toBe(200);
    const r = await infer(srv.url, 'uploaded', fp32([2.5, 3.5]));
    expect(Array.from(r.decoded?.outputs[0]?.data as Float32Array)).toEqual([2.5, 3.5]);
  });

  it('reports failed loads with 500 and "failed to load"', async () => {
    const ghost = await post(srv.url, '/v2/repository/models/ghost/load', undefined);
    expect(ghost.status).toBe(500);
    expect((ghost.json as { error: string }).error).toBe(
      "failed to load 'ghost', failed to poll from model repository",
    );
    const broken = await post(srv.url, '/v2/repository/models/broken_config/load', undefined);
    expect(broken.status).toBe(500);
    expect((broken.json as { error: string }).error).toMatch(
      /^failed to load 'broken_config', .*config\.pbtxt:3:1/,
    );
    expect((await index(srv.url)).find((x) => x.name === 'broken_config')?.state).toBe('UNAVAILABLE');
    // A model that should be loaded but failed makes the server unready (strict readiness).
    expect((await get(srv.url, '/v2/health/ready')).status).toBe(400);
    await post(srv.url, '/v2/repository/models/broken_config/unload', undefined);
    expect((await get(srv.url, '/v2/health/ready')).status).toBe(200);
  });

  it('finishes an in-flight request when its model is unloaded', async () => {
    const pending = infer(srv.url, 'slow_identity', fp32([9]));
    await new Promise((r) => setTimeout(r, 10));
    const unload = await post(srv.url, '/v2/repository/models/slow_identity/unload', undefined);
    expect(unload.status).toBe(200);
    const r = await pending;
    expect(r.status).toBe(200);
    expect(Array.from(r.decoded?.outputs[0]?.data as Float32Array)).toEqual([9]);
  });
});

describe('poll model control', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({
      only: ['simple', 'identity_fp32'],
      modelControlMode: 'poll',
      repositoryPollSecs: 3600,
    });
  });
  afterAll(async () => {
    await srv.close();
  });

  it('refuses explicit load and unload with Triton’s message', async () => {
    const r = await post(srv.url, '/v2/repository/models/simple/load', undefined);
    expect(r.status).toBe(503);
    expect(r.json).toEqual({ error: 'explicit model load / unload is not allowed if polling is enabled' });
  });

  it('reloads a changed model, loads a new one and unloads a removed one on poll', async () => {
    const cfgPath = join(srv.repository, 'simple', 'config.pbtxt');
    const text = await readFile(cfgPath, 'utf8');
    await writeFile(cfgPath, text.replace('max_batch_size: 8', 'max_batch_size: 3'));
    const copyCfg = (await readFile(join(srv.repository, 'identity_fp32', 'config.pbtxt'), 'utf8')).replace(
      'name: "identity_fp32"',
      'name: "identity_copy"',
    );
    const { mkdir, copyFile } = await import('node:fs/promises');
    await mkdir(join(srv.repository, 'identity_copy', '1'), { recursive: true });
    await copyFile(
      join(srv.repository, 'identity_fp32', '1', 'model.onnx'),
      join(srv.repository, 'identity_copy', '1', 'model.onnx'),
    );
    await writeFile(join(srv.repository, 'identity_copy', 'config.pbtxt'), copyCfg);
    await rm(join(srv.repository, 'identity_fp32'), { recursive: true });

    await srv.running.server.models.poll();

    expect(
      ((await get(srv.url, '/v2/models/simple/config')).json as { max_batch_size: number }).max_batch_size,
    ).toBe(3);
    expect((await infer(srv.url, 'identity_copy', fp32([1]))).status).toBe(200);
    const entries = await index(srv.url);
    expect(entries.find((e) => e.name === 'identity_fp32')).toMatchObject({
      state: 'UNAVAILABLE',
      reason: 'unloaded',
    });
    expect((await get(srv.url, '/v2/health/ready')).status).toBe(200);
  });
});

describe('poll interval', () => {
  it('re-scans the repository on its own every --repository-poll-secs', async () => {
    const srv = await startTestServer({
      only: ['identity_fp32'],
      modelControlMode: 'poll',
      repositoryPollSecs: 0.05,
    });
    try {
      await rm(join(srv.repository, 'identity_fp32'), { recursive: true });
      const deadline = Date.now() + 5000;
      let state: string | undefined;
      while (Date.now() < deadline) {
        state = (await index(srv.url)).find((e) => e.name === 'identity_fp32')?.state;
        if (state === 'UNAVAILABLE') break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(state).toBe('UNAVAILABLE');
    } finally {
      await srv.close();
    }
  });
});

describe('shutdown', () => {
  it('stops waiting for in-flight requests after the exit timeout', async () => {
    const srv = await startTestServer({ only: ['slow_identity'], exitTimeoutSecs: 0.06 });
    // Requests answered 200 so far: a close that waited for all of them would see every one.
    let answered = 0;
    const pending = Array.from({ length: 8 }, () =>
      infer(srv.url, 'slow_identity', fp32([1])).then(
        (r) => {
          if (r.status === 200) answered += 1;
        },
        () => undefined,
      ),
    );
    // Close only once all 8 are inside the server (a fixed pause lost that race on a loaded machine):
    // one runs for 50 ms, the rest wait behind it, so they cannot finish within the 60 ms timeout.
    const scheduler = srv.running.server.models.resolve('slow_identity').scheduler;
    const deadline = Date.now() + 10_000;
    while (scheduler.pendingCount < pending.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 2));
    }
    expect(scheduler.pendingCount).toBe(pending.length);
    const started = Date.now();
    const finished = await srv.running.close();
    const answeredAtClose = answered;
    expect(finished).toBe(false);
    // The 8 executions take 400 ms one after another: the close returned before they were all
    // answered, and soon after the 60 ms timeout (a generous bound for a loaded machine).
    expect(answeredAtClose).toBeLessThan(pending.length);
    expect(Date.now() - started).toBeLessThan(2_000);
    await Promise.all(pending);
    await srv.close();
  });

  it('reports a clean drain when every request finished in time', async () => {
    const srv = await startTestServer({ only: ['slow_identity'] });
    const pending = infer(srv.url, 'slow_identity', fp32([2]));
    // Close once the request is inside the server (a fixed pause lost that race on a loaded machine).
    const scheduler = srv.running.server.models.resolve('slow_identity').scheduler;
    const deadline = Date.now() + 10_000;
    while (scheduler.pendingCount < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    expect(scheduler.pendingCount).toBe(1);
    expect(await srv.running.close()).toBe(true);
    expect((await pending).status).toBe(200);
    await srv.close();
  });
});
