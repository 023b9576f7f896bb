/**
 * Ensembles at startup in `none` mode, where every model loads at once: each ensemble waits for
 * its composing models (a nested ensemble for the inner one), ensembles that use each other are
 * found while both load, and the broken ones are startup failures with Triton's reasons. In `poll`
 * mode an ensemble whose composing models are missing loads once a poll finds them.
 */
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { InferenceServer } from '../../src/core/server.js';
import { writeEnsembleRepository } from './fixtures.js';

let repository: string;
let server: InferenceServer;

beforeAll(async () => {
  repository = await writeEnsembleRepository();
  server = await InferenceServer.create({ modelRepositories: [repository], logSink: () => undefined });
});

afterAll(async () => {
  await server.shutdown();
  await rm(repository, { recursive: true, force: true });
});

describe('ensembles at startup (none mode)', () => {
  it('every ensemble loads after its composing models and serves', async () => {
    for (const name of ['chain', 'diamond', 'flat', 'nested', 'par', 'batched']) {
      expect(server.isModelReady(name)).toBe(true);
    }
    const response = await server.infer({
      modelName: 'nested',
      inputs: [{ name: 'IN', datatype: 'FP32', shape: [1, 4], data: new Float32Array([1, 1, 1, 1]) }],
    });
    expect([...(response.outputs[0]?.tensor.data as Float32Array)]).toEqual([3, 3, 3, 3]);
  });

  it('a cycle found while both ensembles load fails both, each with its own message', async () => {
    const index = new Map((await server.repositoryIndex()).map((r) => [r.name, r]));
    expect(index.get('cyc_a')).toMatchObject({
      state: 'UNAVAILABLE',
      reason: 'circular dependency between ensembles: cyc_a -> ... -> cyc_b -> cyc_a',
    });
    expect(index.get('cyc_b')).toMatchObject({
      state: 'UNAVAILABLE',
      reason: 'circular dependency between ensembles: cyc_b -> ... -> cyc_a -> cyc_b',
    });
    const failed = new Map(server.startupFailures.map((f) => [f.name, f.reason]));
    expect(failed.get('cyc_a')).toBe(
      "load failed for model 'cyc_a': circular dependency between ensembles: cyc_a -> ... -> cyc_b -> cyc_a\n",
    );
    expect(server.isReady()).toBe(false);
  });
});

describe('ensembles in poll mode', () => {
  it('an ensemble missing its composing models is UNAVAILABLE, and loads when a poll finds them', async () => {
    const repo = await writeEnsembleRepository();
    const aside = await mkdtemp(join(tmpdir(), 'ensemble-aside-'));
    for (const m of ['double', 'plus_one']) await rename(join(repo, m), join(aside, m));
    const polled = await InferenceServer.create({
      modelRepositories: [repo],
      modelControlMode: 'poll',
      repositoryPollSecs: 0,
      logSink: () => undefined,
    });
    try {
      const before = new Map((await polled.repositoryIndex()).map((r) => [r.name, r]));
      expect(before.get('chain')).toMatchObject({
        state: 'UNAVAILABLE',
        reason: 'ensemble chain contains models that are not available or ambiguous: double, plus_one',
      });
      for (const m of ['double', 'plus_one']) await rename(join(aside, m), join(repo, m));
      await polled.models.poll();
      for (const m of ['chain', 'double', 'plus_one', 'nested']) expect(polled.isModelReady(m)).toBe(true);
      const response = await polled.infer({
        modelName: 'chain',
        inputs: [{ name: 'IN', datatype: 'FP32', shape: [1, 4], data: new Float32Array([0, 0, 1, 1]) }],
      });
      expect([...(response.outputs[0]?.tensor.data as Float32Array)]).toEqual([1, 1, 3, 3]);
    } finally {
      await polled.shutdown();
      await rm(repo, { recursive: true, force: true });
      await rm(aside, { recursive: true, force: true });
    }
  });
});
