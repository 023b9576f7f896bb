/**
 * The `model-analyzer-ts` entry point (`bin/model-analyzer-ts.js` imports the compiled file): runs
 * {@link tuneCli} on the process's arguments. The first Ctrl+C stops the sweep cleanly (the current
 * measurement ends, the model's own configuration is loaded again, what was measured is reported);
 * a second one exits at once with 130, leaving the server with whatever configuration it had.
 * @packageDocumentation
 */
import { tuneCli } from '../tune/tune-command.js';
import { errorText } from './perf-command.js';

async function main(): Promise<void> {
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = (): void => {
    interrupts += 1;
    if (interrupts === 1) {
      process.stderr.write(
        '\nInterrupt signal (2) received: finishing the current measurement and restoring the model configuration (Ctrl+C again to exit at once).\n',
      );
      controller.abort();
    } else {
      process.stderr.write('Exiting immediately...\n');
      process.exit(130);
    }
  };
  process.on('SIGINT', onSigint);
  let code: number;
  try {
    code = await tuneCli(process.argv.slice(2), undefined, controller.signal);
  } catch (error) {
    process.stderr.write(`${errorText(error, process.argv.includes('-v'))}\n`);
    code = 1;
  }
  process.off('SIGINT', onSigint);
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  await new Promise<void>((resolve) => process.stderr.write('', () => resolve()));
  process.exit(code);
}

await main();
