/**
 * A quick look at one caller: `node --import tsx bench/loop.ts <caller> [calls] [rounds]` runs
 * `calls` closed-loop calls at concurrency 1 of `simple` (callers of cells.ts: httpClient,
 * httpFloor, grpcClient, grpcFloor) against the embedded server in its own process, and prints the
 * client's CPU µs per call per round. Add `--cpu-prof --cpu-prof-dir=DIR` to node for a profile of
 * the client alone.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { Connections, callersFor, simpleWorkload, type Callers } from './cells.js';
import { ownCpuSeconds } from './measure.js';
import { ensureBuilt, startServerChild } from './server.js';

const names = (process.argv[2] ?? 'httpClient').split(',') as (keyof Callers)[];
const calls = Number(process.argv[3] ?? 5000);
const rounds = Number(process.argv[4] ?? 3);
/** BENCH_PROFILE=prefix: a CPU profile of each measured loop (only the loop), `<prefix>-<caller>-<round>.cpuprofile`. */
const profile = process.env.BENCH_PROFILE;
const session = profile === undefined ? undefined : new Session();
if (session !== undefined) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
}

ensureBuilt();
const server = await startServerChild();
const connections = new Connections(server.url, server.grpcUrl);
try {
  const callers = callersFor(connections, simpleWorkload());
  for (let round = 0; round < rounds; round++) {
    const line: string[] = [];
    for (const name of names) {
      const call = callers[name] as () => Promise<void>;
      for (let i = 0; i < 500; i++) await call();
      if (session !== undefined) await session.post('Profiler.start');
      const c0 = ownCpuSeconds();
      const t0 = performance.now();
      for (let i = 0; i < calls; i++) await call();
      const us = ((ownCpuSeconds() - c0) / calls) * 1e6;
      const rps = calls / ((performance.now() - t0) / 1000);
      if (session !== undefined) {
        const { profile: p } = await session.post('Profiler.stop');
        writeFileSync(`${profile}-${name}-${round + 1}.cpuprofile`, JSON.stringify(p));
      }
      line.push(`${name} ${us.toFixed(0)} µs/call ${rps.toFixed(0)} req/s`);
    }
    console.log(`round ${round + 1}: ${line.join(' | ')}`);
  }
} finally {
  await connections.close();
  await server.stop();
}
