/**
 * The `model-analyzer-ts` command as a function (the entry point `cli/tune-cli.ts` adds the
 * process's SIGINT handling and exit code): parses the command line, runs the sweep with a progress
 * line on stderr, prints the results table and the winner on stdout, and writes report.html,
 * results.csv and best/config.pbtxt into the output directory.
 *
 * Exit codes (as perf-analyzer-ts): 0 when a configuration satisfied the constraints (also after a
 * Ctrl+C, with what was measured), 1 when the run failed, no configuration satisfied the
 * constraints, or the model's configuration could not be put back; 2 for a bad command line.
 * @packageDocumentation
 */
import { errorText, type CliIo } from '../cli/perf-command.js';
import { isPerfError } from '../errors.js';
import type { TuneCliOptions } from './parse-tune-args.js';
import { parseTuneArgs, tuneUsage } from './parse-tune-args.js';
import { formatTuneTable, summarySentence } from './results-table.js';
import { describeSettings } from './search-space.js';
import type { TuneHooks, TuneProgress, TuneResult } from './tuner.js';
import { tune } from './tuner.js';
import { writeTuneOutputs } from './write-outputs.js';

const NAME = 'model-analyzer-ts';

/**
 * A progress reporter on `io.stderr`. On a terminal: one line updated in place (each step kept on
 * its own line with `-v`). In a log: one line per configuration and per measurement, no per-window
 * lines.
 */
function progressReporter(
  io: CliIo,
  verbose: boolean,
): { onProgress: (e: TuneProgress) => void; done: () => void } {
  const tty = io.stderr.isTTY === true;
  let shown = false;
  let current = '';
  let totalConfigs = 0;
  /** `step`: a configuration or measurement; `window`: a perf window; `note`: always its own line. */
  const line = (text: string, kind: 'step' | 'window' | 'note'): void => {
    const transient = kind === 'window' || (kind === 'step' && !verbose);
    if (tty) {
      io.stderr.write(`\r\u001b[2K${text}${transient ? '' : '\n'}`);
      shown = transient;
    } else if (kind !== 'window') {
      io.stderr.write(`${text}\n`);
    }
  };
  return {
    onProgress(e) {
      switch (e.kind) {
        case 'space':
          totalConfigs = e.space.variants.length;
          line(
            `[${NAME}] ${String(totalConfigs)} configuration${totalConfigs === 1 ? '' : 's'} x concurrency ${e.space.concurrency.join(', ')}` +
              (e.space.skipped.length > 0
                ? ` (${String(e.space.skipped.length)} invalid combinations skipped)`
                : ''),
            'note',
          );
          break;
        case 'config-start':
          current = `[${NAME}] ${String(e.index)}/${String(e.total)} ${e.variant.name}`;
          line(`${current}: ${describeSettings(e.variant.settings)}`, 'step');
          break;
        case 'perf':
          if (e.event.kind === 'window') {
            line(
              `${current}, concurrency ${String(e.event.level)}: pass ${String(e.event.trial)}/${String(e.event.maxTrials)}, ${e.event.throughput.toFixed(1)} infer/sec`,
              'window',
            );
          }
          break;
        case 'measurement': {
          const m = e.measurement;
          line(
            `${current}, concurrency ${String(m.concurrency)}: ${m.throughput.toFixed(1)} infer/sec, p99 ${m.latencyMs.p99.toFixed(2)} ms${m.stable ? '' : ' (not stable)'}`,
            'step',
          );
          break;
        }
        case 'config-error':
          line(`[${NAME}] ${e.variant.name}: not measured: ${e.error}`, 'note');
          break;
        case 'warning':
          if (verbose) line(`[${NAME}] ${e.variant.name}: ${e.message.trim()}`, 'note');
          break;
        case 'restored':
          line(`[${NAME}] the model's own configuration is loaded again`, 'step');
          break;
      }
    },
    done() {
      if (tty && shown) io.stderr.write('\r\u001b[2K');
      shown = false;
    },
  };
}

/**
 * Runs the command on `argv` (without the program name) and resolves with the exit code.
 * @param hooks - extra tuner hooks (tests inject a client or the perf engine here)
 */
export async function tuneCli(
  argv: readonly string[],
  io: CliIo = { stdout: process.stdout, stderr: process.stderr },
  signal?: AbortSignal,
  hooks: Omit<TuneHooks, 'onProgress' | 'signal'> = {},
): Promise<number> {
  let cli: TuneCliOptions;
  try {
    const parsed = parseTuneArgs(argv);
    if ('help' in parsed) {
      io.stdout.write(`${tuneUsage()}\n`);
      return 0;
    }
    cli = parsed;
  } catch (error) {
    if (isPerfError(error, 'USAGE')) {
      io.stderr.write(`${NAME}: ${error.message}\nRun '${NAME} --help' for the list of options.\n`);
      return 2;
    }
    throw error;
  }

  const progress = cli.quiet ? undefined : progressReporter(io, cli.verbose);
  let result: TuneResult;
  try {
    result = await tune(cli.tune, {
      ...hooks,
      ...(progress === undefined ? {} : { onProgress: progress.onProgress }),
      ...(signal === undefined ? {} : { signal }),
    });
  } catch (error) {
    progress?.done();
    io.stderr.write(`${errorText(error, cli.verbose)}\n`);
    return 1;
  }
  progress?.done();

  io.stdout.write(`${formatTuneTable(result)}\n\n${summarySentence(result)}\n`);
  io.stdout.write(`Total time: ${(result.durationMs / 1000).toFixed(1)} s\n`);
  let code = result.best === undefined ? 1 : 0;
  try {
    const files = await writeTuneOutputs(result, cli.outputDir);
    io.stdout.write(`Report: ${files.report}\nResults: ${files.csv}\n`);
    if (files.bestConfig !== undefined) io.stdout.write(`Best config: ${files.bestConfig}\n`);
    else io.stdout.write(`Best config: not written (${files.bestConfigError ?? ''})\n`);
  } catch (error) {
    io.stderr.write(`${errorText(error, cli.verbose)}\n`);
    code = 1;
  }
  if (result.restoreError !== undefined) {
    io.stderr.write(
      `error: TUNE: the model's own configuration could not be loaded again: ${result.restoreError}\n`,
    );
    code = 1;
  }
  if (result.aborted) io.stderr.write(`[${NAME}] stopped early: the measurements so far are reported\n`);
  return code;
}
