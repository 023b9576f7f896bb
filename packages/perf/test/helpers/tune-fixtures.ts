/** Hand-made tuner measurements and results for the pure tuner tests (no server involved). */
import type { ModelConfig } from '@tritonserver-ts/client';

import type { VariantSettings } from '../../src/tune/search-space.js';
import { enumerateSearchSpace } from '../../src/tune/search-space.js';
import type { TuneMeasurement } from '../../src/tune/select.js';
import { rankConfigs, satisfiesConstraints, selectBest } from '../../src/tune/select.js';
import type { TuneConstraints } from '../../src/tune/tune-options.js';
import { tuneOptions } from '../../src/tune/tune-options.js';
import type { TuneResult } from '../../src/tune/tuner.js';

/** Settings with `instances` CPU instances and max batch `maxBatch` (dynamic batching when `db`). */
export function settings(instances: number, maxBatch: number, db = false): VariantSettings {
  return {
    instanceCount: instances,
    kind: 'KIND_CPU',
    maxBatchSize: maxBatch,
    dynamicBatching: db
      ? { enabled: true, preferredBatchSize: [], maxQueueDelayMicroseconds: 0 }
      : { enabled: false },
    intraOpThreadCount: undefined,
  };
}

/** A measurement: throughput and p99 given, the other latencies derived (avg = p99 / 2). */
export function measurement(
  variant: string,
  s: VariantSettings,
  concurrency: number,
  throughput: number,
  p99: number,
  constraints: TuneConstraints = {
    latencyBudgetMs: undefined,
    latencyMetric: 'p99',
    minThroughput: undefined,
  },
): TuneMeasurement {
  const partial = {
    variant,
    settings: s,
    concurrency,
    batchSize: 1,
    throughput,
    latencyMs: { p50: p99 / 2, p90: p99 * 0.8, p95: p99 * 0.9, p99, avg: p99 / 2 },
    serverQueueMs: 1,
    serverComputeInputMs: 0.1,
    serverComputeInferMs: 5,
    serverComputeOutputMs: 0.1,
    clientSendRecvMs: 0.2,
    generatorCpuUsPerRequest: 50,
    generatorCpuUtilization: 0.1,
    requestCount: 100,
    errorCount: 0,
    stable: true,
  };
  return { ...partial, satisfiesConstraints: satisfiesConstraints(partial, constraints) };
}

export const BASE: ModelConfig = {
  name: 'm',
  backend: 'identity',
  max_batch_size: 4,
  input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
  output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
  instance_group: [{ kind: 'KIND_CPU', count: 1 }],
};

/** A whole result over `BASE` with 1–2 instances × max batch 4 × dynamic batching off/on at concurrency 1 and 8. */
export function sampleResult(constraints: Partial<TuneConstraints> = {}): TuneResult {
  const options = tuneOptions({
    modelName: 'm',
    url: 'localhost:8000',
    ...constraints,
    space: {
      instanceCounts: [1, 2],
      maxBatchSizes: [4],
      dynamicBatching: [
        { enabled: false },
        { enabled: true, preferredBatchSize: [], maxQueueDelayMicroseconds: 0 },
      ],
      concurrency: [1, 8],
    },
  });
  const space = enumerateSearchSpace(BASE, options.space);
  // Per-execution cost 40 ms: throughput = min(concurrency, capacity) / 40 ms, latency = concurrency / throughput.
  const capacity = (s: VariantSettings): number =>
    s.instanceCount * (s.dynamicBatching.enabled ? s.maxBatchSize : 1);
  const measurements = space.variants.flatMap((v) =>
    space.concurrency.map((c) => {
      const tput = (Math.min(c, capacity(v.settings)) / 40) * 1000;
      return measurement(v.name, v.settings, c, tput, (c / tput) * 1000 * 1.05, options);
    }),
  );
  const best = selectBest(measurements, options.tieTolerancePercent, options.requireStable);
  return {
    options,
    modelName: 'm',
    originalConfig: BASE,
    space,
    configs: space.variants.map((variant) => ({
      variant,
      measurements: measurements.filter((m) => m.variant === variant.name),
      error: undefined,
      skippedConcurrency: [],
    })),
    measurements,
    ranking: rankConfigs(measurements, options.tieTolerancePercent, options.requireStable),
    best,
    bestVariant: space.variants.find((v) => v.name === best?.variant),
    startedAtMs: Date.UTC(2026, 10, 25, 21, 0, 0),
    durationMs: 12_345,
    aborted: false,
    restoreError: undefined,
  };
}
