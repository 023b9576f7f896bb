/**
 * A TCP port for a server a test starts later. `listen(0)` hands out a port from the kernel's
 * ephemeral range, which any process's outgoing connection may take before the server (started seconds
 * later, after a build) binds it: `EADDRINUSE`, seen in a full run. So the port is drawn at random from
 * below that range and checked free on all addresses, as the servers bind them.
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

/** A port below the ephemeral range that is free now and not handed out before by this process. */
export async function freePort(): Promise<number> {
  const low = 10_000;
  const high = ephemeralLow() - 1;
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
