/**
 * A TCP port for a server a test starts later. `listen(0)` hands out a port from the kernel's
 * ephemeral range, which any process's outgoing connection may take before the server (started seconds
 * later, after a build) binds it: `EADDRINUSE`, seen in a full run. So the port is drawn at random from
 * below that range and checked free on all addresses, as the servers bind them.
 *
 * Test files run in several vitest workers at once, and a port checked free by one worker may be
 * drawn by another before either server binds it (a readiness probe was once answered by another
 * test's server). So each worker draws from its own slice of the range (`VITEST_POOL_ID`, 1-based).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The first port of the kernel's ephemeral range (32768 when it cannot be read). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 2048 ? low : 32768;
  } catch {
    return 32768;
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, () => probe.close(() => resolve(true)));
  });
}

const taken = new Set<number>();

/** How many slices the range is cut into: more than the workers vitest starts on any machine here. */
const SLICES = 16;

/** This worker's slice of [10000, ephemeral low): `[low, high)`. */
function workerSlice(): { low: number; high: number } {
  const first = 10_000;
  const size = Math.floor((ephemeralLow() - first) / SLICES);
  const pool = Number(process.env['VITEST_POOL_ID'] ?? '1');
  const index = Number.isInteger(pool) && pool >= 1 ? (pool - 1) % SLICES : 0;
  return { low: first + index * size, high: first + (index + 1) * size };
}

/**
 * A port below the ephemeral range, in this worker's slice, that is free now and not handed out
 * before by this process.
 */
export async function freePort(): Promise<number> {
  const { low, high } = workerSlice();
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (taken.has(port)) continue;
    if (await isFree(port)) {
      taken.add(port);
      return port;
    }
  }
  throw new Error('no free port below the ephemeral range');
}
