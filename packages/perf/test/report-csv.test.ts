// The -f CSV against perf_analyzer's report_writer.cc: exact header lists (normal, verbose,
// decoupled, cache, metrics), rows sorted by throughput, whole microseconds, and the breakdown
// columns adding up to the client's average latency.
import { describe, expect, it } from 'vitest';

import {
  composingCsvReports,
  csvColumns,
  formatCsvReport,
  SMALL_SAMPLE_WARNING,
} from '../src/report/csv-report.js';
import { client, level, model, options, run, server } from './helpers/report-fixtures.js';

const BASE = [
  'Concurrency',
  'Inferences/Second',
  'Client Send',
  'Network+Server Send/Recv',
  'Server Queue',
  'Server Compute Input',
  'Server Compute Infer',
  'Server Compute Output',
  'Client Recv',
  'p50 latency',
  'p90 latency',
  'p95 latency',
  'p99 latency',
];

function parse(text: string): Record<string, string>[] {
  const [header = '', ...rows] = text.trimEnd().split('\n');
  const columns = header.split(',');
  return rows.map((row) => {
    const cells = row.split(',');
    const entries: [string, string][] = columns.map((c, i) => [c, cells[i] ?? '']);
    return Object.fromEntries(entries);
  });
}

describe('CSV header', () => {
  it('normal', () => {
    expect(csvColumns(options(), model())).toEqual(BASE);
  });

  it('request rate names the first column "Request Rate"', () => {
    const opts = options({
      load: { kind: 'request_rate', range: { start: 1, end: 1, step: 1 }, distribution: 'constant' },
    });
    expect(csvColumns(opts, model())[0]).toBe('Request Rate');
  });

  it('--verbose-csv adds Avg latency, request/response and response wait', () => {
    expect(csvColumns(options({ verboseCsv: true }), model())).toEqual([
      ...BASE,
      'Avg latency',
      'request/response',
      'response wait',
    ]);
  });

  it('--verbose-csv with --percentile leaves out Avg latency and adds the pN column in order', () => {
    expect(csvColumns(options({ verboseCsv: true, percentile: 75 }), model())).toEqual([
      ...BASE.slice(0, 9),
      'p50 latency',
      'p75 latency',
      'p90 latency',
      'p95 latency',
      'p99 latency',
      'request/response',
      'response wait',
    ]);
  });

  it('--verbose-csv with --collect-metrics adds the GPU columns', () => {
    expect(csvColumns(options({ verboseCsv: true, collectMetrics: true }), model()).slice(-4)).toEqual([
      'Avg GPU Utilization',
      'Avg GPU Power Usage',
      'Max GPU Memory Usage',
      'Total GPU Memory',
    ]);
  });

  it('a decoupled model gets Response Throughput after Inferences/Second', () => {
    expect(csvColumns(options(), model({ decoupled: true }))).toEqual([
      'Concurrency',
      'Inferences/Second',
      'Response Throughput',
      ...BASE.slice(2),
    ]);
  });

  it('response cache adds Server Cache Hit/Miss before Client Recv', () => {
    expect(csvColumns(options(), model({ responseCacheEnabled: true }))).toEqual([
      ...BASE.slice(0, 8),
      'Server Cache Hit',
      'Server Cache Miss',
      ...BASE.slice(8),
    ]);
  });
});

