/**
 * The `perf-analyzer-ts` entry point (`bin/perf-analyzer-ts.js` imports the compiled file): runs
 * {@link perfCli} on the process's arguments. The first stop request (Ctrl+C; also SIGTERM, SIGHUP,
 * or, under `npx`, npm being signalled or exiting: `stop-requests.ts`) stops the run cleanly
 * (in-flight requests finish, the levels measured so far are reported, as perf_analyzer's "Waiting
 * for in-flight inferences to complete."); a second one exits at once with 128 + the signal's
 * number (130 for SIGINT), removing its `--shared-memory system` objects first.
 * @packageDocumentation
 */
import { applyHeapGrowthOrExit, errorText, perfCli } from './perf-command.js';
import { unlinkOwnSharedMemorySync } from '../load/shared-memory-regions.js';
import { onStopRequests, type StopRequest } from './stop-requests.js';

const SIGNAL_NUMBERS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;

/** The process entry point: stop requests and the exit code. */
async function main(): Promise<void> {
  applyHeapGrowthOrExit();
  const controller = new AbortController();
  const onStop = (request: StopRequest): void => {
    const n = SIGNAL_NUMBERS[request.signal];
    process.stdout.write(
      request.source === 'signal'
        ? `Interrupt signal (${String(n)}) received.\n`
        : `${request.description}.\n`,
    );
    if (request.count === 1) {
      process.stdout.write('Waiting for in-flight inferences to complete.\n');
      controller.abort();
    } else {
      process.stdout.write('Exiting immediately...\n');
      unlinkOwnSharedMemorySync();
      process.exit(128 + n);
    }
  };
  const stopWatching = onStopRequests(onStop);
  let code: number;
  try {
    code = await perfCli(process.argv.slice(2), undefined, controller.signal);
  } catch (error) {
    process.stderr.write(`${errorText(error, process.argv.includes('-v'))}\n`);
    code = 1;
  }
  stopWatching();
  // Exit once the output is flushed, whatever handles a client library may still hold.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  await new Promise<void>((resolve) => process.stderr.write('', () => resolve()));
  process.exit(code);
}

await main();
