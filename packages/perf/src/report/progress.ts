/**
 * The progress line of a long sweep, on stderr (stdout keeps perf_analyzer's report): rewritten in
 * place when stderr is a terminal, one plain line per event otherwise (logs, CI). perf_analyzer has
 * no such line; ours says which level and pass is being measured and what the last window saw.
 * @packageDocumentation
 */
import { formatDouble, usec } from './format.js';
import type { LoadLevelResult, PerfProgress } from '../types.js';

/** Where the progress goes: a stream with `write`, and whether it is a terminal. */
export interface ProgressSink {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

function levelLabel(mode: LoadLevelResult['mode'], level: number): string {
  return mode === 'concurrency' ? `concurrency ${level}` : `request rate ${formatDouble(level)}/s`;
}

/** The text of one progress event (no newline). */
function formatProgress(event: PerfProgress, mode: LoadLevelResult['mode'] | undefined): string {
  switch (event.kind) {
    case 'level-start':
      return `[perf-analyzer-ts] ${levelLabel(event.mode, event.level)}: measuring…`;
    case 'window':
      return (
        `[perf-analyzer-ts] ${levelLabel(mode ?? 'concurrency', event.level)}: ` +
        `pass ${event.trial}/${event.maxTrials}, ${formatDouble(event.throughput)} infer/sec, ` +
        `avg latency ${usec(event.avgLatencyUs)} usec` +
        (event.stable ? ', stable' : '')
      );
    case 'level-done': {
      const r = event.result;
      return (
        `[perf-analyzer-ts] ${levelLabel(r.mode, r.level)}: done after ${r.windows} window${r.windows === 1 ? '' : 's'}, ` +
        `${formatDouble(r.client.throughput)} infer/sec` +
        (r.stable ? '' : ' (not stable)')
      );
    }
  }
}

/** A progress reporter: `onProgress` for {@link PerfHooks}, `done()` clears the line at the end. */
export interface ProgressLine {
  readonly onProgress: (event: PerfProgress) => void;
  /** Clears the in-place line (terminal) so the report starts on a clean line. */
  done(): void;
}

/**
 * Writes progress events to `sink` (normally `process.stderr`).
 *
 * ```ts
 * const progress = createProgressLine(process.stderr);
 * const run = await runPerf(options, { onProgress: progress.onProgress });
 * progress.done();
 * ```
 */
export function createProgressLine(sink: ProgressSink): ProgressLine {
  const tty = sink.isTTY === true;
  let mode: LoadLevelResult['mode'] | undefined;
  let shown = false;
  return {
    onProgress(event) {
      if (event.kind === 'level-start') mode = event.mode;
      const text = formatProgress(event, mode);
      if (tty) {
        sink.write(`\r\u001b[2K${text}`);
        shown = true;
      } else {
        sink.write(`${text}\n`);
      }
    },
    done() {
      if (tty && shown) sink.write('\r\u001b[2K');
      shown = false;
    },
  };
}
