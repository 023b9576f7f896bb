/**
 * Names of the gateway's shared-memory regions, and the start-up sweep of stale ones.
 *
 * A region (and its object `/dev/shm/<name>`) is named
 * `gourmetgram_web_<host>_<pid>_<token>_<bytes>_<index>`: the host name (a container's id in
 * Docker) keeps replicas that share one IPC namespace apart, the process id and a random token tell
 * this process from an earlier one with the same id (a restarted container's pid 1). A process
 * killed before it could clean up leaves its objects and its registrations behind; the next gateway
 * process on the same host removes them (objects whose process is gone, or an earlier process
 * with this one's id) and unregisters such regions on the server.
 * @packageDocumentation
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { ShmRegistrar } from './shm-pool';

const PREFIX = 'gourmetgram_web';
const NAME = /^gourmetgram_web_([A-Za-z0-9-]+)_(\d+)_([0-9a-f]{8})_/;

/** Who owns a region name. */
export interface ShmOwner {
  readonly host: string;
  readonly pid: number;
  readonly token: string;
}

/** This process: host name (reduced to `[A-Za-z0-9-]`), pid, and a token drawn once. */
export const SELF: ShmOwner = {
  host:
    hostname()
      .replace(/[^A-Za-z0-9-]/g, '-')
      .slice(0, 64) || 'host',
  pid: process.pid,
  token: randomBytes(4).toString('hex'),
};

let serial = 0;

/** A new name prefix for a pool of this process (each pool gets its own). */
export function poolPrefix(owner: ShmOwner = SELF): string {
  return `${PREFIX}_${owner.host}_${owner.pid}_${owner.token}_${++serial}`;
}

/** The owner of a gateway region name, or `undefined` for any other name. */
export function ownerOf(name: string): ShmOwner | undefined {
  const m = NAME.exec(name);
  return m ? { host: m[1]!, pid: Number(m[2]), token: m[3]! } : undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether `name` was left by a gateway process of this host that is gone: its process no longer
 * runs, or it had this process's id before (another token). Names of other hosts are never stale
 * here: their own gateway sweeps them.
 */
export function isStale(
  name: string,
  self: ShmOwner = SELF,
  isAlive: (pid: number) => boolean = alive,
): boolean {
  const owner = ownerOf(name);
  if (!owner || owner.host !== self.host) return false;
  if (owner.pid === self.pid) return owner.token !== self.token;
  return !isAlive(owner.pid);
}

/**
 * Best effort: removes stale objects from `dir` and unregisters stale regions on the server.
 * Never throws; answers what it removed.
 */
export async function sweepStale(
  client: ShmRegistrar,
  dir: string,
  timeoutMs = 5000,
): Promise<{ files: string[]; regions: string[] }> {
  const files: string[] = [];
  const regions: string[] = [];
  try {
    for (const f of readdirSync(dir)) {
      if (!isStale(f)) continue;
      try {
        unlinkSync(join(dir, f));
        files.push(f);
      } catch {
        // Gone already, or not ours to remove.
      }
    }
  } catch {
    // No such directory: nothing to sweep.
  }
  try {
    const status = await client.getSystemSharedMemoryStatus('', { timeoutMs });
    for (const { name } of status) {
      if (!isStale(name)) continue;
      try {
        await client.unregisterSystemSharedMemory(name, { timeoutMs, maxRetries: 0 });
        regions.push(name);
      } catch {
        // Refused (client shared memory disabled) or gone.
      }
    }
  } catch {
    // The server does not answer: its regions stay until the next sweep.
  }
  return { files, regions };
}
