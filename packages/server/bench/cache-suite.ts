/**
 * `BENCH_SUITE=cache` (issue 28): the response cache's hit path against the plain path on `simple`,
 * in the same run and the same server process. One server child (`server-child.ts`, started with
 * `BENCH_CACHE_SIZE`, i.e. `--cache-config local,size=…`) serves `simple` and `simple_cache` (the
 * same generated model with `response_cache { enable: true }`); the load generator (`load.ts`) sends
 * the same binary `simple` request to each in interleaved rounds, at concurrency 1 and 16, so every
 * request to `simple_cache` after the first is a hit. Reported per cell (median over rounds): req/s,
 * p50/p99, server CPU µs per request; then the ratio of server CPU per request, hit / plain.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { writeTestModelRepository } from '../src/testing/index.js';
import { cpuSecondsOf, fmt, loadAverage, median, medianSlice, startChild } from './common.js';
import { runLoad, type LoadResult } from './load.js';
import { simpleBody } from './simple-suite.js';

/** Slice length, warm-up and rounds (from run.ts). */
export interface CacheSuiteSettings {
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly rounds: number;
}

const MODELS = ['simple', 'simple_cache'] as const;
const CONCURRENCY = [1, 16] as const;
const LABEL: Record<(typeof MODELS)[number], string> = {
  simple: 'simple (plain path)',
  simple_cache: 'simple_cache (cache hits)',
};

interface Cell {
  readonly load: LoadResult;
  readonly serverCpu: number;
}

/** Runs the suite and prints its rows and table. */
export async function runCacheSuite(settings: CacheSuiteSettings): Promise<void> {
  const { seconds, warmupSeconds, rounds } = settings;
  process.stdout.write(
    `\ncache suite: simple vs simple_cache (response cache hits), one server, --cache-config local,size=1048576; ` +
      `${os.availableParallelism()} cores; ${seconds}s measured + ${warmupSeconds}s warmup per slice, ` +
      `median of ${rounds} interleaved rounds; load average at start ${loadAverage()}\n\n`,
  );
  const repository = await mkdtemp(path.join(os.tmpdir(), 'tsbench-cache-'));
  await writeTestModelRepository(repository, { only: ['simple'] });
  await cp(path.join(repository, 'simple'), path.join(repository, 'simple_cache'), { recursive: true });
  const config = await readFile(path.join(repository, 'simple_cache', 'config.pbtxt'), 'utf8');
  await writeFile(
    path.join(repository, 'simple_cache', 'config.pbtxt'),
    `${config.replace('name: "simple"', 'name: "simple_cache"')}\nresponse_cache { enable: true }\n`,
  );
  const body = simpleBody();
  const cells = new Map<string, Cell[]>();
  const previous = process.env.BENCH_CACHE_SIZE;
  process.env.BENCH_CACHE_SIZE = '1048576';
  const child = await startChild('server-child.ts', [repository]);
  if (previous === undefined) delete process.env.BENCH_CACHE_SIZE;
  else process.env.BENCH_CACHE_SIZE = previous;
  try {
    for (const model of MODELS) {
      for (const concurrency of CONCURRENCY) {
        await runLoad({ port: child.port, model, body, concurrency, warmupMs: 0, durationMs: 1000 });
      }
    }
    for (let round = 1; round <= rounds; round++) {
      for (const model of MODELS) {
        for (const concurrency of CONCURRENCY) {
          let start = NaN;
          let end = NaN;
          const load = await runLoad({
            port: child.port,
            model,
            body,
            concurrency,
            warmupMs: warmupSeconds * 1000,
            durationMs: seconds * 1000,
            onWindow: (edge) => {
              if (edge === 'start') start = cpuSecondsOf(child.pid);
              else end = cpuSecondsOf(child.pid);
            },
          });
          if (Number.isNaN(end)) end = cpuSecondsOf(child.pid);
          const cell: Cell = { load, serverCpu: (end - start) / Math.max(1, load.requests) };
          const key = `${model}|${concurrency}`;
          cells.set(key, [...(cells.get(key) ?? []), cell]);
          process.stdout.write(
            `round ${round} ${LABEL[model].padEnd(28)} c=${String(concurrency).padEnd(3)} ${fmt(load.rps).padStart(8)} req/s  ` +
              `p50 ${fmt(load.p50Ms, 3).padStart(7)} ms  p99 ${fmt(load.p99Ms, 3).padStart(7)} ms  ` +
              `server CPU ${fmt(cell.serverCpu * 1e6, 0).padStart(4)} µs/req  errors ${load.errors}\n`,
          );
        }
      }
    }
  } finally {
    await child.stop();
    await rm(repository, { recursive: true, force: true });
  }
  const summary = (model: string, concurrency: number) => {
    const c = cells.get(`${model}|${concurrency}`) ?? [];
    return { load: medianSlice(c.map((x) => x.load)), serverCpu: median(c.map((x) => x.serverCpu)) };
  };
  process.stdout.write(
    '\n| cache suite (median) | c=1 req/s | c=1 server CPU µs/req | c=16 req/s | c=16 p50/p99 ms | c=16 server CPU µs/req |\n' +
      '| --- | ---: | ---: | ---: | ---: | ---: |\n',
  );
  for (const model of MODELS) {
    const [one, sixteen] = CONCURRENCY.map((c) => summary(model, c));
    process.stdout.write(
      `| ${LABEL[model]} | ${fmt(one?.load?.rps)} | ${fmt((one?.serverCpu ?? NaN) * 1e6, 0)} | ${fmt(sixteen?.load?.rps)} | ` +
        `${fmt(sixteen?.load?.p50Ms, 3)} / ${fmt(sixteen?.load?.p99Ms, 3)} | ${fmt((sixteen?.serverCpu ?? NaN) * 1e6, 0)} |\n`,
    );
  }
  for (const concurrency of CONCURRENCY) {
    const hit = summary('simple_cache', concurrency).serverCpu;
    const plain = summary('simple', concurrency).serverCpu;
    process.stdout.write(
      `server CPU per request, cache hit / plain, c=${concurrency}: ${fmt(hit * 1e6, 0)} / ${fmt(plain * 1e6, 0)} µs = ${fmt(hit / plain, 2)}\n`,
    );
  }
}
