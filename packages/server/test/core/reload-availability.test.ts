/**
 * Reload keeps serving (Triton's `test_model_availability_on_reload*` and `test_model_reload_fail`
 * in qa/L0_lifecycle, on both wires through the client package): an identity model whose every
 * version takes `creation_delay_sec` to load is reloaded by `POST …/load` after its files changed —
 * a new version directory, a new version policy, a changed config of the same version, a config
 * that cannot load. While the load runs the serving version stays READY and answers (requests sent
 * back to back all succeed, across the switch too), the server stays live and the new version is
 * LOADING; afterwards the new version serves and the old one is UNAVAILABLE `unloaded`, or, when
 * the load failed, the old one serves on.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { TritonClient, TritonServerError } from '@tritonserver-ts/client';
import { createGrpcClient } from '@tritonserver-ts/client/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestServer, type TestServer } from '../helpers/server.js';

const DELAY_SEC = 2;

interface ConfigChange {
  readonly policy?: readonly number[];
  readonly kind?: string;
  readonly generation?: number;
  readonly outputType?: string;
}

function config(name: string, extra: ConfigChange = {}): string {
  return [
    `name: "${name}"`,
    'backend: "identity"',
    'max_batch_size: 0',
    'input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]',
    `output [ { name: "OUTPUT0" data_type: ${extra.outputType ?? 'TYPE_INT32'} dims: [ -1 ] } ]`,
    `instance_group [ { count: 1 kind: ${extra.kind ?? 'KIND_CPU'} } ]`,
    'parameters [',
    `  { key: "creation_delay_sec" value: { string_value: "${DELAY_SEC}" } },`,
    `  { key: "generation" value: { string_value: "${extra.generation ?? 1}" } }`,
    ']',
    ...(extra.policy !== undefined
      ? [`version_policy: { specific { versions: [${extra.policy.join(', ')}] } }`]
      : []),
    '',
  ].join('\n');
}

const transports = ['http', 'grpc'] as const;

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({
    fill: async (repository) => {
      for (const transport of transports) {
        const dir = join(repository, `reload_${transport}`);
        await mkdir(join(dir, '1'), { recursive: true });
        await writeFile(join(dir, 'config.pbtxt'), config(`reload_${transport}`));
      }
    },
    modelControlMode: 'explicit',
    loadModels: transports.map((t) => `reload_${t}`),
    grpcPort: 0,
  });
}, 60_000);
afterAll(async () => {
  await srv.close();
});

describe.each(transports)('%s: reload keeps serving', (transport) => {
  const name = `reload_${transport}`;
  let client: TritonClient;
  beforeAll(() => {
    client =
      transport === 'http'
        ? new TritonClient({ url: srv.url })
        : createGrpcClient({ url: srv.running.grpcUrl });
  });
  afterAll(() => client.close());

  const writeConfig = (text: string): Promise<void> =>
    writeFile(join(srv.repository, name, 'config.pbtxt'), text);

  async function inferOk(version: number | undefined, value: number): Promise<void> {
    const result = await client.infer(
      name,
      [{ name: 'INPUT0', datatype: 'INT32', shape: [3], data: Int32Array.of(value, value + 1, value + 2) }],
      version === undefined ? {} : { modelVersion: version },
    );
    expect(Array.from(result.asTypedArray('OUTPUT0', 'INT32'))).toEqual([value, value + 1, value + 2]);
    if (version !== undefined) expect(result.modelVersion).toBe(String(version));
  }

  /**
   * Starts the load, then runs `during` while it is still running (checked before and after), with
   * unversioned requests sent back to back from the start of the load until just after its end.
   */
  async function reload(during: () => Promise<void>): Promise<{ error: unknown; failures: unknown[] }> {
    let settled = false;
    const load = client.loadModel(name).then(
      () => undefined,
      (error: unknown) => error,
    );
    void load.finally(() => (settled = true));
    const failures: unknown[] = [];
    let sent = 0;
    const traffic = (async () => {
      let stopAt = Infinity;
      while (Date.now() < stopAt) {
        if (settled && stopAt === Infinity) stopAt = Date.now() + 200;
        await inferOk(undefined, sent++).catch((e: unknown) => failures.push(e));
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    expect(settled).toBe(false);
    const t0 = performance.now();
    expect(await client.isServerLive()).toBe(true);
    // The load sleeps DELAY_SEC without holding the server: a live check answers at once.
    expect(performance.now() - t0).toBeLessThan(1000);
    await during();
    expect(settled).toBe(false);
    const error = await load;
    await traffic;
    expect(sent).toBeGreaterThan(5);
    return { error, failures };
  }

  async function states(): Promise<Record<string, string>> {
    const index = await client.getModelRepositoryIndex();
    return Object.fromEntries(
      index.filter((e) => e.name === name).map((e) => [e.version ?? '', `${e.state}:${e.reason ?? ''}`]),
    );
  }

  it('test_model_availability_on_reload: a new version directory (latest policy)', async () => {
    expect(await client.isModelReady(name, 1)).toBe(true);
    await mkdir(join(srv.repository, name, '2'));
    const { error, failures } = await reload(async () => {
      expect(await client.isModelReady(name, 1)).toBe(true);
      expect(await client.isModelReady(name, 2)).toBe(false);
      await inferOk(1, 10);
      expect(await states()).toEqual({ '1': 'READY:', '2': 'LOADING:' });
    });
    expect(error).toBeUndefined();
    expect(failures).toEqual([]);
    expect(await client.isModelReady(name, 1)).toBe(false);
    expect(await client.isModelReady(name, 2)).toBe(true);
    await inferOk(2, 20);
    expect(await states()).toEqual({ '1': 'UNAVAILABLE:unloaded', '2': 'READY:' });
  });

  it('test_model_availability_on_reload_2: a new version policy', async () => {
    await writeConfig(config(name, { policy: [1] }));
    const { error, failures } = await reload(async () => {
      expect(await client.isModelReady(name, 2)).toBe(true);
      expect(await client.isModelReady(name, 1)).toBe(false);
      await inferOk(2, 30);
    });
    expect(error).toBeUndefined();
    expect(failures).toEqual([]);
    expect(await client.isModelReady(name, 2)).toBe(false);
    expect(await client.isModelReady(name, 1)).toBe(true);
    await inferOk(1, 40);
  });

  it('test_model_availability_on_reload_3: a changed config of the serving version', async () => {
    await writeConfig(config(name, { policy: [1], generation: 2 }));
    const generation = async (): Promise<string | undefined> =>
      (await client.getModelConfig(name, 1)).parameters?.['generation']?.string_value;
    const { error, failures } = await reload(async () => {
      expect(await client.isModelReady(name, 1)).toBe(true);
      await inferOk(1, 50);
      expect(await generation()).toBe('1');
      expect(await states()).toEqual({ '1': 'READY:', '2': 'UNAVAILABLE:unloaded' });
    });
    expect(error).toBeUndefined();
    expect(failures).toEqual([]);
    expect(await client.isModelReady(name, 1)).toBe(true);
    expect(await generation()).toBe('2');
    await inferOk(1, 60);
  });

  it.each([
    [
      'the backend refuses the config',
      { policy: [2], outputType: 'TYPE_FP32' },
      'expected input and output datatype to match',
    ],
    ['its instances cannot be created here', { policy: [2], kind: 'KIND_GPU' }, 'KIND_GPU'],
  ] as const)(
    'test_model_reload_fail: a version that cannot load (%s) leaves the serving one serving',
    async (_case, change, reason) => {
      await mkdir(join(srv.repository, name, '2'), { recursive: true });
      await writeConfig(config(name, change));
      const error = await client.loadModel(name).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TritonServerError);
      expect((error as Error).message).toContain(`failed to load '${name}', `);
      expect((error as Error).message).toContain(reason);
      expect(await client.isServerLive()).toBe(true);
      expect(await client.isModelReady(name, 1)).toBe(true);
      expect(await client.isModelReady(name, 2)).toBe(false);
      await inferOk(1, 70);
      await inferOk(undefined, 80);
      expect((await states())['1']).toBe('READY:');
    },
  );
});
