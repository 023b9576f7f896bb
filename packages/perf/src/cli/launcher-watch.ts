/**
 * Watching the npm process that started this one, for a CLI run through `npx` / `npm exec` / an npm
 * script. npm runs a command as `sh -c '<command>'` and forwards only SIGINT and SIGTERM, and only
 * to that shell, so:
 *
 * - SIGTERM to npm kills the shell (npm then exits) and this process is re-parented;
 * - SIGHUP (or SIGKILL) to npm kills npm alone, and the shell and this process stay;
 * - SIGINT to npm reaches the shell, which (waiting for its command, as POSIX shells do) keeps it
 *   pending until the command ends: the command never hears of it.
 *
 * None of these is signalled to this process. Linux lets it observe them: every
 * {@link DEFAULT_INTERVAL_MS} it reads `/proc` for the chain of processes above it (the shells npm
 * runs commands in, and the first other process, normally npm itself) and reports
 *
 * - `exited` when a process of that chain is gone (its start time changed, or this process has a
 *   new parent);
 * - `interrupted` when a shell of that chain, whose only child is the next process down, was woken
 *   up (its `voluntary_ctxt_switches` grew): a shell sleeping in `wait` wakes only for a signal it
 *   handles, and the only ones left are SIGINT (the shell's SIGTERM, SIGHUP… kill it) and SIGCHLD
 *   from its child stopping or continuing, which stops this process too; a tick that comes more
 *   than a second late (this process was stopped) starts the counts afresh instead.
 *
 * Inactive (answers `undefined`) outside npm (no `npm_lifecycle_event` / `npm_command` in the
 * environment) and where `/proc` is missing. A shell that has other children is not watched for
 * wake-ups (their exits would wake it), only for exiting.
 *
 * One copy in packages/server/src/process/ and one in packages/perf/src/cli/, kept identical (a perf
 * test compares them): both published packages need it and neither depends on the other.
 * @packageDocumentation
 */
import { readFileSync } from 'node:fs';

/** How often `/proc` is read. */
export const DEFAULT_INTERVAL_MS = 250;

/** Shells npm (`script-shell`) or a user may run a command in. */
const SHELLS: ReadonlySet<string> = new Set(['sh', 'dash', 'bash', 'zsh', 'ksh', 'mksh', 'ash', 'busybox']);

/** A process as `/proc/<pid>/stat` describes it. */
export interface ProcessInfo {
  readonly pid: number;
  readonly ppid: number;
  /** The executable's name (`comm`), e.g. `sh`, `node`, `npm exec tritonserver-ts`. */
  readonly name: string;
  /** Start time in clock ticks since boot: tells a process from a later one with the same pid. */
  readonly startTime: string;
}

/** What {@link watchLauncher} reports. */
export interface LauncherEvent {
  /** `exited`: the process is gone; `interrupted`: the shell received SIGINT. */
  readonly kind: 'exited' | 'interrupted';
  readonly process: ProcessInfo;
}

/** A running watch. */
export interface LauncherWatch {
  /** The processes watched, nearest first (the shells, then the launcher). */
  readonly chain: readonly ProcessInfo[];
  /** Stops watching (idempotent). */
  close(): void;
}

