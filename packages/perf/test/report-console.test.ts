// The console report against perf_analyzer's layout (inference_profiler.cc Report*, perf_analyzer.cc
// PrerunReport/WriteReport): exact lines for known synthetic figures.
import { describe, expect, it } from 'vitest';

import {
  formatConsoleReport,
  formatLevel,
  formatSettings,
  formatSummary,
  levelRejection,
} from '../src/report/console-report.js';
import { formatDouble } from '../src/report/format.js';
import { client, level, model, options, run, server } from './helpers/report-fixtures.js';

describe('formatDouble (std::ostream default notation)', () => {
  it('prints six significant digits without trailing zeros, exponent outside 1e-5..1e6', () => {
    expect(formatDouble(1407.8412)).toBe('1407.84');
    expect(formatDouble(69.6)).toBe('69.6');
    expect(formatDouble(100)).toBe('100');
    expect(formatDouble(0)).toBe('0');
    expect(formatDouble(0.5)).toBe('0.5');
    expect(formatDouble(123456.7)).toBe('123457');
    expect(formatDouble(1234567)).toBe('1.23457e+06');
    expect(formatDouble(0.00001234)).toBe('1.234e-05');
    expect(formatDouble(999999.9)).toBe('1e+06');
  });
});

describe('Measurement Settings', () => {
  it('defaults: batch size, service kind, time windows, average latency, window, sync', () => {
    expect(formatSettings(options(), model())).toBe(
      [
        '*** Measurement Settings ***',
        '  Batch size: 1',
        '  Service Kind: Triton',
        '  Using "time_windows" mode for stabilization',
        '  Stabilizing using average latency and throughput',
        '  Measurement window: 5000 msec',
        '  Using synchronous calls for inference',
        '',
        '',
      ].join('\n'),
    );
  });

  it('a concurrency sweep, count windows, percentile, async, warmup and a decoupled model', () => {
    const text = formatSettings(
      options({
        load: { kind: 'concurrency', range: { start: 1, end: 8, step: 2 } },
        latencyThresholdMs: 50,
        measurementMode: 'count_windows',
        measurementRequestCount: 100,
        percentile: 95,
        async: true,
        warmupRequestCount: 1,
      }),
      model({ decoupled: true }),
    );
    expect(text.split('\n')).toEqual([
      '*** Measurement Settings ***',
      '  Batch size: 1',
      '  Service Kind: Triton',
      '  Sending 1 warmup request',
      '  Using "count_windows" mode for stabilization',
      '  Stabilizing using p95 throughput',
      '  Minimum number of samples in each window: 100',
      '  Latency limit: 50 msec',
      '  Concurrency limit: 8 concurrent requests',
      '  Using asynchronous calls for inference',
      '  Detected decoupled model, using the first response for measuring latency',
      '',
      '',
    ]);
  });

  it('request rate with poisson, and --request-count', () => {
    const lines = formatSettings(
      options({
        load: {
          kind: 'request_rate',
          range: { start: 10, end: 40, step: 10 },
          distribution: 'poisson',
        },
        requestCount: 200,
      }),
      model(),
    ).split('\n');
    expect(lines).toContain('  Sending 200 benchmark requests');
    expect(lines).not.toContain('  Measurement window: 5000 msec');
    expect(lines).toContain('  Request Rate limit: 40 requests per seconds');
    expect(lines).toContain('  Using poisson distribution on request generation');
  });
});

