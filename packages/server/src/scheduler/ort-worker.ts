/**
 * Worker-thread host of one onnxruntime instance (see `worker-instances.ts`). onnxruntime-node runs
 * `session.run` synchronously on the calling thread, so instances hosted on the main thread would
 * run one after another and block the event loop; each worker owns one session instead.
 *
 * Protocol (parent ⇄ worker): `workerData` = the instance spec → `{type:'ready'}` | `{type:'failed'}`;
 * `{type:'execute', id, inputs}` → `{type:'result', id, outputs, timings}` | `{type:'error', id, …}`;
 * `{type:'dispose'}` → `{type:'disposed'}`.
 * @internal
 * @packageDocumentation
 */
import { parentPort, workerData } from 'node:worker_threads';

import type { Tensor } from '@tritonserver-ts/client/protocol';

import { BackendError } from '../runtime/errors.js';
import { createOnnxInstance, type OnnxInstanceSpec } from '../runtime/onnxruntime-backend.js';
import type { ModelInstance } from '../runtime/types.js';

/** Messages the worker receives. */
export type ToWorker =
  | { readonly type: 'execute'; readonly id: number; readonly inputs: readonly Tensor[] }
  | { readonly type: 'dispose' }
  /** Test hook: the worker throws an uncaught error, as a crashing worker would. */
  | { readonly type: 'crash-for-testing' };

/** Messages the worker sends. */
export type FromWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'failed'; readonly message: string; readonly code: string }
  | {
      readonly type: 'result';
      readonly id: number;
      readonly outputs: readonly Tensor[];
      readonly timings: { computeInputNs: bigint; computeInferNs: bigint; computeOutputNs: bigint };
      /** When the execution started and ended (`process.hrtime.bigint()`, shared by all threads). */
      readonly startNs: bigint;
      readonly endNs: bigint;
    }
  | { readonly type: 'error'; readonly id: number; readonly message: string; readonly code: string }
  | { readonly type: 'disposed' };

function codeOf(error: unknown): string {
  return error instanceof BackendError ? error.code : 'EXECUTION_FAILED';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Buffers of fixed-size outputs, transferred (not copied) to the parent. */
function transferables(tensors: readonly Tensor[]): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const t of tensors) {
    if (Array.isArray(t.data)) continue;
    const buffer = (t.data as { buffer: ArrayBufferLike }).buffer;
    if (
      buffer instanceof ArrayBuffer &&
      buffer.byteLength === (t.data as { byteLength: number }).byteLength
    ) {
      out.add(buffer);
    }
  }
  return [...out];
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
  post({ type: 'ready' });
  port.on('message', (message: ToWorker) => {
    if (message.type === 'dispose') {
      void instance.dispose().finally(() => {
        post({ type: 'disposed' });
        port.close();
      });
      return;
    }
    if (message.type === 'crash-for-testing') throw new Error('crash requested by a test');
    const inputs = new Map(message.inputs.map((t) => [t.name, t]));
    const startNs = process.hrtime.bigint();
    instance
      .execute(inputs)
      .then((result) => {
        const endNs = process.hrtime.bigint();
        const outputs = [...result.outputs.values()];
        post(
          { type: 'result', id: message.id, outputs, timings: { ...result.timings }, startNs, endNs },
          transferables(outputs),
        );
      })
      .catch((error: unknown) => {
        post({ type: 'error', id: message.id, message: messageOf(error), code: codeOf(error) });
      });
  });
}

void main();
