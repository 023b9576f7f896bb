// --profile-export-file against perf_analyzer's profile_data_exporter.cc: the document's shape and
// field types, epoch-nanosecond timestamps written as exact integers, request_inputs as the
// exporter writes them; and the progress line's two modes (terminal, plain lines).
import { describe, expect, it } from 'vitest';

import type { InputDataset } from '../src/types.js';
import {
  buildProfileExport,
  epochOffsetNs,
  exportedInputValue,
  formatProfileExport,
} from '../src/report/profile-export.js';
import { createProgressLine } from '../src/report/progress.js';
import { level, record, run } from './helpers/report-fixtures.js';

const dataset: InputDataset = {
  streams: [
    [
      {
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 2], data: new Int32Array([1, 2]) },
          { name: 'TEXT', datatype: 'BYTES', shape: [1], data: ['hello'] },
          { name: 'FLAG', datatype: 'BOOL', shape: [1], data: [true] },
        ],
      },
      { inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 2], data: new Int32Array([3, 4]) }] },
    ],
  ],
};

describe('profile export', () => {
  const offset = 1_700_000_000_000_000_000n;
  const exported = run([
    level({
      level: 2,
      records: [record(1_000n, 500n, 0), { ...record(2_000n, 700n, 1), sequenceId: 9 }],
      windowBoundariesNs: [900n, 5_900n, 10_900n],
    }),
    level({ mode: 'request_rate', level: 12.5, records: [record(20_000n, 100n)] }),
  ]);

  it('has experiments[] {experiment {mode, value}, requests, window_boundaries}, version, service_kind, endpoint', () => {
    const doc = JSON.parse(formatProfileExport(exported, offset, dataset)) as Record<string, unknown>;
    expect(Object.keys(doc)).toEqual(['experiments', 'version', 'service_kind', 'endpoint']);
    expect(typeof doc['version']).toBe('string');
    expect(doc['service_kind']).toBe('triton');
    expect(doc['endpoint']).toBe('');
    const experiments = doc['experiments'] as Record<string, unknown>[];
    expect(experiments.map((e) => e['experiment'])).toEqual([
      { mode: 'concurrency', value: 2 },
      { mode: 'request_rate', value: 12.5 },
    ]);
    for (const e of experiments) {
      expect(Object.keys(e)).toEqual(['experiment', 'requests', 'window_boundaries']);
    }
    const [first] = experiments;
    const requests = first?.['requests'] as Record<string, unknown>[];
    expect(Object.keys(requests[0] ?? {})).toEqual(['timestamp', 'request_inputs', 'response_timestamps']);
    expect(Object.keys(requests[1] ?? {})).toEqual([
      'timestamp',
      'sequence_id',
      'request_inputs',
      'response_timestamps',
    ]);
    expect(requests[1]?.['sequence_id']).toBe(9);
    expect(requests[0]?.['request_inputs']).toEqual({ INPUT0: [1, 2], TEXT: 'hello', FLAG: true });
    expect(requests[1]?.['request_inputs']).toEqual({ INPUT0: [3, 4] });
    for (const r of requests) {
      expect(typeof r['timestamp']).toBe('number');
      expect(Array.isArray(r['response_timestamps'])).toBe(true);
    }
  });

  it('writes the epoch nanoseconds exactly (no float rounding) and response after start', () => {
    const text = formatProfileExport(exported, offset, dataset);
    expect(text).toContain('"timestamp":1700000000000001000,');
    expect(text).toContain('"response_timestamps":[1700000000000001500]');
    expect(text).toContain(
      '"window_boundaries":[1700000000000000900,1700000000000005900,1700000000000010900]',
    );
    const doc = buildProfileExport(exported, offset, dataset);
    for (const experiment of doc.experiments) {
      for (const request of experiment.requests) {
        for (const t of request.response_timestamps) expect(t > request.timestamp).toBe(true);
      }
    }
  });

  it("without the engine's window times the boundaries span the reported requests", () => {
    const doc = buildProfileExport(exported, 0n);
    expect(doc.experiments[1]?.window_boundaries).toEqual([20_000n, 20_100n]);
    expect(doc.experiments[1]?.requests[0]?.request_inputs).toEqual({});
  });

  it('the epoch offset puts hrtime readings at the wall-clock time', () => {
    const ns = process.hrtime.bigint() + epochOffsetNs();
    const ms = Number(ns / 1_000_000n);
    expect(Math.abs(ms - Date.now())).toBeLessThan(50);
  });

  it('input values: scalars for one element, arrays otherwise, FP16 as numbers, "" when empty', () => {
    expect(exportedInputValue({ name: 'a', datatype: 'FP32', shape: [1], data: [1.5] })).toBe(1.5);
    expect(exportedInputValue({ name: 'a', datatype: 'INT64', shape: [2], data: [1n, 2n] })).toEqual([1, 2]);
    expect(exportedInputValue({ name: 'a', datatype: 'FP16', shape: [2], data: [0.5, 2] })).toEqual([0.5, 2]);
    expect(exportedInputValue({ name: 'a', datatype: 'UINT8', shape: [0], data: [] })).toBe('');
  });
});

describe('progress line', () => {
  function sink(isTTY: boolean): { text: string; write(t: string): void; isTTY: boolean } {
    return {
      text: '',
      isTTY,
      write(t: string) {
        this.text += t;
      },
    };
  }

  const events = [
    { kind: 'level-start', mode: 'concurrency', level: 4 },
    {
      kind: 'window',
      level: 4,
      trial: 2,
      maxTrials: 10,
      throughput: 812.5,
      avgLatencyUs: 4920.7,
      stable: false,
    },
    { kind: 'level-done', result: level({ level: 4, windows: 3 }) },
  ] as const;

  it('plain lines when stderr is not a terminal', () => {
    const out = sink(false);
    const progress = createProgressLine(out);
    for (const e of events) progress.onProgress(e);
    progress.done();
    expect(out.text.split('\n')).toEqual([
      '[perf-analyzer-ts] concurrency 4: measuring…',
      '[perf-analyzer-ts] concurrency 4: pass 2/10, 812.5 infer/sec, avg latency 4920 usec',
      '[perf-analyzer-ts] concurrency 4: done after 3 windows, 1000 infer/sec',
      '',
    ]);
  });

  it('one line rewritten in place on a terminal, cleared at the end', () => {
    const out = sink(true);
    const progress = createProgressLine(out);
    for (const e of events) progress.onProgress(e);
    progress.done();
    expect(out.text).not.toContain('\n');
    expect(out.text.split('\r\u001b[2K')).toEqual([
      '',
      '[perf-analyzer-ts] concurrency 4: measuring…',
      '[perf-analyzer-ts] concurrency 4: pass 2/10, 812.5 infer/sec, avg latency 4920 usec',
      '[perf-analyzer-ts] concurrency 4: done after 3 windows, 1000 infer/sec',
      '',
    ]);
  });
});