describe('one level', () => {
  it('HTTP, non-decoupled: Client and Server blocks with the breakdown', () => {
    expect(formatLevel(options(), model(), level({ level: 4 })).split('\n')).toEqual([
      'Request concurrency: 4',
      '  Client: ',
      '    Request count: 1000',
      '    Throughput: 1000 infer/sec',
      '    Avg latency: 1000 usec (standard deviation 120 usec)',
      '    p50 latency: 950 usec',
      '    p90 latency: 1200 usec',
      '    p95 latency: 1400 usec',
      '    p99 latency: 2000 usec',
      '    Avg HTTP time: 970 usec (send/recv 70 usec + response wait 900 usec)',
      '  Server: ',
      '    Inference count: 1200',
      '    Execution count: 1100',
      '    Successful request count: 1200',
      // overhead = 800 - 100 - floor(20.6 + 600.2 + 30.1) = 800 - 100 - 650
      '    Avg request latency: 800 usec (overhead 50 usec + queue 100 usec + compute input 20 usec + compute infer 600 usec + compute output 30 usec)',
      '',
      '',
    ]);
  });

  it('gRPC, --percentile 85 (no Avg latency line, p85 listed in order), verbose detail', () => {
    const lines = formatLevel(
      options({ protocol: 'grpc', percentile: 85, verbose: true }),
      model(),
      level({
        client: client({ percentileUs: { 50: 950, 85: 1100, 90: 1200, 95: 1400, 99: 2000 } }),
      }),
    ).split('\n');
    expect(lines.slice(0, 11)).toEqual([
      'Request concurrency: 1',
      '  Client: ',
      '    Request count: 1000',
      '    Throughput: 1000 infer/sec',
      '    Avg client overhead: 10.00%',
      '    p50 latency: 950 usec',
      '    p85 latency: 1100 usec',
      '    p90 latency: 1200 usec',
      '    p95 latency: 1400 usec',
      '    p99 latency: 2000 usec',
      '    Avg gRPC time: 970 usec (marshal 40 usec + response wait 900 usec + unmarshal 30 usec)',
    ]);
    const plain = formatLevel(options({ protocol: 'grpc' }), model(), level());
    expect(plain).toContain(
      '    Avg gRPC time: 970 usec ((un)marshal request/response 70 usec + response wait 900 usec)\n',
    );
  });

  it('request rate: the rate line, the delayed-request warning, decoupled response throughput', () => {
    const lines = formatLevel(
      options({
        load: { kind: 'request_rate', range: { start: 50, end: 50, step: 1 }, distribution: 'constant' },
      }),
      model({ decoupled: true }),
      level({
        mode: 'request_rate',
        level: 50,
        client: client({ requestCount: 200, delayedRequestCount: 10, responseThroughput: 3000 }),
      }),
    ).split('\n');
    expect(lines[0]).toBe('Request Rate: 50 inference requests per second');
    expect(lines).toContain(
      '    [WARNING] Perf Analyzer was not able to keep up with the desired request rate. 5.00% of the requests were delayed. ',
    );
    expect(lines).toContain('    Response Throughput: 3000 infer/sec');
    // Decoupled models get no client-library line, only its four-space indentation.
    expect(lines).toContain('    ');
    expect(lines.some((l) => l.includes('Avg HTTP time'))).toBe(false);
  });

  it('response cache enabled: hit/miss counts and latencies', () => {
    const lines = formatLevel(
      options(),
      model({ responseCacheEnabled: true }),
      level({
        server: server({
          successCount: 1000,
          cacheHitCount: 400,
          cacheHitUs: 10,
          cacheMissCount: 600,
          cacheMissUs: 5,
          avgRequestLatencyUs: 600,
        }),
      }),
    ).split('\n');
    // combined = (10*400 + 5*600 + 650.9*600) / (600 + 400) = 397.54 → 397
    expect(lines).toEqual(
      expect.arrayContaining([
        '    Cache hit count: 400',
        '    Cache miss count: 600',
        '    Avg request latency: 600 usec (overhead 103 usec + queue 100 usec + cache hit/miss 397 usec)',
        '      Average Cache Hit Latency: 10 usec',
        '      Average Cache Miss Latency: 655 usec (cache lookup/insertion 5 usec + compute input 20 usec + compute infer 600 usec + compute output 30 usec)',
      ]),
    );
  });

  it('an ensemble: totals over composing models, then each composing model indented', () => {
    const pre = server({
      queueUs: 10,
      computeInputUs: 1,
      computeInferUs: 100,
      computeOutputUs: 2,
      avgRequestLatencyUs: 150,
    });
    const main = server({
      queueUs: 20,
      computeInputUs: 3,
      computeInferUs: 500,
      computeOutputUs: 4,
      avgRequestLatencyUs: 560,
    });
    const lines = formatLevel(
      options(),
      model({ name: 'ens' }),
      level({
        server: server({
          avgRequestLatencyUs: 700,
          composing: [
            { name: 'pre', version: '1', stats: pre },
            { name: 'main', version: '2', stats: main },
          ],
        }),
      }),
    ).split('\n');
    const at = lines.indexOf('  Server: ');
    expect(lines.slice(at + 1, at + 7)).toEqual([
      '    Inference count: 1200',
      '    Execution count: 1100',
      '    Successful request count: 1200',
      // queue 10 + 20, compute 103 + 507
      '    Avg request latency: 700 usec (overhead 60 usec + queue 30 usec + compute 610 usec)',
      '',
      '  Composing models: ',
    ]);
    expect(lines.slice(at + 7, at + 9)).toEqual(['  pre, version: 1', '      Inference count: 1200']);
    expect(lines).toContain(
      '      Avg request latency: 560 usec (overhead 33 usec + queue 20 usec + compute input 3 usec + compute infer 500 usec + compute output 4 usec)',
    );
  });

  it('a server block without successful requests prints only the request count', () => {
    const text = formatLevel(options(), model(), level({ server: server({ successCount: 0 }) }));
    expect(text).toContain('  Server: \n    Request count: 0\n');
    expect(text).not.toContain('Inference count');
  });

  it('--collect-metrics prints the Prometheus block per GPU', () => {
    const text = formatLevel(
      options({ collectMetrics: true }),
      model(),
      level({
        metrics: {
          gpuUtilization: { 'GPU-b': 0.5, 'GPU-a': 0.25 },
          gpuPowerUsage: { 'GPU-a': 70.5 },
          gpuMemoryUsedBytes: { 'GPU-a': 1024 },
          gpuMemoryTotalBytes: { 'GPU-a': 4096 },
          scrapes: 3,
        },
      }),
    );
    expect(text).toContain(
      [
        '  Server Prometheus Metrics: ',
        '    Avg GPU Utilization:',
        '      GPU-a : 25%',
        '      GPU-b : 50%',
        '    Avg GPU Power Usage:',
        '      GPU-a : 70.5 watts',
        '    Max GPU Memory Usage:',
        '      GPU-a : 1024 bytes',
        '    Total GPU Memory:',
        '      GPU-a : 4096 bytes',
      ].join('\n'),
    );
  });

  it('an unstable level: only its level line, left out of the summary; the warning text', () => {
    const opts = options({ load: { kind: 'concurrency', range: { start: 1, end: 2, step: 1 } } });
    const unstable = level({ level: 2, stable: false });
    const result = run([level({ level: 1 }), unstable]);
    const text = formatConsoleReport(opts, result);
    expect(text).toContain(
      '\n\nRequest concurrency: 2\nInferences/Second vs. Client Average Batch Latency\n',
    );
    expect(formatSummary(opts, result).split('\n')).toEqual([
      'Inferences/Second vs. Client Average Batch Latency',
      'Concurrency: 1, throughput: 1000 infer/sec, latency 1000 usec',
      '',
    ]);
    expect(levelRejection(opts, unstable)).toBe(
      'Failed to obtain stable measurement within 10 measurement windows for concurrency 2. Please try to increase the --measurement-interval.',
    );
    expect(levelRejection(options({ measurementMode: 'count_windows' }), unstable)).toContain(
      'increase the --measurement-request-count.',
    );
  });

  it('a level over -l: only its level line, left out of the summary', () => {
    const opts = options({
      latencyThresholdMs: 1,
      load: { kind: 'concurrency', range: { start: 1, end: 0, step: 1 } },
    });
    const slow = level({ level: 2, overLatencyThreshold: true, client: client({ avgLatencyUs: 1500 }) });
    const text = formatConsoleReport(opts, run([level({ client: client({ avgLatencyUs: 900 }) }), slow]));
    expect(text).toContain('Request concurrency: 2\nInferences/Second');
    expect(text).toContain('Concurrency: 1, throughput: 1000 infer/sec, latency 900 usec\n');
    expect(text).not.toContain('Concurrency: 2,');
    expect(levelRejection(opts, slow)).toBe('Measured latency went over the set limit of 1 msec. ');
  });

  it('a high load-generator CPU share prints the overhead warning', () => {
    const text = formatLevel(
      options(),
      model(),
      level({ generator: { cpuUs: 1, cpuUsPerRequest: 1, cpuUtilization: 0.8 } }),
    );
    expect(text).toContain(
      '[WARNING] Perf Analyzer is not able to keep up with the desired load. The results may not be accurate.\n',
    );
  });
});

