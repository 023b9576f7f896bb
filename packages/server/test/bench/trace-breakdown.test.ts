/**
 * The bench's per-request trace breakdown (bench/trace-breakdown.ts) on a real trace file written
 * by the embedded server: `slow_identity` sleeps 50 ms per execution, so its compute infer and the
 * server-side duration are known from below.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { traceBreakdown } from '../../bench/trace-breakdown.js';
import { SLOW_IDENTITY_DELAY_MS } from '../../src/testing/index.js';
import { infer, startTestServer } from '../helpers/server.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tritonserver-ts-breakdown-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('bench trace breakdown', () => {
  it('summarises the requests started in the window, span by span', async () => {
    const file = join(dir, 'trace.json');
    const srv = await startTestServer({
      only: ['slow_identity'],
      trace: { trace_level: ['TIMESTAMPS'], trace_rate: '1', trace_file: file },
    });
    const fp32 = [
      { name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 2], data: new Float32Array([1, 2]) },
    ];
    let from: bigint;
    try {
      expect((await infer(srv.url, 'slow_identity', fp32)).status).toBe(200); // before the window
      from = process.hrtime.bigint();
      for (let i = 0; i < 3; i++) expect((await infer(srv.url, 'slow_identity', fp32)).status).toBe(200);
    } finally {
      await srv.close(); // the trace file is written on shutdown
    }
    const { requests, spans } = traceBreakdown(file, from, process.hrtime.bigint());
    expect(requests).toBe(3);
    const span = (prefix: string) => {
      const s = spans.find((x) => x.span.startsWith(prefix));
      if (s === undefined) throw new Error(`no span ${prefix}`);
      return s;
    };
    const delayUs = SLOW_IDENTITY_DELAY_MS * 1000;
    expect(span('compute infer').p50).toBeGreaterThanOrEqual(delayUs * 0.9);
    const serverSide = span('server-side');
    expect(serverSide.p50).toBeGreaterThanOrEqual(span('compute infer').p50);
    const beyond = span('beyond compute');
    expect(beyond.p50).toBeGreaterThanOrEqual(0);
    expect(beyond.mean).toBeCloseTo(serverSide.mean - span('compute infer').mean, 0);
    for (const s of spans) {
      expect(Number.isFinite(s.p50), s.span).toBe(true);
      expect(s.p90).toBeGreaterThanOrEqual(s.p50);
    }
  });
});
