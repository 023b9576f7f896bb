// The npm watch of `src/process/launcher-watch.ts` on a fake /proc (deterministic; the real thing runs
// in stop.test.ts): this process under `sh -c` under npm. A wake-up of the shell is a SIGINT only
// while the shell's one child is this process (another child's exit would wake it too); the chain
// exiting (a start time that changed) ends the watch; outside npm nothing is watched.
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { readProcessInfo, watchLauncher, type LauncherEvent } from '../../src/process/launcher-watch.js';

const NPM = 424242;
const SHELL = process.ppid;
const INTERVAL = 20;

let proc: string;

/**
 * Writes `path` whole in one step (a temporary file renamed over it), so the watch, which reads the
 * fake tree every 20 ms, never sees a file half written (an empty `stat` reads as a process gone).
 */
async function put(path: string, text: string): Promise<void> {
  await writeFile(`${path}.tmp`, text);
  await rename(`${path}.tmp`, path);
}

/** Writes `/proc/<pid>/{stat,status,task/<pid>/children}` of the fake tree. */
async function fake(
  pid: number,
  name: string,
  ppid: number,
  start: string,
  wakeUps = 3,
  kids: number[] = [],
) {
  await mkdir(join(proc, String(pid), 'task', String(pid)), { recursive: true });
  const rest = ['S', ppid, pid, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20, 0, 1, 0, start, 0, 0];
  await put(join(proc, String(pid), 'stat'), `${pid} (${name}) ${rest.join(' ')}\n`);
  await put(
    join(proc, String(pid), 'status'),
    `Name:\t${name}\nvoluntary_ctxt_switches:\t${wakeUps}\nnonvoluntary_ctxt_switches:\t0\n`,
  );
  await put(join(proc, String(pid), 'task', String(pid), 'children'), kids.map((k) => `${k} `).join(''));
}

const tick = (n = 3): Promise<void> => new Promise((r) => setTimeout(r, INTERVAL * n));

beforeEach(async () => {
  proc = await mkdtemp(join(tmpdir(), 'fake-proc-'));
  await fake(process.pid, 'node', SHELL, '300');
  await fake(SHELL, 'sh', NPM, '200', 3, [process.pid]);
  await fake(NPM, 'npm exec triton', 1, '100');
});
afterEach(async () => {
  await rm(proc, { recursive: true, force: true });
});

describe('launcher watch', () => {
  it('reads stat lines whose name holds spaces and parentheses', async () => {
    await fake(777, 'a (b) c', 1, '55');
    expect(readProcessInfo(777, proc)).toEqual({ pid: 777, ppid: 1, name: 'a (b) c', startTime: '55' });
    expect(readProcessInfo(778, proc)).toBeUndefined();
  });

  it('outside npm, nothing is watched', () => {
    expect(watchLauncher(() => undefined, { env: {}, procRoot: proc, intervalMs: INTERVAL })).toBeUndefined();
  });

  it('the shell waking up is a SIGINT; npm exiting ends the watch', async () => {
    const events: LauncherEvent[] = [];
    const watch = watchLauncher((e) => events.push(e), {
      env: { npm_command: 'exec' },
      procRoot: proc,
      intervalMs: INTERVAL,
    });
    expect(watch?.chain.map((p) => p.name)).toEqual(['sh', 'npm exec triton']);
    await tick();
    expect(events).toEqual([]);
    await fake(SHELL, 'sh', NPM, '200', 4, [process.pid]);
    await tick();
    expect(events.map((e) => [e.kind, e.process.pid])).toEqual([['interrupted', SHELL]]);
    // Another process under npm's pid: npm exited and the pid was reused.
    await fake(NPM, 'bash', 1, '999');
    await tick();
    expect(events.map((e) => [e.kind, e.process.pid])).toEqual([
      ['interrupted', SHELL],
      ['exited', NPM],
    ]);
    await fake(SHELL, 'sh', NPM, '200', 9, [process.pid]);
    await tick();
    expect(events).toHaveLength(2);
  });

  it('a shell with another child is not watched for wake-ups (its exit would wake the shell)', async () => {
    await fake(SHELL, 'sh', NPM, '200', 3, [process.pid, 31337]);
    const events: LauncherEvent[] = [];
    const watch = watchLauncher((e) => events.push(e), {
      env: { npm_lifecycle_event: 'dev' },
      procRoot: proc,
      intervalMs: INTERVAL,
    });
    await fake(SHELL, 'sh', NPM, '200', 4, [process.pid]);
    await tick();
    expect(events).toEqual([]);
    // It is still watched for exiting.
    await rm(join(proc, String(SHELL)), { recursive: true });
    await tick();
    expect(events.map((e) => [e.kind, e.process.pid])).toEqual([['exited', SHELL]]);
    watch?.close();
  });
});
