// Synthetic runs for the report tests: plain data with known figures, so the expected text,
// columns and sums can be worked out by hand.
import { perfOptions, type PerfOptions } from '../../src/options/perf-options.js';
import type {
  ClientSideStats,
  LoadLevelResult,
  ModelProfile,
  PerfRun,
  RequestRecord,
  ServerSideStats,
} from '../../src/types.js';

export function model(overrides: Partial<ModelProfile> = {}): ModelProfile {
  return {
    name: 'simple',
    version: '',
    maxBatchSize: 8,
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', dims: [16], optional: false, isShapeTensor: false },
      { name: 'INPUT1', datatype: 'INT32', dims: [16], optional: false, isShapeTensor: false },
    ],
    outputs: [],
    decoupled: false,
    sequenceBatching: false,
    dynamicBatching: false,
    responseCacheEnabled: false,
    composingModels: [],
    config: { name: 'simple' },
    ...overrides,
  };
}

export function client(overrides: Partial<ClientSideStats> = {}): ClientSideStats {
  return {
    requestCount: 1000,
    responseCount: 1000,
    errorCount: 0,
    delayedRequestCount: 0,
    sequencePerSecond: 0,
    durationUs: 1_000_000,
    throughput: 1000,
    responseThroughput: 1000,
    avgLatencyUs: 1000.7,
    stdLatencyUs: 120.4,
    minLatencyUs: 700,
    maxLatencyUs: 2400,
    percentileUs: { 50: 950, 90: 1200, 95: 1400, 99: 2000 },
    avgSendUs: 40.9,
    avgRecvUs: 30.2,
    avgResponseWaitUs: 900.5,
    ...overrides,
  };
}

export function server(overrides: Partial<ServerSideStats> = {}): ServerSideStats {
  return {
    inferenceCount: 1200,
    executionCount: 1100,
    successCount: 1200,
    avgRequestLatencyUs: 800.9,
    overheadUs: 50,
    queueUs: 100.3,
    computeInputUs: 20.6,
    computeInferUs: 600.2,
    computeOutputUs: 30.1,
    cacheHitCount: 0,
    cacheHitUs: 0,
    cacheMissCount: 0,
    cacheMissUs: 0,
    composing: [],
    ...overrides,
  };
}

export function level(overrides: Partial<LoadLevelResult> = {}): LoadLevelResult {
  return {
    mode: 'concurrency',
    level: 1,
    stable: true,
    windows: 3,
    client: client(),
    server: server(),
    metrics: undefined,
    generator: { cpuUs: 100_000, cpuUsPerRequest: 100, cpuUtilization: 0.1 },
    records: [],
    ...overrides,
  };
}

export function run(results: LoadLevelResult[], profile: ModelProfile = model()): PerfRun {
  return { model: profile, results, startedAtMs: Date.UTC(2026, 10, 25) };
}

export function options(overrides: Partial<PerfOptions> = {}): PerfOptions {
  return perfOptions({ modelName: 'simple', ...overrides });
}

export function record(startNs: bigint, latencyNs: bigint, step = 0): RequestRecord {
  return {
    startNs,
    endNs: startNs + latencyNs,
    responseNs: [startNs + latencyNs],
    ok: true,
    delayed: false,
    stream: 0,
    step,
  };
}
