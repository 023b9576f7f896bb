/**
 * Worker-thread host of one onnxruntime instance (see `worker-instances.ts`). onnxruntime-node runs
 * `session.run` synchronously on the calling thread, so instances hosted on the main thread would
 * run one after another and block the event loop; each worker owns one session instead.
 *
 * Protocol (parent ⇄ worker): `workerData` = the instance spec → `{type:'ready'}` | `{type:'failed'}`;
 * `{type:'execute', id, inputs}` → `{type:'result', id, outputs, timings, returned}` |
 * `{type:'error', id, …, returned}`, where `returned` hands the inputs' (transferred) buffers back for
 * reuse by the next execution;
 * `{type:'dispose'}` → `{type:'disposed'}`.
 * @internal
 * @packageDocumentation
 */
import { parentPort, workerData } from 'node:worker_threads';

import { BackendError } from '../errors.js';
import { createOnnxInstance, type OnnxInstanceSpec } from './onnxruntime-backend.js';
import type { ModelInstance } from '../types.js';
import { fromWorkerTensor, toWorkerTensor, type WorkerTensor } from './worker-tensors.js';

/** Messages the worker receives. */
export type ToWorker =
  | { readonly type: 'execute'; readonly id: number; readonly inputs: readonly WorkerTensor[] }
  | { readonly type: 'dispose' }
  /** Test hook: the worker throws an uncaught error on its next execution, as a crashing worker would. */
  | { readonly type: 'crash-for-testing'; readonly armed: boolean };

/** Messages the worker sends. */
export type FromWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'failed'; readonly message: string; readonly code: string }
  | {
      readonly type: 'result';
      readonly id: number;
      readonly outputs: readonly WorkerTensor[];
      readonly timings: { computeInputNs: bigint; computeInferNs: bigint; computeOutputNs: bigint };
      /** When the execution started and ended (`process.hrtime.bigint()`, shared by all threads). */
      readonly startNs: bigint;
      readonly endNs: bigint;
      readonly returned: readonly (readonly [string, ArrayBuffer])[];
    }
  | {
      readonly type: 'error';
      readonly id: number;
      readonly message: string;
      readonly code: string;
      readonly returned: readonly (readonly [string, ArrayBuffer])[];
    }
  | { readonly type: 'disposed' };

function codeOf(error: unknown): string {
  return error instanceof BackendError ? error.code : 'EXECUTION_FAILED';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Buffers of outputs that are theirs alone, transferred (not copied) to the parent. */
function transferables(tensors: readonly WorkerTensor[]): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const t of tensors) {
    const buffer = t.data.buffer;
    if (buffer instanceof ArrayBuffer && buffer.byteLength === t.data.byteLength) out.add(buffer);
  }
  return [...out];
}

/** The inputs' whole buffers that no output shares, to hand back to the parent for reuse. */
function returnable(
  inputs: readonly WorkerTensor[],
  keep: ReadonlySet<ArrayBuffer>,
): [string, ArrayBuffer][] {
  const seen = new Set<ArrayBuffer>(keep);
  const out: [string, ArrayBuffer][] = [];
  for (const t of inputs) {
    const buffer = t.data.buffer;
    if (buffer instanceof ArrayBuffer && !seen.has(buffer) && buffer.byteLength > 0) {
      seen.add(buffer);
      out.push([t.name, buffer]);
    }
  }
  return out;
}

async function main(): Promise<void> {
  const port = parentPort;
  if (port === null) throw new Error('ort-worker must run in a worker thread');
  const post = (message: FromWorker, transfer: ArrayBuffer[] = []): void =>
    port.postMessage(message, transfer);
  let instance: ModelInstance;
  try {
    instance = await createOnnxInstance(workerData as OnnxInstanceSpec);
  } catch (error) {
    post({ type: 'failed', message: messageOf(error), code: codeOf(error) });
    return;
  }
  let crashOnNextExecution = false;
  post({ type: 'ready' });
  port.on('message', (message: ToWorker) => {
    if (message.type === 'dispose') {
      void instance.dispose().finally(() => {
        post({ type: 'disposed' });
        port.close();
      });
      return;
    }
    if (message.type === 'crash-for-testing') {
      crashOnNextExecution = message.armed;
      return;
    }
    if (crashOnNextExecution) throw new Error('crash requested by a test');
    const inputs = new Map(message.inputs.map((t) => [t.name, fromWorkerTensor(t)]));
    const startNs = process.hrtime.bigint();
    instance
      .execute(inputs)
      .then((result) => {
        const endNs = process.hrtime.bigint();
        const outputs = [...result.outputs.values()].map((t) => toWorkerTensor(t));
        const transfer = transferables(outputs);
        const returned = returnable(message.inputs, new Set(transfer));
        post(
          {
            type: 'result',
            id: message.id,
            outputs,
            timings: { ...result.timings },
            startNs,
            endNs,
            returned,
          },
          [...transfer, ...returned.map(([, b]) => b)],
        );
      })
      .catch((error: unknown) => {
        const returned = returnable(message.inputs, new Set());
        post(
          { type: 'error', id: message.id, message: messageOf(error), code: codeOf(error), returned },
          returned.map(([, b]) => b),
        );
      });
  });
}

void main();
