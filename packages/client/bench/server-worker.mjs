// Runs the embedded server in its own thread for the round-trip benchmark, so client and server do
// not share one event loop. Receives { only } via workerData; posts { url } when listening and
// closes the server when it receives 'close'.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';

const serverModule = '@tritonserver-ts/server';
const testingModule = '@tritonserver-ts/server/testing';
const { startServer } = await import(serverModule);
const { writeTestModelRepository } = await import(testingModule);

const repo = await mkdtemp(join(tmpdir(), 'client-bench-'));
await writeTestModelRepository(repo, { only: workerData.only });
const server = await startServer({ modelRepositories: [repo], httpPort: 0, logSink: () => undefined });
parentPort.on('message', async (message) => {
  if (message !== 'close') return;
  await server.close();
  await rm(repo, { recursive: true, force: true });
  parentPort.postMessage({ closed: true });
});
parentPort.postMessage({ url: server.url });
