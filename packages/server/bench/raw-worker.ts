/**
 * Bench helper: one raw onnxruntime-node session in a worker thread (no server), so that two of them
 * measure the ceiling of two 1-thread sessions running side by side — the same thread budget as the
 * server with 2 instances × 1 intra-op thread.
 *
 * Protocol: `workerData` = `{ modelPath, input, dims, intraOpThreads }` → `'ready'`;
 * `{ batch, durationMs }` → `{ images, seconds }`.
 */
import { parentPort, workerData } from 'node:worker_threads';

import { RawOrt } from './raw-ort.js';

const port = parentPort;
if (port === null) throw new Error('raw-worker must run in a worker thread');
const raw = await RawOrt.create(
  workerData as { modelPath: string; input: string; dims: number[]; intraOpThreads: number },
);
port.on('message', (m: { batch: number; durationMs: number }) => {
  void raw.measureRun(m.batch, m.durationMs).then((r) => port.postMessage(r));
});
port.postMessage('ready');
