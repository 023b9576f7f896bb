/**
 * What a stopped command left behind, for the tests that stop a CLI the ways a user does (signals to
 * npm, to the CLI, to the process group): its processes (Linux `/proc`), listening TCP ports
 * (`/proc/net/tcp*`) and shared-memory objects (`/dev/shm`).
 * @packageDocumentation
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The `/proc/<pid>/stat` fields a test needs, or undefined when the process does not exist. */
function stat(pid: number): { state: string; ppid: number; pgid: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', ppid: Number(fields[1]), pgid: Number(fields[2]) };
}

/** Whether `pid` runs (a zombie, dead but not yet reaped by its parent, does not). */
export function isRunning(pid: number): boolean {
  const s = stat(pid);
  return s !== undefined && s.state !== 'Z' && s.state !== 'X';
}

/** Every running process of process group `pgid` (a command spawned with `detached: true`). */
export function processGroup(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const s = stat(pid);
    if (s !== undefined && s.pgid === pgid && s.state !== 'Z' && s.state !== 'X') pids.push(pid);
  }
  return pids.sort((a, b) => a - b);
}

/** The command line of `pid` (arguments joined with spaces), or '' once it is gone. */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/** Waits until none of `pids` runs; resolves with those still running after `timeoutMs`. */
export async function waitUntilGone(pids: readonly number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = pids.filter(isRunning);
    if (left.length === 0 || Date.now() >= deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Which of `ports` have a listening TCP socket (any address, IPv4 or IPv6). */
export function listeningPorts(ports: readonly number[]): number[] {
  const listening = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (local === undefined || state !== '0A') continue; // 0A = LISTEN
      listening.add(parseInt(local.slice(local.lastIndexOf(':') + 1), 16));
    }
  }
  return ports.filter((p) => listening.has(p));
}

/** The names in `/dev/shm` that `match` accepts. */
export function sharedMemoryObjects(match: (name: string) => boolean = () => true): string[] {
  try {
    return readdirSync('/dev/shm').filter(match);
  } catch {
    return [];
  }
}
