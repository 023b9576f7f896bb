/**
 * The client bench's pairing (bench/paired.ts): each client cell is measured right before its
 * floor, and its CPU per call is divided by the floor's round by round.
 */
import { describe, expect, it } from 'vitest';

import { measurementOrder, pairedRatios, type PairableCell } from '../../bench/paired.js';

const w = (calls: number, clientCpu: number) => ({ calls, clientCpu });

describe('client bench pairing', () => {
  it('orders each client cell right before its floor, concurrency outside, streams last', () => {
    const callers = ['httpClient', 'httpFloor', 'grpcStream', 'grpcStreamFloor'] as const;
    const order = measurementOrder(callers, [1, 16], 8, (c) => c.startsWith('grpcStream'));
    expect(order.map((o) => `${o.caller}/${o.n}`)).toEqual([
      'httpClient/1',
      'httpFloor/1',
      'httpClient/16',
      'httpFloor/16',
      'grpcStream/8',
      'grpcStreamFloor/8',
    ]);
  });

  it('divides per round, not medians, and skips rounds and cells without a partner', () => {
    const cells: PairableCell[] = [
      // Client: 200, 100, 400 µs per call; floor: 100, 100, 100 → per round 2, 1, 4.
      {
        workload: 'simple',
        caller: 'httpClient',
        concurrency: 1,
        windows: [w(10, 2e-3), w(10, 1e-3), w(10, 4e-3)],
      },
      {
        workload: 'simple',
        caller: 'httpFloor',
        concurrency: 1,
        windows: [w(10, 1e-3), w(20, 2e-3), w(5, 0.5e-3)],
      },
      // A fourth round only on the client side is skipped.
      { workload: 'food', caller: 'grpcClient', concurrency: 8, windows: [w(4, 4e-3), w(4, 4e-3)] },
      { workload: 'food', caller: 'grpcFloor', concurrency: 8, windows: [w(4, 2e-3)] },
      // No floor at this concurrency: no row.
      { workload: 'simple', caller: 'httpClient', concurrency: 16, windows: [w(1, 1)] },
    ];
    const rows = pairedRatios(cells);
    expect(rows.map((r) => r.label)).toEqual(['simple HTTP 1', 'food gRPC 8']);
    expect(rows[0]?.median).toBeCloseTo(2);
    expect(rows[0]?.min).toBeCloseTo(1);
    expect(rows[0]?.max).toBeCloseTo(4);
    expect(rows[1]).toMatchObject({ median: 2, min: 2, max: 2 });
  });
});
