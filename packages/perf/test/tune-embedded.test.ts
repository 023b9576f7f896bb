/**
 * The tuner against the embedded server (in-process, explicit model control) on identity models
 * whose cost is known: `execute_delay_ms` sleeps once per EXECUTION (whatever the batch size), so
 * instances and dynamic batching change throughput by simple arithmetic. Timing-sensitive: run
 * under `flock /tmp/bench.lock`; tolerances are stated at each assert. The arithmetic's lower bounds
 * are divided by this host's slowdown, measured first in the same run ({@link requestOverheadMs}).
 */
import { TritonClient } from '@tritonserver-ts/client';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { settingsOf } from '../src/tune/search-space.js';
import { TUNE_CSV_COLUMNS } from '../src/tune/results-csv.js';
import { tuneCli } from '../src/tune/tune-command.js';
import { tune } from '../src/tune/tuner.js';
import { tuneOptions } from '../src/tune/tune-options.js';
import { startEmbedded, type Embedded } from './helpers/embedded.js';
import { fp32Input, requestOverheadMs } from './helpers/load.js';

/** 40 ms per execution, max batch 4, 1 instance, no dynamic batching (the repository config). */
const BATCH_DELAY_MS = 40;
/** Instance 0 sleeps 20 ms per execution, instance 1 sleeps 20 × (1 + 3) = 80 ms; no batching. */
const UNEVEN = `name: "tune_uneven"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
parameters { key: "execute_delay_ms" value { string_value: "20" } }
parameters { key: "instance_wise_delay_multiplier" value { string_value: "3" } }
`;

function sink(): { write(text: string): boolean; text: () => string } {
  let out = '';
  return {
    write(text: string) {
      out += text;
      return true;
    },
    text: () => out,
  };
}

