/**
 * perf_analyzer's command line: option spellings, defaults, perf_analyzer's checks and conflicts
 * with its messages, and unsupported options refused by name.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PerfError } from '../src/errors.js';
import { parsePerfArgs, perfUsage } from '../src/options/parse-perf-args.js';
import { PERF_DEFAULTS, type PerfOptions } from '../src/options/perf-options.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'perf-args-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function parse(...argv: string[]): PerfOptions {
  const parsed = parsePerfArgs(argv);
  if ('help' in parsed) throw new Error('unexpected help');
  return parsed;
}

function usageError(...argv: string[]): string {
  try {
    parsePerfArgs(argv);
  } catch (error) {
    expect(error).toBeInstanceOf(PerfError);
    expect((error as PerfError).code).toBe('USAGE');
    return (error as PerfError).message;
  }
  throw new Error(`no error for ${argv.join(' ')}`);
}

describe('parsePerfArgs', () => {
  it("gives perf_analyzer's defaults for -m alone", () => {
    const o = parse('-m', 'simple');
    expect(o.modelName).toBe('simple');
    expect(o.url).toBe('localhost:8000');
    expect(o.protocol).toBe('http');
    expect(o.load).toEqual({ kind: 'concurrency', range: { start: 1, end: 1, step: 1 } });
    expect(o.maxThreads).toBe(16);
    expect(o.measurementIntervalMs).toBe(5000);
    expect(o.measurementMode).toBe('time_windows');
    expect(o.stabilityPercentage).toBe(10);
    expect(o.maxTrials).toBe(10);
    expect(o.percentile).toBeUndefined();
    expect(o.inputData).toEqual(['random']);
    expect(o.sequenceIdRange).toEqual({ start: 1, end: undefined });
    expect(o.metricsUrl).toBe(PERF_DEFAULTS.metricsUrl);
  });

  it('reads short, long, --opt=value, attached and grouped forms', () => {
    const o = parse(
      '-msimple',
      '-x',
      '2',
      '-b4',
      '-va',
      '--concurrency-range=2:8:2',
      '-p',
      '800',
      '--percentile=95',
      '-s',
      '5.5',
      '-r',
      '3',
      '-i',
      'gRPC',
      '--streaming',
      '-H',
      'X-Trace: abc',
      '-H',
      'Auth:token',
      '--latency-threshold',
      '50',
    );
    expect(o.modelName).toBe('simple');
    expect(o.modelVersion).toBe('2');
    expect(o.batchSize).toBe(4);
    expect(o.verbose).toBe(true);
    expect(o.async).toBe(true);
    expect(o.load).toEqual({ kind: 'concurrency', range: { start: 2, end: 8, step: 2 } });
    expect(o.measurementIntervalMs).toBe(800);
    expect(o.percentile).toBe(95);
    expect(o.stabilityPercentage).toBe(5.5);
    expect(o.maxTrials).toBe(3);
    expect(o.protocol).toBe('grpc');
    expect(o.url).toBe('localhost:8001');
    expect(o.streaming).toBe(true);
    expect(o.headers).toEqual({ 'X-Trace': 'abc', Auth: 'token' });
    expect(o.latencyThresholdMs).toBe(50);
    expect(o.maxThreads).toBe(16);
  });

  it('a single concurrency value is one level; max threads follow a large end', () => {
    expect(parse('-m', 'm', '--concurrency-range', '4').load).toEqual({
      kind: 'concurrency',
      range: { start: 4, end: 4, step: 1 },
    });
    expect(parse('-m', 'm', '--concurrency-range', '1:32:8').maxThreads).toBe(32);
    expect(parse('-m', 'm', '--concurrency-range', '1:32', '--max-threads', '3').maxThreads).toBe(3);
  });

  it('request rate and intervals modes: floats, distribution, intervals read from the file, 4 threads', async () => {
    const o = parse('-m', 'm', '--request-rate-range', '2.5:10:2.5', '--request-distribution', 'poisson');
    expect(o.load).toEqual({
      kind: 'request_rate',
      range: { start: 2.5, end: 10, step: 2.5 },
      distribution: 'poisson',
    });
    expect(o.maxThreads).toBe(4);
    const file = join(dir, 'intervals.txt');
    await writeFile(file, '1000\n2000\n\n500\n');
    const i = parse('-m', 'm', '--request-intervals', file);
    expect(i.load).toEqual({ kind: 'request_intervals', intervalsUs: [1000, 2000, 500] });
    expect(i.maxThreads).toBe(4);
    await writeFile(join(dir, 'bad-intervals.txt'), '100\nabc\n');
    expect(usageError('-m', 'm', '--request-intervals', join(dir, 'bad-intervals.txt'))).toMatch(/Line 2/);
    await writeFile(join(dir, 'empty.txt'), '\n');
    expect(usageError('-m', 'm', '--request-intervals', join(dir, 'empty.txt'))).toMatch(/is empty/);
    expect(usageError('-m', 'm', '--request-intervals', join(dir, 'missing.txt'))).toBe(
      'Failed to parse --request-intervals. The value must be a valid file path',
    );
  });

  it('input data: zero, random, files and directories; repeatable; bad values refused', async () => {
    const json = join(dir, 'data.json');
    await writeFile(json, '{"data":[]}');
    expect(parse('-m', 'm', '--input-data', 'zero').inputData).toEqual(['zero']);
    expect(parse('-m', 'm', '--input-data', 'random').inputData).toEqual(['random']);
    expect(parse('-m', 'm', '--input-data', json, '--input-data', dir).inputData).toEqual([json, dir]);
    expect(parse('-m', 'm', '--input-data', 'random', '--input-data', json).inputData).toEqual([json]);
    expect(usageError('-m', 'm', '--input-data', 'nope')).toBe(
      "Failed to parse --input-data. Unsupported type provided: 'nope'. The available options are 'zero', 'random', path to a directory, or a json file.",
    );
    expect(usageError('-m', 'm', '--input-data', 'zero', '--input-data', json)).toMatch(/cannot be combined/);
  });

  it('shapes, strings, shared memory, formats, request parameters, metrics, sequences, seed', () => {
    const o = parse(
      '-m',
      'm',
      '-i',
      'grpc',
      '--shape',
      'IMAGE:3,224,224',
      '--shape',
      'ns:name:2',
      '--string-length',
      '16',
      '--string-data',
      'hello',
      '--shared-memory',
      'system',
      '--output-shared-memory-size',
      '4096',
      '--input-tensor-format',
      'JSON',
      '--output-tensor-format',
      'json',
      '--request-parameter',
      'max_tokens:16:int',
      '--request-parameter',
      'greedy:true:BOOL',
      '--request-parameter',
      'tag:abc:string',
      '--grpc-compression-algorithm',
      'gzip',
      '--collect-metrics',
      '-u',
      'server:8001',
      '--num-of-sequences',
      '6',
      '--sequence-length',
      '5',
      '--sequence-length-variation',
      '0',
      '--sequence-id-range',
      '10:20',
      '--serial-sequences',
      '--seed',
      '42',
      '-f',
      'out.csv',
      '--verbose-csv',
      '--warmup-request-count',
      '10',
    );
    expect([...o.shapes]).toEqual([
      ['IMAGE', [3, 224, 224]],
      ['ns:name', [2]],
    ]);
    expect(o.stringLength).toBe(16);
    expect(o.stringData).toBe('hello');
    expect(o.sharedMemory).toBe('system');
    expect(o.outputSharedMemorySize).toBe(4096);
    expect(o.inputTensorFormat).toBe('json');
    expect(o.outputTensorFormat).toBe('json');
    expect(o.requestParameters).toEqual([
      { name: 'max_tokens', value: 16 },
      { name: 'greedy', value: true },
      { name: 'tag', value: 'abc' },
    ]);
    expect(o.grpcCompression).toBe('gzip');
    expect(o.collectMetrics).toBe(true);
    expect(o.metricsUrl).toBe('server:8002/metrics');
    expect(o.numOfSequences).toBe(6);
    expect(o.sequenceLength).toBe(5);
    expect(o.sequenceLengthVariation).toBe(0);
    expect(o.sequenceIdRange).toEqual({ start: 10, end: 20 });
    expect(o.serialSequences).toBe(true);
    expect(o.seed).toBe(42);
    expect(o.latencyReportFile).toBe('out.csv');
    expect(o.verboseCsv).toBe(true);
    expect(o.warmupRequestCount).toBe(10);
  });

  it('--request-count switches to one count window of that many requests', () => {
    const o = parse('-m', 'm', '--request-count', '200');
    expect(o.requestCount).toBe(200);
    expect(o.measurementMode).toBe('count_windows');
    expect(o.measurementRequestCount).toBe(200);
  });

  it("-h / --help anywhere asks for help; the help text names perf_analyzer's options", () => {
    expect(parsePerfArgs(['--help'])).toEqual({ help: true });
    expect(parsePerfArgs(['-m', 'x', '-h'])).toEqual({ help: true });
    const text = perfUsage();
    for (const flag of [
      '--concurrency-range',
      '--request-rate-range',
      '--input-data',
      '--percentile',
      '-b',
    ]) {
      expect(text).toContain(flag);
    }
  });

  it("refuses bad values with perf_analyzer's messages", () => {
    expect(usageError('-b', '1')).toBe('Failed to parse -m (model name). The value must be specified.');
    expect(usageError('-m', 'm', '-b', '0')).toBe('Failed to parse -b (batch size). The value must be > 0.');
    expect(usageError('-m', 'm', '-b', 'x')).toBe('Failed to parse -b. Invalid value provided: x');
    expect(usageError('-m', 'm', '-i', 'tcp')).toBe(
      'Failed to parse -i (protocol). The value should be either HTTP or gRPC.',
    );
    expect(usageError('-m', 'm', '--percentile', '100')).toBe(
      'Failed to parse --percentile. The value must be -1 for not reporting or in range (0, 100).',
    );
    expect(parse('-m', 'm', '--percentile', '-1').percentile).toBeUndefined();
    expect(usageError('-m', 'm', '-p', '0')).toBe(
      'Failed to parse --measurement-interval (-p). The value must be > 0 msec.',
    );
    expect(usageError('-m', 'm', '-r', '0')).toBe(
      'Failed to parse --max-trials (-r). The value must be > 0.',
    );
    expect(usageError('-m', 'm', '-s', '-1')).toBe(
      'Failed to parse --stability-percentage (-s). The value must be >= 0.0.',
    );
    expect(usageError('-m', 'm', '--concurrency-range', '1:2:3:4')).toBe(
      'Failed to parse --concurrency-range. The value does not match <start:end:step>.',
    );
    expect(usageError('-m', 'm', '--concurrency-range', '0:4')).toBe(
      'The start of the search range must be > 0',
    );
    expect(usageError('-m', 'm', '--concurrency-range', '4:2')).toMatch(/<end> must be >= <start>/);
    expect(usageError('-m', 'm', '--concurrency-range', '1:4:0')).toMatch(/<step> value must be > 0/);
    expect(usageError('-m', 'm', '--request-rate-range', '0')).toBe(
      'Failed to parse --request-rate-range. The start of the search range must be > 0.',
    );
    expect(usageError('-m', 'm', '--measurement-mode', 'windows')).toBe(
      "Failed to parse --measurement-mode. Unsupported type provided: 'windows'. The available options are 'time_windows' or 'count_windows'.",
    );
    expect(usageError('-m', 'm', '--shape', 'IN')).toBe(
      'Failed to parse --shape. There must be a colon after input name.',
    );
    expect(usageError('-m', 'm', '--shape', 'IN:3,0')).toBe(
      'Failed to parse --shape. The dimensions of input tensor must be > 0.',
    );
    expect(usageError('-m', 'm', '--sequence-id-range', '5:2')).toBe(
      "Failed to parse --sequence-id-range. The 'end' value must be greater than 'start' value.",
    );
    expect(usageError('-m', 'm', '-i', 'grpc', '--request-parameter', 'a:b')).toBe(
      'Failed to parse --request-parameter. The value does not match <name:value:type>.',
    );
    expect(usageError('-m', 'm', '-H', 'NoColon')).toMatch(/'Name: value'/);
    expect(usageError('-m', 'm', '--profile-export-file', dir)).toBe(
      'Failed to parse --profile-export-file. Path must not already exist.',
    );
    expect(usageError('-m', 'm', '-b')).toBe("option requires an argument -- 'b'");
    expect(usageError('-m', 'm', '--concurrency-range')).toBe(
      "option '--concurrency-range' requires an argument",
    );
    expect(usageError('-m', 'm', '--sync=1')).toBe("option '--sync' doesn't allow an argument");
  });

  it('refuses conflicting options as perf_analyzer does', () => {
    expect(usageError('-m', 'm', '--concurrency-range', '1:4', '--request-rate-range', '10')).toBe(
      'Cannot specify more then one inference load mode. Please choose only one of the following modes: --concurrency-range, --request-rate-range, or --request-intervals.',
    );
    expect(usageError('-m', 'm', '--concurrency-range', '1:0')).toBe(
      'The end of the search range and the latency limit can not be both 0 (or 0.0) simultaneously',
    );
    expect(parse('-m', 'm', '--concurrency-range', '1:0:2', '-l', '30').load).toEqual({
      kind: 'concurrency',
      range: { start: 1, end: 0, step: 2 },
    });
    expect(usageError('-m', 'm', '-a', '--sync')).toBe('Cannot specify --async and --sync simultaneously.');
    expect(usageError('-m', 'm', '--streaming')).toBe('Streaming is only allowed with gRPC protocol.');
    expect(usageError('-m', 'm', '--grpc-compression-algorithm', 'gzip')).toBe(
      'Using compression algorithm is only allowed with gRPC protocol.',
    );
    expect(usageError('-m', 'm', '--request-parameter', 'a:1:int')).toBe(
      'The --request-parameter option is currently only supported by gRPC protocol.',
    );
    expect(usageError('-m', 'm', '--concurrency-range', '1:4', '--warmup-request-count', '5')).toBe(
      '--warmup-request-count not supported with multiple concurrency values in one run',
    );
    expect(usageError('-m', 'm', '--concurrency-range', '8', '--request-count', '4')).toBe(
      '--request-count can not be less than concurrency',
    );
    expect(usageError('-m', 'm', '--request-rate-range', '1:5', '--request-count', '40')).toBe(
      '--request-count not supported with multiple request rate values in one run',
    );
    expect(usageError('-m', 'm', '--metrics-url', 'h:8002/metrics')).toBe(
      'Must specify --collect-metrics when using the --metrics-url option.',
    );
    expect(usageError('-m', 'm', '--metrics-interval', '500')).toBe(
      'Must specify --collect-metrics when using the --metrics-interval option.',
    );
  });

  it('refuses options perf_analyzer has and this tool does not support, by name', () => {
    expect(usageError('-m', 'm', '--shared-memory', 'cuda')).toMatch(
      /cuda is not supported: there is no CUDA in Node/,
    );
    expect(usageError('-m', 'm', '--service-kind', 'openai')).toMatch(
      /--service-kind openai is not supported/,
    );
    expect(parse('-m', 'm', '--service-kind=triton').modelName).toBe('m');
    expect(usageError('-m', 'm', '--ssl-grpc-use-ssl')).toBe(
      '--ssl-grpc-use-ssl is not supported: SSL/TLS options are not implemented',
    );
    expect(usageError('-m', 'm', '--binary-search')).toMatch(/--binary-search is not supported/);
    expect(usageError('-m', 'm', '--periodic-concurrency-range', '1:4')).toMatch(/not supported/);
    expect(usageError('-m', 'm', '--trace-level', 'TIMESTAMPS')).toMatch(/not supported/);
    expect(usageError('-m', 'm', '-t', '4')).toMatch(
      /deprecated -t is not supported; use --concurrency-range/,
    );
    expect(usageError('-m', 'm', '--no-such-option')).toBe("unrecognized option '--no-such-option'");
    expect(usageError('-m', 'm', '-Q')).toBe("invalid option -- 'Q'");
    expect(usageError('-m', 'm', 'stray')).toMatch(/unexpected argument 'stray'/);
  });
});
