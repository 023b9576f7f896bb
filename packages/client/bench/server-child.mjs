// Bench helper: runs the embedded server in its own process (so its CPU time is measured alone, from
// /proc/<pid>/stat) with HTTP and gRPC on free ports of 127.0.0.1, on a temporary model repository:
// the generated `simple` model and, when argv[2] names it, a copy of the food model's directory (or,
// with argv[2] `--decoupled`, only the decoupled Python test model `py_decoupled`).
// Prints `{"url":…,"grpcUrl":…}` on stdout once listening; closes and exits on SIGTERM or when
// stdin ends (the bench exited).
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const serverModule = '@tritonserver-ts/server';
const testingModule = '@tritonserver-ts/server/testing';
const { startServer } = await import(serverModule);
const { writeTestModelRepository, writePythonModels, decoupledPythonModel } = await import(testingModule);

// `--decoupled`: only the decoupled Python test model py_decoupled (IN = n → n responses).
const decoupled = process.argv[2] === '--decoupled';
const foodModelDir = decoupled ? undefined : process.argv[2];
const repo = await mkdtemp(join(tmpdir(), 'client-bench-'));
if (decoupled) await writePythonModels(repo, [decoupledPythonModel()]);
else await writeTestModelRepository(repo, { only: ['simple'] });
if (foodModelDir !== undefined) {
  // A copy, not a link: the server refuses model files that resolve outside the model directory.
  await cp(foodModelDir, join(repo, 'food_classifier_onnx'), { recursive: true });
}
const server = await startServer({
  modelRepositories: [repo],
  httpPort: 0,
  grpcPort: 0,
  exitOnError: true,
  ...(decoupled ? { python: { interpreter: '/usr/bin/python3' } } : {}),
  log: { log_info: false, log_warning: false },
  logSink: (line) => process.stderr.write(`${line}\n`),
});
process.stdout.write(`${JSON.stringify({ url: server.url, grpcUrl: server.grpcUrl })}\n`);
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void server
    .close()
    .then(() => rm(repo, { recursive: true, force: true }))
    .then(() => process.exit(0));
};
process.on('SIGTERM', stop);
// The bench holds our stdin open: when it dies without stopping us, stdin ends and we stop too.
process.stdin.on('end', stop);
process.stdin.resume();