describe('CSV rows', () => {
  it('sorted by throughput ascending, unstable levels left out, values in whole µs', () => {
    const opts = options({ load: { kind: 'concurrency', range: { start: 1, end: 3, step: 1 } } });
    const csv = formatCsvReport(
      opts,
      run([
        level({ level: 1, client: client({ throughput: 500.25 }) }),
        level({ level: 2, client: client({ throughput: 300 }) }),
        level({ level: 3, stable: false }),
      ]),
    );
    const rows = parse(csv.text);
    expect(rows.map((r) => r['Concurrency'])).toEqual(['2', '1']);
    expect(rows[1]).toEqual({
      Concurrency: '1',
      'Inferences/Second': '500.25',
      'Client Send': '40',
      // client wait = 1000 - 40 - 30 = 930; accounted = 100 + floor(650.9) = 750
      'Network+Server Send/Recv': '180',
      'Server Queue': '100',
      'Server Compute Input': '20',
      'Server Compute Infer': '600',
      'Server Compute Output': '30',
      'Client Recv': '30',
      'p50 latency': '950',
      'p90 latency': '1200',
      'p95 latency': '1400',
      'p99 latency': '2000',
    });
    expect(csv.warnings).toEqual([]);
  });

  it('the breakdown columns add up to the average latency (within the µs truncation)', () => {
    const cases = [
      level(),
      level({
        client: client({ avgLatencyUs: 5321.9, avgSendUs: 123.4, avgRecvUs: 87.6 }),
        server: server({
          queueUs: 1234.5,
          computeInputUs: 12.3,
          computeInferUs: 2345.6,
          computeOutputUs: 45.6,
        }),
      }),
    ];
    for (const result of cases) {
      const [row] = parse(formatCsvReport(options({ verboseCsv: true }), run([result])).text);
      if (row === undefined) throw new Error('no row');
      const parts = [
        'Client Send',
        'Network+Server Send/Recv',
        'Server Queue',
        'Server Compute Input',
        'Server Compute Infer',
        'Server Compute Output',
        'Client Recv',
      ].map((c) => Number(row[c]));
      const sum = parts.reduce((a, b) => a + b, 0);
      const avg = Number(row['Avg latency']);
      // Each of the 4 server averages is truncated once more than the compute total: ≤ 3 µs.
      expect(avg - sum).toBeGreaterThanOrEqual(0);
      expect(avg - sum).toBeLessThanOrEqual(3);
    }
  });

  it('cache columns take part in the sum; decoupled rows carry Response Throughput', () => {
    const profile = model({ responseCacheEnabled: true, decoupled: true });
    const result = level({
      client: client({ responseThroughput: 4321.5 }),
      server: server({ cacheHitUs: 7, cacheMissUs: 3 }),
    });
    const [row] = parse(formatCsvReport(options(), run([result], profile)).text);
    expect(row?.['Response Throughput']).toBe('4321.5');
    expect(row?.['Server Cache Hit']).toBe('7');
    expect(row?.['Server Cache Miss']).toBe('3');
    expect(row?.['Network+Server Send/Recv']).toBe('170');
  });

  it('verbose cells: request/response = send + recv, response wait; GPU cells uuid:value;', () => {
    const result = level({
      metrics: {
        gpuUtilization: { 'GPU-1': 0.5 },
        gpuPowerUsage: { 'GPU-1': 80.25 },
        gpuMemoryUsedBytes: { 'GPU-1': 2048 },
        gpuMemoryTotalBytes: { 'GPU-1': 8192 },
        scrapes: 2,
      },
    });
    const [row] = parse(
      formatCsvReport(options({ verboseCsv: true, collectMetrics: true }), run([result])).text,
    );
    expect(row?.['Avg latency']).toBe('1000');
    expect(row?.['request/response']).toBe('70');
    expect(row?.['response wait']).toBe('900');
    expect(row?.['Avg GPU Utilization']).toBe('GPU-1:0.5;');
    expect(row?.['Avg GPU Power Usage']).toBe('GPU-1:80.25;');
    expect(row?.['Max GPU Memory Usage']).toBe('GPU-1:2048;');
    expect(row?.['Total GPU Memory']).toBe('GPU-1:8192;');
  });

  it('warns as perf_analyzer when the server accounts for more than the client waited', () => {
    const result = level({ server: server({ queueUs: 5000 }) });
    const csv = formatCsvReport(options(), run([result]));
    expect(parse(csv.text)[0]?.['Network+Server Send/Recv']).toBe('0');
    expect(csv.warnings).toEqual([SMALL_SAMPLE_WARNING]);
  });

  it('no kept level: no CSV at all (perf_analyzer writes no file)', () => {
    expect(formatCsvReport(options(), run([level({ stable: false })])).text).toBe('');
  });
});

describe('composing-model CSVs (ensembles)', () => {
  it('one file per composing model, named <model>_v<version>.<file>, throughput by request share', () => {
    const pre = server({ successCount: 600, avgRequestLatencyUs: 900 });
    const result = level({
      client: client({ throughput: 200 }),
      server: server({ successCount: 1200, composing: [{ name: 'pre', version: '1', stats: pre }] }),
    });
    const [file] = composingCsvReports(options(), run([result]), '/tmp/out/perf.csv');
    expect(file?.path).toBe('/tmp/out/pre_v1.perf.csv');
    expect(file?.text.split('\n')).toEqual([
      'Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv',
      // overhead = 900 - (100 + 650) = 150
      '1,100,0,150,100,20,600,30,0',
      '',
    ]);
  });
});
