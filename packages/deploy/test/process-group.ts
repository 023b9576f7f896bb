/**
 * Commands run as a user runs them in a terminal, for the tests that start npm scripts, bins and
 * servers: each in its own process group (so a stop reaches every child), with a user's environment
 * (no npm or test variables, no `node_modules/.bin` on PATH), output collected. Every group started
 * from a test file is tracked, so its `afterAll` can kill what is left ({@link killAllGroups}).
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** A running command. */
export interface GroupRun {
  readonly child: ChildProcess;
  /** Standard output so far. */
  readonly stdout: () => string;
  /** Standard output and error so far, interleaved as they arrived. */
  readonly output: () => string;
  /** Exit code (128 + n for signal n), once the process and its output are closed. */
  readonly closed: Promise<number>;
}

const running = new Set<ChildProcess>();

/** The environment of a fresh shell: a few login variables and PATH without any `.bin` of npm. */
export function userEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(':')
    .filter((dir) => dir !== '' && !/node_modules[/\\]\.bin|node-gyp-bin/.test(dir))
    .join(':');
  return { ...env, ...extra };
}

/** Starts `command args` in its own process group, in `cwd`, with `env`. */
export function spawnGroup(
  command: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly env: Record<string, string> },
): GroupRun {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const closed = new Promise<number>((resolve) => {
    child.on('close', (code, signal) => {
      running.delete(child);
      resolve(code ?? 128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 9));
    });
  });
  return { child, stdout: () => stdout, output: () => output, closed };
}

/** Sends `signal` to the whole process group of `child` (nothing when it is gone). */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** Kills every group this test file started that is still running. */
export function killAllGroups(): void {
  for (const child of running) killGroup(child, 'SIGKILL');
}
