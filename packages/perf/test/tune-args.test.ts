import { describe, expect, it } from 'vitest';

import { PerfError } from '../src/errors.js';
import {
  DEFAULT_OUTPUT_DIR,
  parseTuneArgs,
  tuneUsage,
  type TuneCliOptions,
} from '../src/tune/parse-tune-args.js';

function parse(argv: string[]): TuneCliOptions {
  const parsed = parseTuneArgs(argv);
  if ('help' in parsed) throw new Error('unexpected help');
  return parsed;
}

function usageError(argv: string[]): string {
  try {
    parseTuneArgs(argv);
  } catch (error) {
    expect(error).toBeInstanceOf(PerfError);
    expect((error as PerfError).code).toBe('USAGE');
    return (error as PerfError).message;
  }
  throw new Error(`no error for ${argv.join(' ')}`);
}

describe('model-analyzer-ts command line', () => {
  it('has defaults: http on localhost:8000, p99, 1-2 instances, max batch 1-8, concurrency 1-16, off/on', () => {
    const o = parse(['profile', '-m', 'simple']);
    expect(o.outputDir).toBe(DEFAULT_OUTPUT_DIR);
    expect(o.tune).toMatchObject({
      modelName: 'simple',
      url: 'localhost:8000',
      protocol: 'http',
      latencyMetric: 'p99',
      latencyBudgetMs: undefined,
      earlyExit: true,
      space: {
        instanceCounts: [1, 2],
        maxBatchSizes: [1, 2, 4, 8],
        concurrency: [1, 2, 4, 8, 16],
        dynamicBatching: [
          { enabled: false },
          { enabled: true, preferredBatchSize: [], maxQueueDelayMicroseconds: 0 },
        ],
        intraOpThreadCounts: [],
        searchDisabled: false,
      },
    });
    // perf defaults for each measurement: shorter windows and fewer trials than perf_analyzer's.
    expect(o.tune.perf.measurementIntervalMs).toBe(1000);
    expect(o.tune.perf.maxTrials).toBe(5);
    expect(o.tune.perf.stabilityPercentage).toBe(10);
    // 'profile' may be left out; grpc takes its own default port.
    expect(parse(['-m', 'simple', '-i', 'grpc']).tune.url).toBe('localhost:8001');
    expect(
      parse(['-m', 'simple', '--client-protocol', 'grpc', '--triton-grpc-endpoint', 'h:9']).tune.url,
    ).toBe('h:9');
  });

  it("takes Model Analyzer's names and the short lists", () => {
    const o = parse([
      'profile',
      '--profile-models',
      'm',
      '-u',
      'host:1234',
      '--latency-budget',
      '50',
      '--latency-metric',
      'p95',
      '--min-throughput',
      '10',
      '--run-config-search-max-instance-count',
      '3',
      '--run-config-search-min-model-batch-size',
      '2',
      '--run-config-search-max-model-batch-size',
      '16',
      '--run-config-search-max-concurrency',
      '32',
      '--export-path',
      '/tmp/x',
    ]);
    expect(o.tune).toMatchObject({
      url: 'host:1234',
      latencyBudgetMs: 50,
      latencyMetric: 'p95',
      minThroughput: 10,
    });
    expect(o.tune.space.instanceCounts).toEqual([1, 2, 3]);
    expect(o.tune.space.maxBatchSizes).toEqual([2, 4, 8, 16]);
    expect(o.tune.space.concurrency).toEqual([1, 2, 4, 8, 16, 32]);
    expect(o.outputDir).toBe('/tmp/x');

    const l = parse([
      '-m',
      'm',
      '--latency-budget-ms=20',
      '--max-instance-count',
      '2',
      '--max-batch-sizes',
      '1,4,8',
      '--concurrency',
      '1,3',
      '--output-dir',
      'out',
      '--intra-op-thread-counts',
      '1,2',
      '--run-config-search-disable',
      '--early-exit-disable',
      '--allow-unstable',
    ]);
    expect(l.tune.latencyBudgetMs).toBe(20);
    expect(l.tune.space).toMatchObject({
      instanceCounts: [1, 2],
      maxBatchSizes: [1, 4, 8],
      concurrency: [1, 3],
      intraOpThreadCounts: [1, 2],
      searchDisabled: true,
    });
    expect(l.tune.earlyExit).toBe(false);
    expect(l.tune.requireStable).toBe(false);
    expect(parse(['-m', 'm']).tune.requireStable).toBe(true);
    expect(l.outputDir).toBe('out');
  });

  it('builds the dynamic batching choices from preferred sizes × queue delays', () => {
    const o = parse([
      '-m',
      'm',
      '--preferred-batch-sizes',
      '4',
      '--preferred-batch-sizes',
      '2,4',
      '--max-queue-delay-microseconds',
      '0,500',
    ]);
    expect(o.tune.space.dynamicBatching).toEqual([
      { enabled: false },
      { enabled: true, preferredBatchSize: [4], maxQueueDelayMicroseconds: 0 },
      { enabled: true, preferredBatchSize: [4], maxQueueDelayMicroseconds: 500 },
      { enabled: true, preferredBatchSize: [2, 4], maxQueueDelayMicroseconds: 0 },
      { enabled: true, preferredBatchSize: [2, 4], maxQueueDelayMicroseconds: 500 },
    ]);
    expect(parse(['-m', 'm', '--dynamic-batching', 'on']).tune.space.dynamicBatching).toEqual([
      { enabled: true, preferredBatchSize: [], maxQueueDelayMicroseconds: 0 },
    ]);
  });

  it("forwards perf_analyzer's options to the perf engine's parser, also after --", () => {
    const o = parse([
      '-m',
      'm',
      '-b',
      '2',
      '-p',
      '500',
      '--shape',
      'INPUT0:4',
      '--',
      '--percentile',
      '95',
      '-r',
      '7',
    ]);
    expect(o.tune.perf.batchSize).toBe(2);
    expect(o.tune.perf.measurementIntervalMs).toBe(500);
    expect(o.tune.perf.maxTrials).toBe(7);
    expect(o.tune.perf.percentile).toBe(95);
    expect(o.tune.perf.shapes?.get('INPUT0')).toEqual([4]);
    expect(o.tune.perf).not.toHaveProperty('load');
    expect(o.tune.perf).not.toHaveProperty('modelName');
  });

  it('refuses bad command lines with a USAGE error', () => {
    expect(usageError(['profile'])).toMatch(/the model to profile is missing/);
    expect(usageError(['-m', 'a,b'])).toMatch(/one model at a time/);
    expect(usageError(['-m', 'm', '--bogus'])).toMatch(/unrecognized option '--bogus'/);
    expect(usageError(['-m', 'm', 'extra'])).toMatch(/unexpected argument 'extra'/);
    expect(usageError(['-m', 'm', '-i', 'tcp'])).toMatch(/not http or grpc/);
    expect(usageError(['-m', 'm', '--latency-metric', 'p42'])).toMatch(/not one of p50, p90, p95, p99, avg/);
    expect(usageError(['-m', 'm', '--latency-budget', '-1'])).toMatch(/not a positive number/);
    expect(usageError(['-m', 'm', '--concurrency', '1,,2'])).toMatch(/comma-separated list/);
    expect(usageError(['-m', 'm', '--concurrency', '0'])).toMatch(/must be >= 1/);
    expect(usageError(['-m', 'm', '--concurrency', '2', '--run-config-search-max-concurrency', '4'])).toMatch(
      /cannot be combined/,
    );
    expect(
      usageError([
        '-m',
        'm',
        '--run-config-search-min-instance-count',
        '3',
        '--run-config-search-max-instance-count',
        '2',
      ]),
    ).toMatch(/smaller than/);
    expect(usageError(['-m', 'm', '--dynamic-batching', 'off', '--preferred-batch-sizes', '4'])).toMatch(
      /need --dynamic-batching on/,
    );
    expect(usageError(['-m', 'm', '--', '--concurrency-range', '1:4'])).toMatch(/set by the tuner itself/);
    expect(usageError(['-m', 'm', '--latency-budget'])).toMatch(/needs a value/);
    expect(usageError(['-m', 'm', '-p', 'x'])).toBeTruthy(); // the perf parser's own message
  });

  it('prints help', () => {
    expect(parseTuneArgs(['profile', '--help'])).toEqual({ help: true });
    expect(tuneUsage()).toMatch(/^Usage: model-analyzer-ts profile -m <model>/);
    expect(tuneUsage()).toContain('--run-config-search-max-instance-count');
  });
});
