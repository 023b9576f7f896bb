/**
 * The `perf-analyzer-ts` command as a function (the entry point `perf-cli.ts` adds the process's
 * SIGINT handling and exit code): perf_analyzer's command line. Parses the options, runs the measurement with a
 * progress line on stderr, prints perf_analyzer's console report on stdout, then writes `-f` (CSV,
 * plus one per composing model of an ensemble) and `--profile-export-file` (JSON).
 *
 * perf_analyzer's warnings (a level not stable, `-l` reached, …) go to stderr as they happen.
 * Exit codes: 0 when the run finished (or was stopped by Ctrl+C and reported what it measured),
 * 1 when it failed (the error's code and message on stderr; the stack too with `-v`), including
 * perf_analyzer's "Failed to obtain stable measurement." when the only level did not stabilise;
 * 2 for a bad command line. The first Ctrl+C lets in-flight requests finish and reports the levels measured so
 * far (perf_analyzer's "Waiting for in-flight inferences to complete."); a second one exits at once.
 * @packageDocumentation
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

import { applyHeapGrowingPercent } from '@tritonserver-ts/protocol';

import { buildInputDataset } from '../data/input-data.js';
import { isPerfError, PerfError } from '../errors.js';
import { parsePerfArgs, perfUsage } from '../options/parse-perf-args.js';
import type { PerfOptions } from '../options/perf-options.js';
import { runPerf } from '../perf.js';
import { formatConsoleReport, levelRejection } from '../report/console-report.js';
import { composingCsvReports, formatCsvReport } from '../report/csv-report.js';
import { epochOffsetNs, formatProfileExport } from '../report/profile-export.js';
import { createProgressLine } from '../report/progress.js';
import type { PerfRun } from '../types.js';

/** Where the CLI writes; `process` by default, replaceable for tests. */
export interface CliIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown; readonly isTTY?: boolean };
}

async function writeText(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

/**
 * The commands' V8 heap growth (`applyHeapGrowingPercent`, ADR 18): without it the gRPC client spends
 * about half its CPU in full garbage collections. A bad `TRITONSERVER_TS_HEAP_GROWING_PERCENT` is a
 * usage error: its message on stderr, exit 2. Called first by both bins' entry points.
 */
export function applyHeapGrowthOrExit(): void {
  try {
    applyHeapGrowingPercent();
  } catch (error) {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  }
}

/** `error: CODE: message` for a {@link PerfError} (the stack too when `verbose`). */
export function errorText(error: unknown, verbose: boolean): string {
  if (isPerfError(error)) {
    const text = `error: ${error.code}: ${error.message}`;
    return verbose && error.stack !== undefined ? `${text}\n${error.stack}` : text;
  }
  if (error instanceof Error) {
    return verbose && error.stack !== undefined ? `error: ${error.stack}` : `error: ${error.message}`;
  }
  return `error: ${String(error)}`;
}

/**
 * perf_analyzer's failure of a whole run (its STABILITY_ERROR): the sweep's only level was not
 * stable — "Failed to obtain stable measurement." (not for `--request-intervals`, which it does
 * not sweep).
 */
function stabilityError(run: PerfRun): PerfError | undefined {
  const [first, ...rest] = run.results;
  return first !== undefined && rest.length === 0 && !first.stable && first.mode !== 'request_intervals'
    ? new PerfError('UNSTABLE', 'Failed to obtain stable measurement.')
    : undefined;
}

/** Writes `-f` and `--profile-export-file` for a finished run (CSV warnings go to stderr). */
async function writeFiles(options: PerfOptions, run: PerfRun, offsetNs: bigint, io: CliIo): Promise<void> {
  const csvFile = options.latencyReportFile;
  if (csvFile !== undefined) {
    const csv = formatCsvReport(options, run);
    if (csv.text !== '') {
      for (const warning of csv.warnings) io.stderr.write(`${warning}\n`);
      await writeText(csvFile, csv.text);
      for (const composing of composingCsvReports(options, run, csvFile)) {
        for (const warning of composing.warnings) io.stderr.write(`${warning}\n`);
        await writeText(composing.path, composing.text);
      }
    }
  }
  const exportFile = options.profileExportFile;
  if (exportFile !== undefined) {
    // The data the run sent, rebuilt from the same options (the data is seeded, so it is the same).
    const dataset = await buildInputDataset(run.model, options);
    await writeText(exportFile, formatProfileExport(run, offsetNs, dataset));
  }
}

/**
 * Runs the CLI on `argv` (without the program name) and resolves with the exit code.
 * @param argv - perf_analyzer's options
 * @param io - where to write (default: the process's streams)
 * @param signal - stops the run as Ctrl+C does (the CLI's own SIGINT handler uses it too)
 */
export async function perfCli(
  argv: readonly string[],
  io: CliIo = { stdout: process.stdout, stderr: process.stderr },
  signal?: AbortSignal,
): Promise<number> {
  let options: PerfOptions;
  try {
    const parsed = parsePerfArgs(argv);
    if ('help' in parsed) {
      io.stdout.write(`${perfUsage()}\n`);
      return 0;
    }
    options = parsed;
  } catch (error) {
    if (isPerfError(error, 'USAGE')) {
      io.stderr.write(
        `perf-analyzer-ts: ${error.message}\nRun 'perf-analyzer-ts --help' for the list of options.\n`,
      );
      return 2;
    }
    throw error;
  }

  const progress = createProgressLine(io.stderr);
  const offsetNs = epochOffsetNs();
  let run: PerfRun;
  try {
    const warn = (message: string): void => {
      progress.done();
      io.stderr.write(`${message}\n`);
    };
    run = await runPerf(options, {
      onProgress: (event) => {
        progress.onProgress(event);
        // perf_analyzer's line for a level it leaves out (not stable, or -l reached), when it ends.
        const rejection = event.kind === 'level-done' ? levelRejection(options, event.result) : undefined;
        if (rejection !== undefined) warn(rejection);
      },
      onWarning: warn,
      ...(signal === undefined ? {} : { signal }),
    });
  } catch (error) {
    progress.done();
    io.stderr.write(`${errorText(error, options.verbose)}\n`);
    return 1;
  }
  progress.done();

  io.stdout.write(formatConsoleReport(options, run));
  // perf_analyzer fails a run whose only level did not stabilise, and then writes no files.
  const unstable = signal?.aborted === true ? undefined : stabilityError(run);
  if (unstable !== undefined) {
    io.stderr.write(`${errorText(unstable, options.verbose)}\n`);
    return 1;
  }
  try {
    await writeFiles(options, run, offsetNs, io);
  } catch (error) {
    io.stderr.write(`${errorText(error, options.verbose)}\n`);
    return 1;
  }
  return 0;
}
