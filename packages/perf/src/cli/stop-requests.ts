/**
 * Every way a long-running CLI is asked to stop, as one stream of stop requests: SIGINT, SIGTERM
 * and SIGHUP to the process; the parent that started it with an IPC channel going away (`npm start`'s
 * launcher does so); and, when npm started it, npm being signalled or exiting (`launcher-watch.ts`).
 *
 * One action often arrives several ways: Ctrl+C sends SIGINT to the whole process group, npm
 * forwards it once more, a launcher passes it on to its children. Requests within
 * {@link DEFAULT_MERGE_MS} of the last one taken are the same request; a later one is the second
 * (by convention: stop now).
 *
 * One copy in packages/server/src/process/ and one in packages/perf/src/cli/, kept identical (a perf
 * test compares them).
 * @packageDocumentation
 */
import { watchLauncher, type LauncherEvent } from './launcher-watch.js';

/** Requests closer together than this are one. */
export const DEFAULT_MERGE_MS = 1000;

/** The signals a stop request stands for. */
export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

/** One stop request. */
export interface StopRequest {
  /** The signal received, or the one the event stands for (npm interrupted: SIGINT; gone: SIGHUP). */
  readonly signal: StopSignal;
  /**
   * `signal`: received by this process; `parent`: the parent that opened an IPC channel went away;
   * `launcher`: what the npm watch saw (`launcher-watch.ts`).
   */
  readonly source: 'signal' | 'parent' | 'launcher';
  /** What happened, for the log: `Received SIGTERM`, `npm (pid 12) exited`… */
  readonly description: string;
  /** 1 for the first request, 2 for the second… */
  readonly count: number;
}

/** Options of {@link onStopRequests}. */
export interface StopRequestOptions {
  readonly mergeMs?: number;
  /** Watch the npm process that started this one (default true; only active under npm on Linux). */
  readonly watchLauncher?: boolean;
  /** Passed to the launcher watch (tests). */
  readonly env?: NodeJS.ProcessEnv;
  readonly intervalMs?: number;
}

const SIGNALS: readonly StopSignal[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function describeLauncherEvent(event: LauncherEvent): { signal: StopSignal; description: string } {
  const who = `${event.process.name} (pid ${String(event.process.pid)})`;
  return event.kind === 'exited'
    ? { signal: 'SIGHUP', description: `${who}, which started this process, exited` }
    : { signal: 'SIGINT', description: `${who}, which started this process, received SIGINT` };
}

/**
 * Calls `handler` for every stop request (see the module documentation) until the returned
 * function is called. Installing it replaces the default action of SIGINT, SIGTERM and SIGHUP
 * (terminating the process) with `handler`.
 */
export function onStopRequests(
  handler: (request: StopRequest) => void,
  options: StopRequestOptions = {},
): () => void {
  const mergeMs = options.mergeMs ?? DEFAULT_MERGE_MS;
  let count = 0;
  let lastAt = -Infinity;
  const request = (signal: StopSignal, source: StopRequest['source'], description: string): void => {
    const now = performance.now();
    if (now - lastAt < mergeMs) return;
    lastAt = now;
    count += 1;
    handler({ signal, source, description, count });
  };

  const listeners = SIGNALS.map((signal) => {
    const listener = (): void => request(signal, 'signal', `Received ${signal}`);
    process.on(signal, listener);
    return [signal, listener] as const;
  });

  // A parent that opened an IPC channel (child_process.fork, or stdio 'ipc') stops this process by
  // closing it or by exiting. The channel must not keep the process alive on its own.
  const onDisconnect = (): void => request('SIGHUP', 'parent', 'The parent process disconnected');
  const channel = process.channel;
  if (channel !== undefined) {
    channel.unref();
    process.once('disconnect', onDisconnect);
  }

  const watch =
    options.watchLauncher === false
      ? undefined
      : watchLauncher(
          (event) => {
            const { signal, description } = describeLauncherEvent(event);
            request(signal, 'launcher', description);
          },
          {
            ...(options.env === undefined ? {} : { env: options.env }),
            ...(options.intervalMs === undefined ? {} : { intervalMs: options.intervalMs }),
          },
        );

  return () => {
    for (const [signal, listener] of listeners) process.off(signal, listener);
    process.off('disconnect', onDisconnect);
    watch?.close();
  };
}
