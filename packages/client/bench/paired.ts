/**
 * How the client bench pairs each client cell with its floor (issue 11): the order cells are
 * measured in, and client/floor CPU ratios taken round by round.
 */
import { median } from './measure.js';

/** What {@link pairedRatios} reads of a cell. */
export interface PairableCell {
  readonly workload: string;
  readonly caller: string;
  readonly concurrency: number;
  /** One window per round, in round order. */
  readonly windows: readonly { readonly calls: number; readonly clientCpu: number }[];
}

/** Client CPU per call ÷ its floor's, round by round (the two windows ran one after the other). */
export interface PairedRatio {
  readonly label: string;
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** Each client caller, its floor, and the name of the pair in the table. */
export const CLIENT_FLOOR_PAIRS: readonly (readonly [string, string, string])[] = [
  ['httpClient', 'httpFloor', 'HTTP'],
  ['grpcClient', 'grpcFloor', 'gRPC'],
  ['grpcStream', 'grpcStreamFloor', 'gRPC stream'],
];

/**
 * The order a workload's cells are measured in each round: concurrency outside, callers inside, so
 * a client cell runs right before its floor (`callers` lists each client before its floor) and a
 * pair sees the same host load; the stream callers last, at the stream's window.
 */
export function measurementOrder<C extends string>(
  callers: readonly C[],
  concurrency: readonly number[],
  window: number,
  isStream: (caller: C) => boolean,
): { caller: C; n: number }[] {
  return [
    ...concurrency.flatMap((n) => callers.filter((c) => !isStream(c)).map((caller) => ({ caller, n }))),
    ...callers.filter(isStream).map((caller) => ({ caller, n: window })),
  ];
}

/**
 * For every client cell with a floor cell of the same workload and concurrency: the client's CPU
 * per call ÷ the floor's, round by round, and the median and range of those ratios. Rounds missing
 * on either side are skipped.
 */
export function pairedRatios(cells: readonly PairableCell[]): PairedRatio[] {
  const out: PairedRatio[] = [];
  for (const client of cells) {
    const pair = CLIENT_FLOOR_PAIRS.find(([c]) => c === client.caller);
    if (pair === undefined) continue;
    const floor = cells.find(
      (s) => s.workload === client.workload && s.caller === pair[1] && s.concurrency === client.concurrency,
    );
    if (floor === undefined) continue;
    const perRound = client.windows
      .map((w, i) => {
        const f = floor.windows[i];
        return f === undefined ? NaN : w.clientCpu / w.calls / (f.clientCpu / f.calls);
      })
      .filter(Number.isFinite);
    if (perRound.length === 0) continue;
    out.push({
      label: `${client.workload} ${pair[2]} ${client.concurrency}`,
      median: median(perRound),
      min: Math.min(...perRound),
      max: Math.max(...perRound),
    });
  }
  return out;
}
