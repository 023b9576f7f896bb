/**
 * The tuner puts the model's configuration back on every way out: after an abort, after a perf
 * failure that stops the run, and when the model had been loaded with an override before the run
 * (loading without an override would give the repository's config, not that one). Real embedded
 * server; the perf failure is an in-process fake (a `runPerf` that throws), because a data error
 * that happens only for the second configuration cannot be provoked on a real model.
 */
import { TritonClient } from '@tritonserver-ts/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PerfError } from '../src/errors.js';
import { runPerf } from '../src/perf.js';
import { applySettings, settingsOf } from '../src/tune/search-space.js';
import { tune, type TuneProgress } from '../src/tune/tuner.js';
import { tuneOptions, type TuneOptions } from '../src/tune/tune-options.js';
import { startEmbedded, type Embedded } from './helpers/embedded.js';

describe('tuner: the configuration is restored', () => {
  let e: Embedded;
  let client: TritonClient;

  beforeAll(async () => {
    e = await startEmbedded({ identity: [{ name: 'tune_restore', delayMs: 5, maxBatchSize: 4, dims: [4] }] });
    client = new TritonClient({ url: e.url });
  });
  afterAll(async () => {
    await client?.close();
    await e?.close();
  });

  const options = (over: Partial<TuneOptions> = {}): TuneOptions =>
    tuneOptions({
      modelName: 'tune_restore',
      url: e.url,
      space: {
        instanceCounts: [1, 2],
        maxBatchSizes: [4],
        dynamicBatching: [{ enabled: false }],
        concurrency: [1],
      },
      perf: { measurementIntervalMs: 300, stabilityPercentage: 100, shapes: new Map([['INPUT0', [4]]]) },
      ...over,
    });

  it('after an abort during the second configuration', async () => {
    const before = settingsOf(await client.getModelConfig('tune_restore'));
    const controller = new AbortController();
    const events: TuneProgress['kind'][] = [];
    const result = await tune(options(), {
      signal: controller.signal,
      onProgress: (event) => {
        events.push(event.kind);
        if (event.kind === 'perf' && !event.variant.isDefault && event.event.kind === 'window')
          controller.abort();
      },
    });
    expect(result.aborted).toBe(true);
    expect(result.configs.map((c) => c.measurements.length)).toEqual([1, 0]);
    expect(result.best?.variant).toBe('tune_restore_config_default');
    expect(events).toContain('restored');
    expect(result.restoreError).toBeUndefined();
    expect(settingsOf(await client.getModelConfig('tune_restore'))).toEqual(before);
    expect(before.instanceCount).toBe(1);
  });

  it('after a perf failure that stops the run (fake runPerf throwing INPUT_DATA for the second configuration)', async () => {
    const before = settingsOf(await client.getModelConfig('tune_restore'));
    let calls = 0;
    const failing: typeof runPerf = (o, h) => {
      calls += 1;
      if (calls === 2) return Promise.reject(new PerfError('INPUT_DATA', 'fake: no data for this config'));
      return runPerf(o, h);
    };
    await expect(tune(options(), { runPerf: failing })).rejects.toThrow(/fake: no data for this config/);
    expect(calls).toBe(2);
    // The second configuration (2 instances) was loaded when it failed; the original is back.
    expect(settingsOf(await client.getModelConfig('tune_restore'))).toEqual(before);
  });

  it('records a configuration that fails to load and goes on; restores an override loaded before the run', async () => {
    const repository = await client.getModelConfig('tune_restore');
    // Before the run: the model serves 3 instances through an override (not its config.pbtxt).
    const three = applySettings(repository, { ...settingsOf(repository), instanceCount: 3 });
    await client.loadModel('tune_restore', { config: three });
    const before = settingsOf(await client.getModelConfig('tune_restore'));
    expect(before.instanceCount).toBe(3);

    // KIND_GPU cannot load on this GPU-less server: that configuration fails, the others are measured.
    const gpu = { ...options().space, instanceCounts: [1] };
    const result = await tune(
      { ...options(), space: gpu },
      {
        onProgress: () => undefined,
      },
    );
    expect(result.configs.map((c) => [c.variant.settings.instanceCount, c.measurements.length])).toEqual([
      [3, 1],
      [1, 1],
    ]);
    expect(settingsOf(await client.getModelConfig('tune_restore'))).toEqual(before);

    // A configuration the server cannot load: the client sends the 2-instance variant as KIND_GPU,
    // which this GPU-less server refuses; it is recorded and the run goes on.
    const failing = await tune(options({ space: { ...gpu, instanceCounts: [2] } }), {
      client: {
        loadModel: (name, load, callOptions) =>
          load?.config !== undefined &&
          (load.config as { instance_group?: { count?: number }[] }).instance_group?.[0]?.count === 2
            ? client.loadModel(
                name,
                { config: { ...(load.config as object), instance_group: [{ kind: 'KIND_GPU', count: 2 }] } },
                callOptions,
              )
            : client.loadModel(name, load, callOptions),
        isModelReady: (...a) => client.isModelReady(...a),
        getModelConfig: (...a) => client.getModelConfig(...a),
      },
    });
    expect(failing.configs[1]?.error).toMatch(
      /loading 'tune_restore' with the configuration failed: .*KIND_GPU/,
    );
    expect(failing.configs[1]?.measurements).toEqual([]);
    expect(failing.best?.variant).toBe('tune_restore_config_default');
    expect(settingsOf(await client.getModelConfig('tune_restore'))).toEqual(before);
    await client.loadModel('tune_restore');
  });
});
