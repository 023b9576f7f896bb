import type { ModelConfig } from '@tritonserver-ts/client';
import { describe, expect, it } from 'vitest';

import { PerfError } from '../src/errors.js';
import {
  applySettings,
  describeSettings,
  enumerateSearchSpace,
  sameSettings,
  settingsOf,
} from '../src/tune/search-space.js';
import type { SearchSpaceOptions } from '../src/tune/tune-options.js';
import { powersOfTwo, TUNE_DEFAULTS, tuneOptions } from '../src/tune/tune-options.js';

const IDENTITY: ModelConfig = {
  name: 'm',
  backend: 'identity',
  max_batch_size: 4,
  input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
  output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
  instance_group: [{ name: 'm_0', kind: 'KIND_CPU', count: 1, gpus: [] }],
  parameters: { execute_delay_ms: { string_value: '40' } },
};

const ONNX: ModelConfig = { ...IDENTITY, name: 'o', backend: 'onnxruntime' };

const OFF = { enabled: false } as const;
const ON = { enabled: true, preferredBatchSize: [], maxQueueDelayMicroseconds: 0 } as const;

function space(overrides: Partial<SearchSpaceOptions>): SearchSpaceOptions {
  return { ...TUNE_DEFAULTS.space, ...overrides };
}

describe('tuner search space', () => {
  it('enumerates instances × max batch × dynamic batching, the default first, Model Analyzer names', () => {
    const s = enumerateSearchSpace(
      IDENTITY,
      space({ instanceCounts: [1, 2], maxBatchSizes: [1, 4], dynamicBatching: [OFF, ON], concurrency: [8] }),
    );
    expect(s.variants.map((v) => v.name)).toEqual([
      'm_config_default',
      'm_config_0',
      'm_config_1',
      'm_config_2',
      'm_config_3',
      'm_config_4',
      'm_config_5',
      'm_config_6',
    ]);
    // 2 × 2 × 2 = 8 combinations, one of them (1 instance, max batch 4, off) is the default.
    const keys = s.variants.map(
      (v) =>
        `${String(v.settings.instanceCount)}/${String(v.settings.maxBatchSize)}/${v.settings.dynamicBatching.enabled ? 'on' : 'off'}`,
    );
    expect(keys).toEqual([
      '1/4/off',
      '1/1/off',
      '1/1/on',
      '1/4/on',
      '2/1/off',
      '2/1/on',
      '2/4/off',
      '2/4/on',
    ]);
    expect(s.variants[0]?.isDefault).toBe(true);
    expect(s.concurrency).toEqual([8]);
    expect(s.skipped).toEqual([]);
  });

  it('builds each config from the base with overrides, leaving the base untouched', () => {
    const s = enumerateSearchSpace(
      IDENTITY,
      space({
        instanceCounts: [3],
        maxBatchSizes: [8],
        dynamicBatching: [{ enabled: true, preferredBatchSize: [4, 8], maxQueueDelayMicroseconds: 500 }],
      }),
    );
    const v = s.variants[1];
    expect(v?.config).toEqual({
      ...IDENTITY,
      max_batch_size: 8,
      instance_group: [{ name: 'm_0', kind: 'KIND_CPU', count: 3, gpus: [] }],
      dynamic_batching: { preferred_batch_size: [4, 8], max_queue_delay_microseconds: 500 },
    });
    expect(IDENTITY.instance_group?.[0]?.count).toBe(1);
    expect(IDENTITY.dynamic_batching).toBeUndefined();
    // What the server then reports reads back as the same settings.
    expect(settingsOf(v?.config as ModelConfig)).toEqual(v?.settings);
    // "off" removes a base config's dynamic batching.
    const withDb = applySettings(
      { ...IDENTITY, dynamic_batching: { max_queue_delay_microseconds: 7 } },
      {
        ...settingsOf(IDENTITY),
        dynamicBatching: OFF,
      },
    );
    expect(withDb).not.toHaveProperty('dynamic_batching');
  });

  it('compares served settings as Triton normalizes them (no preferred sizes → [max_batch_size])', () => {
    const sent = settingsOf({ ...IDENTITY, dynamic_batching: { max_queue_delay_microseconds: 100 } });
    const served = settingsOf({
      ...IDENTITY,
      dynamic_batching: { preferred_batch_size: [4], max_queue_delay_microseconds: 100 },
    });
    expect(sameSettings(sent, served)).toBe(true);
    expect(sameSettings(sent, { ...served, instanceCount: 2 })).toBe(false);
    expect(sameSettings({ ...sent, kind: 'KIND_AUTO' }, served)).toBe(true);
    // The same normalization dedupes the sweep: "on, no preferred sizes" is the default here.
    const s = enumerateSearchSpace(
      { ...IDENTITY, dynamic_batching: { preferred_batch_size: [4] } },
      space({ instanceCounts: [1], maxBatchSizes: [4], dynamicBatching: [ON] }),
    );
    expect(s.variants.map((v) => v.name)).toEqual(['m_config_default']);
  });

  it('skips invalid combinations: preferred sizes above max_batch_size, batching for max_batch_size 0', () => {
    const s = enumerateSearchSpace(
      IDENTITY,
      space({
        instanceCounts: [1],
        maxBatchSizes: [2, 8],
        dynamicBatching: [OFF, { enabled: true, preferredBatchSize: [4], maxQueueDelayMicroseconds: 0 }],
      }),
    );
    expect(s.variants.map((v) => describeSettings(v.settings))).toEqual([
      '1 CPU instance, max batch 4, dynamic batching off',
      '1 CPU instance, max batch 2, dynamic batching off',
      '1 CPU instance, max batch 8, dynamic batching off',
      '1 CPU instance, max batch 8, dynamic batching (preferred [4])',
    ]);
    expect(s.skipped.map((k) => k.reason)).toEqual([
      'preferred batch size 4 is larger than max_batch_size 2',
    ]);

    const noBatch = enumerateSearchSpace(
      { ...IDENTITY, max_batch_size: 0 },
      space({ instanceCounts: [1, 2], maxBatchSizes: [1, 4, 8], dynamicBatching: [OFF, ON] }),
    );
    // max_batch_size stays 0: only the instance count varies.
    expect(noBatch.variants.map((v) => [v.settings.instanceCount, v.settings.maxBatchSize])).toEqual([
      [1, 0],
      [2, 0],
    ]);
    expect(noBatch.skipped).toHaveLength(2);
    expect(noBatch.skipped[0]?.reason).toMatch(/max_batch_size 0: the model cannot batch/);
  });

  it('sweeps intra_op_thread_count only for onnxruntime models', () => {
    const onnx = enumerateSearchSpace(
      ONNX,
      space({ instanceCounts: [1], maxBatchSizes: [4], dynamicBatching: [OFF], intraOpThreadCounts: [1, 2] }),
    );
    expect(onnx.variants.map((v) => v.settings.intraOpThreadCount)).toEqual([undefined, 1, 2]);
    expect(onnx.variants[2]?.config['parameters']).toEqual({
      execute_delay_ms: { string_value: '40' },
      intra_op_thread_count: { string_value: '2' },
    });
    const identity = enumerateSearchSpace(
      IDENTITY,
      space({
        instanceCounts: [1, 2],
        maxBatchSizes: [4],
        dynamicBatching: [OFF],
        intraOpThreadCounts: [1, 2],
      }),
    );
    expect(identity.variants.map((v) => v.settings.intraOpThreadCount)).toEqual([undefined, undefined]);
  });

  it('keeps sequence batching, refuses ensembles, and bounds the sweep', () => {
    const seq = enumerateSearchSpace(
      { ...IDENTITY, sequence_batching: { max_sequence_idle_microseconds: 1000 } },
      space({ instanceCounts: [1, 2], maxBatchSizes: [4], dynamicBatching: [OFF, ON] }),
    );
    expect(seq.variants.map((v) => v.settings.dynamicBatching.enabled)).toEqual([false, false]);
    expect(seq.variants[1]?.config['sequence_batching']).toEqual({ max_sequence_idle_microseconds: 1000 });

    let ensembleError: unknown;
    try {
      enumerateSearchSpace(
        { ...IDENTITY, platform: 'ensemble', ensemble_scheduling: { step: [] } },
        space({}),
      );
    } catch (e) {
      ensembleError = e;
    }
    expect(ensembleError).toBeInstanceOf(PerfError);
    expect((ensembleError as PerfError).code).toBe('TUNE');
    expect((ensembleError as PerfError).message).toMatch(/'m' is an ensemble/);
    expect(() =>
      enumerateSearchSpace(
        IDENTITY,
        space({ instanceCounts: [1, 2, 3, 4, 5], maxBatchSizes: powersOfTwo(1, 128), maxConfigs: 64 }),
      ),
    ).toThrow(/the sweep has 80 configurations, more than the limit of 64/);
  });

  it('measures only the default with the search disabled, and validates values', () => {
    const s = enumerateSearchSpace(IDENTITY, space({ searchDisabled: true, concurrency: [4, 1, 4, 2] }));
    expect(s.variants.map((v) => v.name)).toEqual(['m_config_default']);
    expect(s.concurrency).toEqual([1, 2, 4]);
    for (const bad of [
      { concurrency: [0] },
      { concurrency: [] },
      { instanceCounts: [1.5] },
      { maxBatchSizes: [-1] },
    ]) {
      let error: unknown;
      try {
        enumerateSearchSpace(IDENTITY, space(bad));
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(PerfError);
      expect((error as PerfError).code).toBe('USAGE');
    }
  });

  it("has Model Analyzer's power-of-two sweeps and merges partial options", () => {
    expect(powersOfTwo(1, 128)).toEqual([1, 2, 4, 8, 16, 32, 64, 128]);
    expect(powersOfTwo(3, 20)).toEqual([4, 8, 16]);
    const o = tuneOptions({
      modelName: 'm',
      url: 'localhost:8000',
      space: { instanceCounts: [4] },
      perf: { batchSize: 2 },
    });
    expect(o.space.instanceCounts).toEqual([4]);
    expect(o.space.concurrency).toEqual([1, 2, 4, 8, 16]);
    expect(o.perf).toEqual({ measurementIntervalMs: 1000, maxTrials: 5, batchSize: 2 });
    expect(o.latencyMetric).toBe('p99');
  });
});
