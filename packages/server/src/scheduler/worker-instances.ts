/**
 * Model instances that run in worker threads, one onnxruntime session per worker, so the instances
 * of an instance group really execute at the same time and the main event loop stays free for
 * HTTP while models run. (onnxruntime-node's `session.run` is synchronous on its calling thread:
 * with sessions on the main thread, N instances would run one after another.)
 *
 * {@link createWorkerInstances} has the signature of `runtime/createInstances` and is a drop-in for
 * the core's `services.createInstances`: the runtime creates and validates the instances exactly as
 * usual (kinds, `KIND_GPU` handling, thread parameters, signature checks, errors); each onnxruntime
 * instance is then re-hosted in its own worker with the same spec, and the main-thread session is
 * released. Other backends (identity) stay on the main thread.
 *
 * Costs: each input is copied once into the worker (timed into `compute_input`), outputs are
 * transferred back without copying. Loading creates each session twice (once to validate).
 * @packageDocumentation
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

import type { Tensor } from '@tritonserver-ts/client/protocol';

import type { ModelDefinition } from '../repository/types.js';
import {
  checkBackend,
  createInstances,
  type CreateInstancesOptions,
  type RuntimeModelInstance,
} from '../runtime/backends.js';
import { BackendError, type BackendErrorCode } from '../runtime/errors.js';
import type { OnnxInstanceSpec } from '../runtime/onnxruntime-backend.js';
import type { ExecutionResult } from '../runtime/types.js';
import type { FromWorker, ToWorker } from './ort-worker.js';

interface Pending {
  readonly resolve: (r: ExecutionResult) => void;
  readonly reject: (e: unknown) => void;
  readonly sentNs: bigint;
}

/**
 * The worker's entry. From compiled `dist/` it is `ort-worker.js`; when running from sources (tests,
 * tsx) the worker first registers tsx in its own thread, then imports `ort-worker.ts`.
 */