describe("-v: perf_analyzer's per-window Pass lines", () => {
  const passes = [
    { trial: 1, throughput: 1407.8412, avgLatencyUs: 702, stdLatencyUs: 88, percentileLatencyUs: 910 },
    { trial: 2, throughput: 1390, avgLatencyUs: 715, stdLatencyUs: 91, percentileLatencyUs: 930 },
    { trial: 3, throughput: 1401.5, avgLatencyUs: 709, stdLatencyUs: 90, percentileLatencyUs: 920 },
  ];

  it('one line per window between the level line and the Client block, only with -v', () => {
    const lines = formatLevel(options({ verbose: true }), model(), level({ level: 2, passes })).split('\n');
    expect(lines.slice(0, 5)).toEqual([
      'Request concurrency: 2',
      '  Pass [1] throughput: 1407.84 infer/sec. Avg latency: 702 usec (std 88 usec)',
      '  Pass [2] throughput: 1390 infer/sec. Avg latency: 715 usec (std 91 usec)',
      '  Pass [3] throughput: 1401.5 infer/sec. Avg latency: 709 usec (std 90 usec)',
      '  Client: ',
    ]);
    const quiet = formatLevel(options(), model(), level({ level: 2, passes }));
    expect(quiet).not.toContain('Pass [');
    expect(quiet.split('\n').slice(0, 2)).toEqual(['Request concurrency: 2', '  Client: ']);
  });

  it('--percentile N: the window pN latency instead of the average', () => {
    const text = formatLevel(options({ verbose: true, percentile: 95 }), model(), level({ passes }));
    expect(text).toContain('\n  Pass [1] throughput: 1407.84 infer/sec. p95 latency: 910 usec\n');
    expect(text).not.toContain('(std ');
  });

  it("a window without requests prints perf_analyzer's cb::Error line; a rejected level keeps its Pass lines", () => {
    const unstable = level({
      level: 3,
      stable: false,
      passes: [
        {
          trial: 1,
          throughput: 0,
          avgLatencyUs: 0,
          stdLatencyUs: 0,
          error: 'No valid requests recorded within time interval. Please use a larger time window.',
        },
        ...passes.slice(1),
      ],
    });
    expect(formatLevel(options({ verbose: true }), model(), unstable).split('\n')).toEqual([
      'Request concurrency: 3',
      '  Pass [1] cb::Error: No valid requests recorded within time interval. Please use a larger time window.',
      '  Pass [2] throughput: 1390 infer/sec. Avg latency: 715 usec (std 91 usec)',
      '  Pass [3] throughput: 1401.5 infer/sec. Avg latency: 709 usec (std 90 usec)',
      '',
    ]);
    expect(formatLevel(options(), model(), unstable)).toBe('Request concurrency: 3\n');
  });

  it('--request-intervals (no level line): the Pass lines open the block', () => {
    const text = formatLevel(
      options({ verbose: true }),
      model(),
      level({ mode: 'request_intervals', passes }),
    );
    expect(text.split('\n')[0]).toBe(
      '  Pass [1] throughput: 1407.84 infer/sec. Avg latency: 702 usec (std 88 usec)',
    );
  });
});

describe('whole report', () => {
  it('settings, each level, then the summary on the --percentile latency', () => {
    const opts = options({
      percentile: 99,
      load: { kind: 'request_rate', range: { start: 100, end: 200, step: 100 }, distribution: 'constant' },
    });
    const text = formatConsoleReport(
      opts,
      run([
        level({ mode: 'request_rate', level: 100, client: client({ throughput: 99.5 }) }),
        level({ mode: 'request_rate', level: 200, client: client({ throughput: 198.25 }) }),
      ]),
    );
    expect(text.startsWith('*** Measurement Settings ***\n')).toBe(true);
    expect(text.indexOf('Request Rate: 100 inference requests per second')).toBeLessThan(
      text.indexOf('Request Rate: 200 inference requests per second'),
    );
    expect(
      text.endsWith(
        [
          'Inferences/Second vs. Client p99 Batch Latency',
          'Request Rate: 100, throughput: 99.5 infer/sec, latency 2000 usec',
          'Request Rate: 200, throughput: 198.25 infer/sec, latency 2000 usec',
          '',
        ].join('\n'),
      ),
    ).toBe(true);
  });
});
