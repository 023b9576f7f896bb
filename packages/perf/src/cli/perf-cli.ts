/**
 * The `perf-analyzer-ts` entry point (`bin/perf-analyzer-ts.js` imports the compiled file): runs
 * {@link perfCli} on the process's arguments. The first Ctrl+C stops the run cleanly (in-flight
 * requests finish, the levels measured so far are reported, as perf_analyzer's "Waiting for
 * in-flight inferences to complete."); a second one exits at once with 130.
 * @packageDocumentation
 */
import { errorText, perfCli } from './perf-command.js';

/** The process entry point: SIGINT handling and the exit code. */
async function main(): Promise<void> {
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = (): void => {
    interrupts += 1;
    process.stdout.write('Interrupt signal (2) received.\n');
    if (interrupts === 1) {
      process.stdout.write('Waiting for in-flight inferences to complete.\n');
      controller.abort();
    } else {
      process.stdout.write('Exiting immediately...\n');
      process.exit(130);
    }
  };
  process.on('SIGINT', onSigint);
  let code: number;
  try {
    code = await perfCli(process.argv.slice(2), undefined, controller.signal);
  } catch (error) {
    process.stderr.write(`${errorText(error, process.argv.includes('-v'))}\n`);
    code = 1;
  }
  process.off('SIGINT', onSigint);
  // Exit once the output is flushed, whatever handles a client library may still hold.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  await new Promise<void>((resolve) => process.stderr.write('', () => resolve()));
  process.exit(code);
}

await main();