/** Options of {@link watchLauncher} (tests override them). */
export interface LauncherWatchOptions {
  readonly intervalMs?: number;
  readonly env?: NodeJS.ProcessEnv;
  /** Where procfs is mounted (default `/proc`). */
  readonly procRoot?: string;
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** `/proc/<pid>/stat`, or undefined when the process does not exist. */
export function readProcessInfo(pid: number, procRoot = '/proc'): ProcessInfo | undefined {
  const stat = read(`${procRoot}/${pid}/stat`);
  if (stat === undefined) return undefined;
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after the last ')'.
  const open = stat.indexOf('(');
  const close = stat.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const fields = stat.slice(close + 2).split(' ');
  // After comm: state(0) ppid(1) … starttime is field 22 of the whole line, index 19 here.
  const ppid = Number(fields[1]);
  const startTime = fields[19];
  if (!Number.isInteger(ppid) || startTime === undefined) return undefined;
  return { pid, ppid, name: stat.slice(open + 1, close), startTime };
}

/** The number of times the process went to sleep (and was woken up since). */
function wakeUps(pid: number, procRoot: string): number | undefined {
  const status = read(`${procRoot}/${pid}/status`);
  const m = status === undefined ? null : /^voluntary_ctxt_switches:\s*(\d+)$/m.exec(status);
  return m === null ? undefined : Number(m[1]);
}

/** The process's children, or undefined when the kernel does not list them. */
function childrenOf(pid: number, procRoot: string): number[] | undefined {
  const text = read(`${procRoot}/${pid}/task/${pid}/children`);
  if (text === undefined) return undefined;
  return text
    .trim()
    .split(/\s+/)
    .filter((s) => s !== '')
    .map(Number);
}

/** Whether `env` says npm started this process (an npm script, `npx` or `npm exec`). */
export function launchedByNpm(env: NodeJS.ProcessEnv): boolean {
  return env.npm_lifecycle_event !== undefined || env.npm_command !== undefined;
}

/** The shells between this process and its launcher, then the launcher (nearest first). */
function launcherChain(procRoot: string): ProcessInfo[] {
  const chain: ProcessInfo[] = [];
  let pid = process.ppid;
  while (pid > 1 && chain.length < 8) {
    const info = readProcessInfo(pid, procRoot);
    if (info === undefined) break;
    chain.push(info);
    if (!SHELLS.has(info.name)) break;
    pid = info.ppid;
  }
  return chain;
}

/**
 * Starts watching the processes that launched this one (see the module documentation); `onEvent`
 * is called for each event (an `exited` event ends the watch). The timer does not keep the process
 * alive. Answers undefined when there is nothing to watch.
 */
export function watchLauncher(
  onEvent: (event: LauncherEvent) => void,
  options: LauncherWatchOptions = {},
): LauncherWatch | undefined {
  const env = options.env ?? process.env;
  const procRoot = options.procRoot ?? '/proc';
  const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
  if (!launchedByNpm(env) || readProcessInfo(process.pid, procRoot) === undefined) return undefined;
  const chain = launcherChain(procRoot);
  if (chain.length === 0) return undefined;
  const parent = process.ppid;

  /** Shells watched for wake-ups: their wake-up count, and the one child they may have. */
  const shells = new Map<number, { count: number; child: number }>();
  const baseline = (): void => {
    for (const [pid, shell] of shells) {
      const count = wakeUps(pid, procRoot);
      if (count === undefined) shells.delete(pid);
      else shell.count = count;
    }
  };
  chain.forEach((info, i) => {
    if (!SHELLS.has(info.name)) return;
    const child = i === 0 ? process.pid : (chain[i - 1]?.pid ?? -1);
    const kids = childrenOf(info.pid, procRoot);
    if (kids?.length === 1 && kids[0] === child) shells.set(info.pid, { count: 0, child });
  });
  baseline();

  let last = Date.now();
  let closed = false;
  const timer = setInterval(() => {
    const now = Date.now();
    const late = now - last > intervalMs + 1000;
    last = now;
    if (process.ppid !== parent) {
      finish({ kind: 'exited', process: chain[0] as ProcessInfo });
      return;
    }
    for (const info of chain) {
      const current = readProcessInfo(info.pid, procRoot);
      if (current === undefined || current.startTime !== info.startTime) {
        finish({ kind: 'exited', process: info });
        return;
      }
    }
    if (late) {
      baseline();
      return;
    }
    for (const [pid, shell] of shells) {
      const kids = childrenOf(pid, procRoot);
      const count = wakeUps(pid, procRoot);
      if (kids === undefined || kids.length !== 1 || kids[0] !== shell.child || count === undefined) {
        shells.delete(pid);
        continue;
      }
      if (count > shell.count) {
        shell.count = count;
        const info = chain.find((p) => p.pid === pid);
        if (info !== undefined) onEvent({ kind: 'interrupted', process: info });
        if (closed) return;
      }
    }
  }, intervalMs);
  timer.unref();

  const close = (): void => {
    closed = true;
    clearInterval(timer);
  };
  const finish = (event: LauncherEvent): void => {
    close();
    onEvent(event);
  };
  return { chain, close };
}
