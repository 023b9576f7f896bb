/**
 * Per-request time breakdown from a Triton JSON trace file (TIMESTAMPS level, rate 1), for
 * `bench/profile.ts --trace`. The statistics extension only has sums, so its "time beyond compute"
 * is a mean that one preempted request on a shared host can double; the trace has every request's
 * own timestamps, so medians and tails can be read instead.
 *
 * Spans (Triton's trace activity names): the HTTP body's arrival (`HTTP_RECV_START` → `HTTP_RECV_END`),
 * decoding and validation (`HTTP_RECV_END` → `QUEUE_START`, of which the core's own part starts at
 * `REQUEST_START`), queue, compute input / infer / output, the settle back to the core
 * (`COMPUTE_END` → `REQUEST_END`), and the response (`REQUEST_END` → `HTTP_SEND_END`). "Beyond
 * compute" is the server-side duration as Triton's statistics count it (`REQUEST_START` →
 * `REQUEST_END`) minus compute infer.
 */
import { readFileSync } from 'node:fs';

interface TraceObject {
  readonly id: number;
  readonly model_name?: string;
  readonly timestamps?: readonly { readonly name: string; readonly ns: number }[];
}

/** One span's distribution over the traced requests, in microseconds. */
export interface SpanSummary {
  readonly span: string;
  readonly p50: number;
  readonly p90: number;
  readonly mean: number;
}

const SPANS: readonly (readonly [label: string, from: string, to: string])[] = [
  ['body arrival (HTTP_RECV_START → HTTP_RECV_END)', 'HTTP_RECV_START', 'HTTP_RECV_END'],
  ['decode (HTTP_RECV_END → REQUEST_START)', 'HTTP_RECV_END', 'REQUEST_START'],
  ['validate, enqueue (REQUEST_START → QUEUE_START)', 'REQUEST_START', 'QUEUE_START'],
  ['queue (QUEUE_START → COMPUTE_START)', 'QUEUE_START', 'COMPUTE_START'],
  ['compute input', 'COMPUTE_START', 'COMPUTE_INPUT_END'],
  ['compute infer', 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START'],
  ['compute output', 'COMPUTE_OUTPUT_START', 'COMPUTE_END'],
  ['settle (COMPUTE_END → REQUEST_END)', 'COMPUTE_END', 'REQUEST_END'],
  ['response (REQUEST_END → HTTP_SEND_END)', 'REQUEST_END', 'HTTP_SEND_END'],
  ['server-side, as the statistics (REQUEST_START → REQUEST_END)', 'REQUEST_START', 'REQUEST_END'],
];

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

function summary(span: string, values: number[]): SpanSummary {
  values.sort((a, b) => a - b);
  const mean = values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
  return { span, p50: quantile(values, 0.5), p90: quantile(values, 0.9), mean };
}

/**
 * Reads `file` and summarises the requests whose `REQUEST_START` lies in `[fromNs, toNs]`
 * (`process.hrtime.bigint()` clock, as the trace's). Returns the spans and the count.
 */
export function traceBreakdown(
  file: string,
  fromNs: bigint,
  toNs: bigint,
): { readonly requests: number; readonly spans: readonly SpanSummary[] } {
  const text = readFileSync(file, 'utf8');
  const objects = JSON.parse(text) as TraceObject[];
  // The timestamps are 64-bit nanoseconds: read them exactly from the text, in file order.
  const exact = [...text.matchAll(/"ns":(\d+)/g)].map((m) => BigInt(m[1] as string));
  const byId = new Map<number, Map<string, bigint>>();
  let k = 0;
  for (const o of objects) {
    let points = byId.get(o.id);
    if (points === undefined) {
      points = new Map();
      byId.set(o.id, points);
    }
    for (const t of o.timestamps ?? []) points.set(t.name, exact[k++] as bigint);
  }
  const inWindow = [...byId.values()].filter((p) => {
    const start = p.get('REQUEST_START');
    return start !== undefined && start >= fromNs && start <= toNs && p.has('REQUEST_END');
  });
  const us = (p: Map<string, bigint>, from: string, to: string): number | undefined => {
    const a = p.get(from);
    const b = p.get(to);
    return a === undefined || b === undefined ? undefined : Number(b - a) / 1000;
  };
  const spans = SPANS.map(([label, from, to]) =>
    summary(
      label,
      inWindow.map((p) => us(p, from, to)).filter((v): v is number => v !== undefined),
    ),
  );
  const beyond = inWindow
    .map((p) => {
      const total = us(p, 'REQUEST_START', 'REQUEST_END');
      const infer = us(p, 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START');
      return total === undefined || infer === undefined ? undefined : total - infer;
    })
    .filter((v): v is number => v !== undefined);
  return {
    requests: inWindow.length,
    spans: [...spans, summary('beyond compute (server-side − compute infer)', beyond)],
  };
}