function createWorker(spec: OnnxInstanceSpec): Worker {
  if (!import.meta.url.endsWith('.ts')) {
    return new Worker(new URL('./ort-worker.js', import.meta.url), { workerData: spec });
  }
  const target = new URL('./ort-worker.ts', import.meta.url).href;
  // tsx is a dev dependency: only needed when running from sources.
  const tsxApi = pathToFileURL(
    createRequire(import.meta.url)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  const bootstrap = `import { register } from ${JSON.stringify(tsxApi)}; register(); await import(${JSON.stringify(target)});`;
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(bootstrap)}`), { workerData: spec });
}

/** One onnxruntime instance hosted in a worker thread. */
export class WorkerModelInstance implements RuntimeModelInstance {
  readonly name: string;
  readonly kind: string;
  readonly groupName: string;
  readonly index: number;
  readonly version: number;
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private dead: BackendError | undefined;
  private disposed: Promise<void> | undefined;

  private constructor(spec: OnnxInstanceSpec, worker: Worker) {
    this.name = spec.name;
    this.kind = spec.kind;
    this.groupName = spec.groupName;
    this.index = spec.index;
    this.version = spec.version;
    this.worker = worker;
    worker.on('message', (m: FromWorker) => this.onMessage(m));
    worker.on('error', (e) => this.fail(`worker of instance '${this.name}' failed: ${e.message}`));
    worker.on('exit', () => this.fail(`worker of instance '${this.name}' exited`));
  }

  /** Starts a worker that creates the instance described by `spec`; resolves once it is ready. */
  static async start(spec: OnnxInstanceSpec): Promise<WorkerModelInstance> {
    const worker = createWorker(spec);
    let onMessage: ((m: FromWorker) => void) | undefined;
    let onError: ((e: Error) => void) | undefined;
    let onExit: ((code: number) => void) | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        onMessage = (m) => {
          if (m.type === 'ready') resolve();
          else if (m.type === 'failed') reject(new BackendError(m.code as BackendErrorCode, m.message));
        };
        onError = reject;
        onExit = (code) =>
          reject(new BackendError('INSTANCE_CREATION_FAILED', `worker for '${spec.name}' exited (${code})`));
        worker.on('message', onMessage);
        worker.on('error', onError);
        worker.on('exit', onExit);
      });
    } catch (error) {
      await worker.terminate();
      throw error instanceof BackendError
        ? error
        : new BackendError(
            'INSTANCE_CREATION_FAILED',
            error instanceof Error ? error.message : String(error),
            {
              cause: error,
            },
          );
    }
    // Remove only our listeners: the Worker keeps internal ones that start and stop its port.
    if (onMessage !== undefined) worker.off('message', onMessage);
    if (onError !== undefined) worker.off('error', onError);
    if (onExit !== undefined) worker.off('exit', onExit);
    return new WorkerModelInstance(spec, worker);
  }

  execute(inputs: ReadonlyMap<string, Tensor>): Promise<ExecutionResult> {
    if (this.dead !== undefined) return Promise.reject(this.dead);
    if (this.disposed !== undefined) {
      return Promise.reject(
        new BackendError('INSTANCE_DISPOSED', `instance '${this.name}' has been disposed`),
      );
    }
    const id = this.nextId++;
    return new Promise<ExecutionResult>((resolve, reject) => {
      const t0 = process.hrtime.bigint();
      // One compact copy per fixed-size input, transferred: cloning a view would copy its whole
      // underlying buffer (e.g. the entire HTTP body), and transferring the caller's own buffer
      // would detach it.
      const transfer: ArrayBuffer[] = [];
      const tensors = [...inputs.values()].map((t): Tensor => {
        if (Array.isArray(t.data)) return t;
        const copy = t.data.slice();
        transfer.push(copy.buffer);
        return { ...t, data: copy };
      });
      const message: ToWorker = { type: 'execute', id, inputs: tensors };
      this.pending.set(id, { resolve, reject, sentNs: 0n });
      try {
        this.worker.postMessage(message, transfer);
      } catch (error) {
        this.pending.delete(id);
        reject(
          new BackendError('INVALID_EXECUTION_INPUT', error instanceof Error ? error.message : String(error)),
        );
        return;
      }
      this.pending.set(id, { resolve, reject, sentNs: process.hrtime.bigint() - t0 });
    });
  }

  private onMessage(m: FromWorker): void {
    if (m.type !== 'result' && m.type !== 'error') return;
    const p = this.pending.get(m.id);
    if (p === undefined) return;
    this.pending.delete(m.id);
    if (m.type === 'error') {
      p.reject(new BackendError(m.code as BackendErrorCode, m.message));
      return;
    }
    p.resolve({
      outputs: new Map(m.outputs.map((t) => [t.name, t])),
      timings: { ...m.timings, computeInputNs: m.timings.computeInputNs + p.sentNs },
    });
  }

  private fail(message: string): void {
    if (this.disposed !== undefined && this.pending.size === 0) return;
    this.dead ??= new BackendError('EXECUTION_FAILED', message);
    for (const p of this.pending.values()) p.reject(this.dead);
    this.pending.clear();
  }

  dispose(): Promise<void> {
    this.disposed ??= (async () => {
      if (this.dead === undefined) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 5000);
          this.worker.on('message', (m: FromWorker) => {
            if (m.type === 'disposed') {
              clearTimeout(timer);
              resolve();
            }
          });
          this.worker.postMessage({ type: 'dispose' } satisfies ToWorker);
        });
      }
      await this.worker.terminate();
    })();
    return this.disposed;
  }
}

/**
 * Drop-in for `runtime/createInstances` that hosts every onnxruntime instance in its own worker
 * thread (see the module documentation).
 */
export async function createWorkerInstances(
  model: ModelDefinition,
  version: number,
  options: CreateInstancesOptions = {},
): Promise<RuntimeModelInstance[]> {
  const local = await createInstances(model, version, options);
  const modelPath = model.versions.find((v) => v.version === version)?.modelPath;
  if (modelPath === undefined || checkBackend(model.config).backend !== 'onnxruntime') return local;
  const hosted: RuntimeModelInstance[] = [];
  try {
    for (const instance of local) {
      hosted.push(
        await WorkerModelInstance.start({
          name: instance.name,
          kind: instance.kind,
          groupName: instance.groupName,
          index: instance.index,
          version: instance.version,
          modelPath,
          config: model.config,
          ...(options.defaultIntraOpThreads === undefined
            ? {}
            : { defaultIntraOpThreads: options.defaultIntraOpThreads }),
          ...(options.defaultInterOpThreads === undefined
            ? {}
            : { defaultInterOpThreads: options.defaultInterOpThreads }),
        }),
      );
    }
  } catch (error) {
    await Promise.allSettled(hosted.map((h) => h.dispose()));
    throw error;
  } finally {
    await Promise.allSettled(local.map((l) => l.dispose()));
  }
  return hosted;
}
