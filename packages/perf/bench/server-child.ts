/**
 * Bench helper: the embedded server in a process of its own, so that its CPU time is read from
 * /proc apart from the load generator's. Serves the repository given with `--model-repository`
 * under explicit model control (the tuner reloads models with configuration overrides), loads every
 * model named by `--load-model`, opens the HTTP and the gRPC front end on free ports of 127.0.0.1,
 * prints `{"port":N,"grpcPort":M}` once both listen and exits on SIGTERM.
 */
import { parseArgs } from 'node:util';

import { startServer } from '@tritonserver-ts/server';

const { values } = parseArgs({
  options: {
    'model-repository': { type: 'string' },
    'load-model': { type: 'string', multiple: true },
  },
});
const repository = values['model-repository'];
if (repository === undefined) throw new Error('server-child: --model-repository is required');
const running = await startServer({
  modelRepositories: [repository],
  modelControlMode: 'explicit',
  loadModels: values['load-model'] ?? [],
  httpPort: 0,
  grpcPort: 0,
  grpcAddress: '127.0.0.1',
  exitOnError: true,
  log: { log_info: false, log_warning: false },
  logSink: (line) => process.stderr.write(`${line}\n`),
});
process.stdout.write(`${JSON.stringify({ port: running.httpPort, grpcPort: running.grpcPort })}\n`);
process.once('SIGTERM', () => {
  void running.close().then(() => process.exit(0));
});
