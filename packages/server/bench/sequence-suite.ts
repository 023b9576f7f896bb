/**
 * `BENCH_SUITE=sequence` (issue 28): the sequence batcher's Oldest strategy against Direct at 16
 * concurrent sequences, same run. One server process over two generated echo models
 * (`src/testing/sequence-models.ts`: INT32 INPUT plus START/END/READY/CORRID controls, one instance,
 * 16 slots): `seq_direct` (Direct: a batch has a row per slot up to the highest busy one, padding
 * rows for idle slots) and `seq_oldest` (Oldest: 16 candidate sequences, preferred batch 16, no
 * queue delay). The load generator runs in its own process (`sequence-load-child.ts`): 16 closed-loop
 * clients, each sending sequences of 8 requests (START … END, a fresh id each). Rounds alternate the
 * two models; the table reports the median requests/s and the Oldest/Direct ratio.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

import { sequenceEchoModel, writeSequenceModels } from '../src/testing/index.js';
import { benchDir, fmt, loadAverage, median, startChild } from './common.js';

const CONCURRENCY = 16;
const LENGTH = 8;

interface SequenceLoad {
  readonly requests: number;
  readonly seconds: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
}

function runLoadChild(port: number, model: string, seconds: number, base: number): Promise<SequenceLoad> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.resolve(benchDir, 'sequence-load-child.ts'),
      String(port),
      model,
      String(CONCURRENCY),
      String(seconds),
      String(LENGTH),
      String(base),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', (line) =>
      resolve(JSON.parse(line) as SequenceLoad),
    );
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`sequence-load-child exited with code ${code}`));
    });
  });
}

/** Runs the suite; prints a markdown table. */
export async function runSequenceSuite(options: {
  seconds: number;
  warmupSeconds: number;
  rounds: number;
}): Promise<void> {
  const repository = await mkdtemp(path.join(os.tmpdir(), 'tsbench-seq-'));
  await writeSequenceModels(repository, [
    sequenceEchoModel({ name: 'seq_direct', strategy: 'direct', maxBatchSize: CONCURRENCY }),
    sequenceEchoModel({
      name: 'seq_oldest',
      strategy: 'oldest',
      maxBatchSize: CONCURRENCY,
      strategyFields: `max_candidate_sequences: ${CONCURRENCY} preferred_batch_size: [ ${CONCURRENCY} ]`,
    }),
  ]);
  const server = await startChild('server-child.ts', [repository]);
  const models = ['seq_direct', 'seq_oldest'] as const;
  const results: Record<(typeof models)[number], SequenceLoad[]> = { seq_direct: [], seq_oldest: [] };
  let base = 1;
  try {
    process.stdout.write(`\n## Sequence batcher: Oldest vs Direct (load average ${loadAverage()})\n\n`);
    for (const model of models) {
      await runLoadChild(server.port, model, options.warmupSeconds, base);
      base += 1_000_000;
    }
    for (let r = 0; r < options.rounds; r++) {
      for (const model of r % 2 === 0 ? models : [...models].reverse()) {
        results[model].push(await runLoadChild(server.port, model, options.seconds, base));
        base += 1_000_000;
      }
    }
  } finally {
    await server.stop();
    await rm(repository, { recursive: true, force: true });
  }
  const rps = (m: (typeof models)[number]): number => median(results[m].map((x) => x.requests / x.seconds));
  process.stdout.write(`| strategy | req/s (median of ${options.rounds}) | p50 ms | p99 ms | errors |\n`);
  process.stdout.write('| --- | ---: | ---: | ---: | ---: |\n');
  for (const m of models) {
    const p50 = median(results[m].map((x) => x.p50Ms));
    const p99 = median(results[m].map((x) => x.p99Ms));
    const errors = results[m].reduce((n, x) => n + x.errors, 0);
    process.stdout.write(`| ${m} | ${fmt(rps(m), 0)} | ${fmt(p50, 2)} | ${fmt(p99, 2)} | ${errors} |\n`);
  }
  process.stdout.write(
    `\nOldest / Direct throughput: ${fmt(rps('seq_oldest') / rps('seq_direct'), 2)} (${CONCURRENCY} concurrent sequences of ${LENGTH} requests, load average ${loadAverage()})\n`,
  );
}
