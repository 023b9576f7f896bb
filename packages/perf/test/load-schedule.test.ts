/**
 * The load generator's pure parts: the seeded gap sources (constant, Poisson, replayed
 * intervals), the pacer's cancellation, and perf_analyzer's sequence bookkeeping (ids from
 * `--sequence-id-range` skipping live ones, lengths ± variation, START/END flags, user data
 * streams replayed step by step).
 */
import { describe, expect, it } from 'vitest';

import { SeededRandom } from '../src/load/rng.js';
import { constantGaps, intervalGaps, Pacer, poissonGaps } from '../src/load/schedule.js';
import { SequenceManager } from '../src/load/sequences.js';
import { perfOptions } from '../src/options/perf-options.js';
import type { InputDataset } from '../src/types.js';
import { fp32Input } from './helpers/load.js';

describe('gap sources', () => {
  it('constant: 1/rate', () => {
    const gaps = constantGaps(250);
    expect([gaps(), gaps()]).toEqual([4e6, 4e6]);
  });

  it('poisson: exponential with mean 1/rate (±1 % over 200 000 gaps), cv 1, seeded', () => {
    const gaps = poissonGaps(100, 3);
    const values = Array.from({ length: 200_000 }, () => gaps());
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    const sd = Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length);
    expect(mean / 1e7).toBeGreaterThan(0.99);
    expect(mean / 1e7).toBeLessThan(1.01);
    expect(sd / mean).toBeGreaterThan(0.98);
    expect(sd / mean).toBeLessThan(1.02);
    // P(gap > mean) = e^-1 for an exponential.
    expect(values.filter((v) => v > 1e7).length / values.length).toBeCloseTo(Math.exp(-1), 2);
    const again = poissonGaps(100, 3);
    expect(Array.from({ length: 5 }, () => again())).toEqual(values.slice(0, 5));
    const other = poissonGaps(100, 4);
    expect(Array.from({ length: 5 }, () => other())).not.toEqual(values.slice(0, 5));
  });

  it('intervals: replayed in order, in a loop (µs → ns)', () => {
    const gaps = intervalGaps([100, 2000, 30]);
    expect(Array.from({ length: 7 }, () => gaps())).toEqual([1e5, 2e6, 3e4, 1e5, 2e6, 3e4, 1e5]);
  });

  it('the seeded generator is uniform in [0, 1)', () => {
    const random = new SeededRandom(1);
    const values = Array.from({ length: 100_000 }, () => random.next());
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...values)).toBeLessThan(1);
    expect(values.reduce((a, b) => a + b, 0) / values.length).toBeCloseTo(0.5, 2);
  });
});

describe('pacer', () => {
  it('waits until the deadline, never earlier', async () => {
    const pacer = new Pacer();
    const deadline = process.hrtime.bigint() + 12_300_000n;
    expect(await pacer.waitUntil(deadline)).toBe(true);
    const late = Number(process.hrtime.bigint() - deadline) / 1e6;
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThan(20);
  });

  it('cancel ends a long wait at once, resolving false', async () => {
    const pacer = new Pacer();
    const t0 = Date.now();
    const waiting = pacer.waitUntil(process.hrtime.bigint() + 10_000_000_000n);
    setTimeout(() => pacer.cancel(), 20);
    expect(await waiting).toBe(false);
    expect(Date.now() - t0).toBeLessThan(500);
  });
});

describe('sequences', () => {
  const single: InputDataset = { streams: [[{ inputs: [fp32Input('INPUT0', [1])] }]] };

  it('ids from the range, lengths of --sequence-length ± variation, START on the first, END on the last', () => {
    const options = perfOptions({
      modelName: 'm',
      sequenceIdRange: { start: 5, end: 8 },
      sequenceLength: 10,
      sequenceLengthVariation: 20,
    });
    const manager = new SequenceManager(options, single);
    const status = manager.add();
    const lengths: number[] = [];
    const ids: number[] = [];
    let length = 0;
    for (let i = 0; i < 200; i++) {
      const request = manager.next(status);
      if (request.start) {
        ids.push(request.id);
        length = 0;
      }
      length += 1;
      if (request.end) lengths.push(length);
    }
    expect(ids.slice(0, 5)).toEqual([5, 6, 7, 5, 6]); // end exclusive, then around again
    expect(Math.min(...lengths)).toBeGreaterThanOrEqual(8);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(12);
    expect(new Set(lengths).size).toBeGreaterThan(1);
  });

  it('skips ids held by other live sequences', () => {
    const options = perfOptions({
      modelName: 'm',
      sequenceIdRange: { start: 1, end: 3 },
      sequenceLength: 3,
      sequenceLengthVariation: 0,
    });
    const manager = new SequenceManager(options, single);
    const a = manager.add();
    const b = manager.add();
    expect(manager.next(a)).toMatchObject({ id: 1, start: true, end: false });
    expect(manager.next(b)).toMatchObject({ id: 2, start: true, end: false });
    manager.next(a);
    expect(manager.next(a)).toMatchObject({ id: 1, end: true });
    // The next id in turn is 1 again (range 1..2), free now; b still holds 2.
    expect(manager.next(a)).toMatchObject({ id: 1, start: true });
    manager.next(b);
    expect(manager.next(b)).toMatchObject({ id: 2, end: true });
    // Next in turn would be 2 (b's old id, now finished) — allowed; then 1 is held by a.
    expect(manager.next(b)).toMatchObject({ id: 2, start: true });
  });

  it('user data: a sequence replays one stream step by step, as long as the stream', () => {
    const stream = (n: number): InputDataset['streams'][number] =>
      Array.from({ length: n }, (_, i) => ({ inputs: [fp32Input('INPUT0', [1], i)] }));
    const dataset: InputDataset = { streams: [stream(3), stream(5)] };
    const manager = new SequenceManager(perfOptions({ modelName: 'm' }), dataset);
    const status = manager.add();
    const sequences: { stream: number; steps: number[] }[] = [];
    for (let i = 0; i < 60; i++) {
      const request = manager.next(status);
      if (request.start) sequences.push({ stream: request.stream, steps: [] });
      sequences.at(-1)?.steps.push(request.step);
      if (request.end) expect(sequences.at(-1)?.steps.length).toBe(request.stream === 0 ? 3 : 5);
    }
    for (const s of sequences.slice(0, -1)) {
      expect(s.steps).toEqual(s.stream === 0 ? [0, 1, 2] : [0, 1, 2, 3, 4]);
    }
    expect(new Set(sequences.map((s) => s.stream)).size).toBe(2);
  });

  it('finish: an END request for a sequence in progress, nothing for an idle one', () => {
    const manager = new SequenceManager(
      perfOptions({ modelName: 'm', sequenceLength: 10, sequenceLengthVariation: 0 }),
      single,
    );
    const status = manager.add();
    expect(manager.finish(status)).toBeUndefined();
    manager.next(status);
    expect(manager.finish(status)).toMatchObject({ id: 1, start: false, end: true });
    expect(manager.finish(status)).toBeUndefined();
  });
});
