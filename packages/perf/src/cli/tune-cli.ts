/**
 * The `model-analyzer-ts` entry point (`bin/model-analyzer-ts.js` imports the compiled file): runs
 * {@link tuneCli} on the process's arguments. The first stop request (Ctrl+C; also SIGTERM, SIGHUP,
 * or, under `npx`, npm being signalled or exiting: `stop-requests.ts`) stops the sweep cleanly (the
 * current measurement ends, the model's own configuration is loaded again, what was measured is
 * reported); a second one exits at once with 128 + the signal's number (130 for SIGINT), leaving the
 * server with whatever configuration it had (its `--shared-memory system` objects are removed).
 * @packageDocumentation
 */
import { tuneCli } from '../tune/tune-command.js';
import { applyHeapGrowthOrExit, errorText } from './perf-command.js';
import { unlinkOwnSharedMemorySync } from '../load/shared-memory-regions.js';
import { onStopRequests, type StopRequest } from './stop-requests.js';

const SIGNAL_NUMBERS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;

async function main(): Promise<void> {
  applyHeapGrowthOrExit();
  const controller = new AbortController();
  const onStop = (request: StopRequest): void => {
    const n = SIGNAL_NUMBERS[request.signal];
    const what =
      request.source === 'signal' ? `Interrupt signal (${String(n)}) received` : request.description;
    if (request.count === 1) {
      process.stderr.write(
        `\n${what}: finishing the current measurement and restoring the model configuration (Ctrl+C again to exit at once).\n`,
      );
      controller.abort();
    } else {
      process.stderr.write('Exiting immediately...\n');
      unlinkOwnSharedMemorySync();
      process.exit(128 + n);
    }
  };
  const stopWatching = onStopRequests(onStop);
  let code: number;
  try {
    code = await tuneCli(process.argv.slice(2), undefined, controller.signal);
  } catch (error) {
    process.stderr.write(`${errorText(error, process.argv.includes('-v'))}\n`);
    code = 1;
  }
  stopWatching();
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  await new Promise<void>((resolve) => process.stderr.write('', () => resolve()));
  process.exit(code);
}

await main();