describe('tuner on the embedded server', () => {
  let e: Embedded;
  let client: TritonClient;
  let outDir: string;
  /**
   * How much longer than its delay a lone 40 ms execution takes on this host now, end to end (1.0 on
   * an idle host; 1.26 measured on a slow shared one, where a bare node:http server is as slow).
   */
  let slowdown: number;

  beforeAll(async () => {
    e = await startEmbedded({
      identity: [{ name: 'tune_batch', delayMs: BATCH_DELAY_MS, maxBatchSize: 4, dims: [4] }],
    });
    await mkdir(join(e.repository, 'tune_uneven', '1'), { recursive: true });
    await writeFile(join(e.repository, 'tune_uneven', 'config.pbtxt'), UNEVEN);
    await writeFile(join(e.repository, 'tune_uneven', '1', '.keep'), '');
    client = new TritonClient({ url: e.url });
    await client.loadModel('tune_uneven');
    outDir = await mkdtemp(join(tmpdir(), 'tune-embedded-'));
    const overhead = await requestOverheadMs(
      client,
      'tune_batch',
      [fp32Input('INPUT0', [1, 4])],
      BATCH_DELAY_MS,
    );
    slowdown = (BATCH_DELAY_MS + overhead) / BATCH_DELAY_MS;
  });
  afterAll(async () => {
    await client?.close();
    await e?.close();
    if (outDir !== undefined) await rm(outDir, { recursive: true, force: true });
  });

  it('model-analyzer-ts profile: picks 2 instances × max batch 4 × dynamic batching at concurrency 8, writes the files, restores the config', async () => {
    const before = await client.getModelConfig('tune_batch');
    const stdout = sink();
    const stderr = sink();
    const code = await tuneCli(
      [
        'profile',
        '-m',
        'tune_batch',
        '-u',
        e.url,
        '--instance-counts',
        '1,2',
        '--max-batch-sizes',
        '1,4',
        '--dynamic-batching',
        'off,on',
        // A queue delay longer than an execution (40 ms) lets the concurrent requests meet in full
        // batches every time: with 10 ms, requests still arriving on new connections at the start
        // could go out as a partial batch, and the two instances then settled at about 128/s
        // instead of 200 in some runs.
        '--max-queue-delay-microseconds',
        '100000',
        '--concurrency',
        '8',
        // A budget on the average latency (C / throughput by Little's law): 8 in flight at 200/s
        // ideally, 40 ms, against 80 ms for the runner-up (1 instance, batches of 4). A p99 budget
        // would be decided by the tail, which on a slow shared host reached 101 ms for the winner
        // while the server saw 44 ms; the p99 budget has the next test.
        '--latency-metric',
        'avg',
        '--latency-budget',
        '70',
        '-p',
        '500',
        // A wide stability band: only stable measurements can win, and the host is shared (the
        // throughputs are checked against the arithmetic below instead).
        '-s',
        '100',
        '--shape',
        'INPUT0:4',
        '--output-dir',
        outDir,
      ],
      { stdout, stderr },
    );
    expect(stderr.text()).not.toMatch(/error/);
    expect(code, `${stdout.text()}\n${stderr.text()}`).toBe(0);

    // The CSV: one row per configuration (one concurrency each).
    const csv = (await readFile(join(outDir, 'results.csv'), 'utf8')).trimEnd().split('\n');
    expect(csv[0]).toBe(TUNE_CSV_COLUMNS.join(','));
    const col = (row: string[], name: (typeof TUNE_CSV_COLUMNS)[number]): string =>
      row[TUNE_CSV_COLUMNS.indexOf(name)] ?? '';
    const rows = csv.slice(1).map((l) => l.split(','));
    const byKey = new Map(
      rows.map((r) => [
        `${col(r, 'Instance Group')}/${col(r, 'Max Batch Size')}/${col(r, 'Dynamic Batching')}`,
        r,
      ]),
    );
    // 2 × 2 × 2 combinations; "1 instance, max batch 4, off" is the model's own config (the default).
    expect(rows).toHaveLength(8);
    expect([...byKey.keys()].sort()).toEqual([
      '1:CPU/1/Disabled',
      '1:CPU/1/Enabled',
      '1:CPU/4/Disabled',
      '1:CPU/4/Enabled',
      '2:CPU/1/Disabled',
      '2:CPU/1/Enabled',
      '2:CPU/4/Disabled',
      '2:CPU/4/Enabled',
    ]);
    const tput = (key: string): number => Number(col(byKey.get(key) ?? [], 'Throughput (infer/sec)'));
    // Arithmetic (8 requests in flight, 40 ms per execution): one request per execution without
    // batching → 25/s per instance; batches of 4 → 100/s per instance. Measured within −30 %/+10 %
    // (overheads only slow things down), the lower bound divided by the host's slowdown.
    const per = 1000 / BATCH_DELAY_MS;
    const expected: Record<string, number> = {
      '1:CPU/1/Disabled': per,
      '1:CPU/1/Enabled': per,
      '1:CPU/4/Disabled': per,
      '1:CPU/4/Enabled': 4 * per,
      '2:CPU/1/Disabled': 2 * per,
      '2:CPU/1/Enabled': 2 * per,
      '2:CPU/4/Disabled': 2 * per,
      '2:CPU/4/Enabled': 8 * per,
    };
    for (const [key, value] of Object.entries(expected)) {
      expect(tput(key), key).toBeGreaterThan((value * 0.7) / slowdown);
      expect(tput(key), key).toBeLessThan(value * 1.1);
    }
    // The 70 ms budget on the average rules out 1 instance with batching (two 40 ms rounds per
    // request) and every config without batching; only the winner satisfies it.
    const satisfied = rows
      .filter((r) => col(r, 'Satisfies Constraints') === 'Yes')
      .map((r) => col(r, 'Model Config Path'));
    const winner = col(byKey.get('2:CPU/4/Enabled') ?? [], 'Model Config Path');
    expect(satisfied).toEqual([winner]);
    expect(Number(col(byKey.get('1:CPU/4/Enabled') ?? [], 'Avg Latency (ms)'))).toBeGreaterThan(70);

    // Console: the table with the winner starred, the summary, the files.
    const out = stdout.text();
    expect(out).toMatch(new RegExp(`^\\*${winner}\\s+2:CPU\\s+4\\s+Enabled 100000us\\s+8\\s`, 'm'));
    expect(out).toMatch(
      new RegExp(
        `, ${winner} \\(2 CPU instances, max batch 4, dynamic batching \\(delay 100000 µs\\)\\) delivers maximum throughput under the given constraints \\(avg latency <= 70 ms\\)`,
      ),
    );
    expect(out).toMatch(/^Total time: \d+\.\d s$/m);
    expect(out).toContain(`Best config: ${join(outDir, 'best', 'config.pbtxt')}`);

    // best/config.pbtxt: the winner, loadable as the model's config.
    const pbtxt = await readFile(join(outDir, 'best', 'config.pbtxt'), 'utf8');
    expect(pbtxt).toMatch(/^name: "tune_batch"\n/);
    expect(pbtxt).toContain('max_queue_delay_microseconds: 100000');
    expect(pbtxt).toMatch(/instance_group \[\n {2}\{\n(?: {4}.*\n)*? {4}count: 2\n/);
    const html = await readFile(join(outDir, 'report.html'), 'utf8');
    expect(html).toContain(`<g class="series winner" data-config="${winner}">`);
    expect(html).toContain(`<rect class="bar winner" data-config="${winner}"`);

    // The model serves its own configuration again.
    const after = await client.getModelConfig('tune_batch');
    expect(after).toEqual(before);
    expect(await client.isModelReady('tune_batch')).toBe(true);
  });

  it('a p99 budget rules out the faster configuration whose slow instance makes the tail long; early exit skips higher concurrencies', async () => {
    const before = await client.getModelConfig('tune_uneven');
    const result = await tune(
      tuneOptions({
        modelName: 'tune_uneven',
        url: e.url,
        // Between the p99 of 40 ms (1 instance, concurrency 2) and 80 ms (the slow instance), 20 ms
        // from each: a loaded host's jitter must not decide the test. Both grow on a slow host, and
        // so does the budget.
        latencyBudgetMs: 60 * slowdown,
        latencyMetric: 'p99',
        tieTolerancePercent: 10,
        space: {
          instanceCounts: [1, 2],
          maxBatchSizes: [1, 4],
          dynamicBatching: [
            { enabled: false },
            { enabled: true, preferredBatchSize: [], maxQueueDelayMicroseconds: 0 },
          ],
          concurrency: [1, 2, 4, 8],
        },
        perf: { measurementIntervalMs: 500, stabilityPercentage: 100 },
      }),
    );
    // max_batch_size 0: only the instance count varies; the batching choices are skipped.
    expect(result.space.variants.map((v) => [v.settings.instanceCount, v.settings.maxBatchSize])).toEqual([
      [1, 0],
      [2, 0],
    ]);
    expect(result.space.skipped.every((s) => /cannot batch/.test(s.reason))).toBe(true);
    const [one, two] = result.configs;
    // 1 instance (20 ms): 50/s at every concurrency; p99 ≈ 20, 40, 80 ms → over 60 ms at 4, 8 skipped.
    expect(one?.measurements.map((m) => m.concurrency)).toEqual([1, 2, 4]);
    expect(one?.skippedConcurrency).toEqual([8]);
    // 2 instances: concurrency 1 always finds instance 0 free (20 ms); at 2 the 80 ms instance works
    // too: 50 + 12.5 = 62.5/s but a p99 of 80 ms → over the budget, 4 and 8 skipped.
    expect(two?.measurements.map((m) => m.concurrency)).toEqual([1, 2]);
    expect(two?.skippedConcurrency).toEqual([4, 8]);
    const fast = two?.measurements[1];
    expect(fast?.throughput).toBeGreaterThan((62.5 * 0.85) / slowdown);
    expect(fast?.latencyMs.p99).toBeGreaterThan(60 * slowdown);
    expect(fast?.satisfiesConstraints).toBe(false);
    // Its average latency (2 / 62.5 s = 32 ms) would have met a budget on the average.
    expect(fast?.latencyMs.avg).toBeLessThan(45 * slowdown);
    // The winner: 1 instance (ties within 10 % go to fewer resources). Its concurrency 1 and 2 both
    // give 50/s within the budget: which one wins is up to the noise of the host.
    expect(result.best?.variant).toBe('tune_uneven_config_default');
    expect([1, 2]).toContain(result.best?.concurrency);
    expect(result.best?.throughput).toBeGreaterThan((50 * 0.85) / slowdown);
    console.log(
      `tune_uneven: ruled out ${fast?.throughput.toFixed(1)}/s p99 ${fast?.latencyMs.p99.toFixed(1)} ms; ` +
        `best ${result.best?.throughput.toFixed(1)}/s at concurrency ${result.best?.concurrency}; ` +
        `budget ${(60 * slowdown).toFixed(1)} ms (host slowdown ${slowdown.toFixed(2)})`,
    );
    // The configuration ruled out is the faster one: 62.5 against 50/s on an idle host. On a slow
    // one the winner keeps its lone instance busy (concurrency 2 queues the next request), while
    // each of the two instances waits out every round trip at concurrency 2: the ratio was 1.09 in
    // CI's Node 24 leg.
    expect((fast?.throughput ?? 0) / (result.best?.throughput ?? 1)).toBeGreaterThan(1);
    expect(result.restoreError).toBeUndefined();
    expect(result.durationMs).toBeGreaterThan(0);
    expect(settingsOf(await client.getModelConfig('tune_uneven'))).toEqual(settingsOf(before));
  });
});
