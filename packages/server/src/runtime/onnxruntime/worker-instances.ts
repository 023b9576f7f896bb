/**
 * Model instances that run in worker threads, one onnxruntime session per worker, so the instances
 * of an instance group really execute at the same time and the main event loop stays free for
 * HTTP while models run. (onnxruntime-node's `session.run` is synchronous on its calling thread:
 * with sessions on the main thread, N instances would run one after another.)
 *
 * The onnxruntime backend creates its instances here when its settings ask for worker threads
 * (`OnnxruntimeSettings.workerThreads`, the core's default): the runtime's rules (kinds, `KIND_GPU`
 * handling, names, thread parameters) apply unchanged in `createInstances`, and the backend starts
 * one worker per instance with the instance's spec. The session is created once, in the worker
 * (the worker runs the backend's own `createOnnxInstance`, so validation and errors are the
 * backend's); no session is created on the main thread for it (except the inline one below).
 *
 * Costs: each input is copied once into the worker (timed into `compute_input`), outputs are
 * transferred back without copying.
 *
 * Tiny executions skip the hop (issue 11, `inline-policy.ts`): once the worker's own compute times
 * show that executions of some input size take less than the hop costs, a second session of the
 * (small) model is created on the main thread and executions up to that size run there.
 * @packageDocumentation
 */
import { statSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';

import { BytesList, type FixedTensorData, type PackedTensor } from '@tritonserver-ts/protocol';

import { startWorkerModule } from '../../common/worker-module.js';
import { BackendError, type BackendErrorCode } from '../errors.js';
import type { ExecutionResult, RuntimeModelInstance } from '../types.js';
import { createOnnxInstance, type OnnxInstanceSpec } from './onnxruntime-backend.js';
import { INLINE_MODEL_MAX_BYTES, InlinePolicy, inputBytes } from './inline-policy.js';
import type { FromWorker, ToWorker } from './ort-worker.js';
import { fromWorkerTensor, toWorkerTensor, type WorkerTensor } from './worker-tensors.js';

interface Pending {
  readonly resolve: (r: ExecutionResult) => void;
  readonly reject: (e: unknown) => void;
  readonly sentNs: bigint;
  /** The execution's input bytes (for the inline policy). */
  readonly bytes: number;
}

/** Whether the model file is small enough for a second, main-thread session (inline executions). */
function inlineEligible(spec: OnnxInstanceSpec): boolean {
  try {
    return statSync(spec.modelPath).size <= INLINE_MODEL_MAX_BYTES;
  } catch {
    return false;
  }
}

/**
 * The worker's entry. From compiled `dist/` it is `ort-worker.js`; when running from sources (tests,
 * tsx) the worker first registers tsx in its own thread, then imports `ort-worker.ts`.
 */
function createWorker(spec: OnnxInstanceSpec): Worker {
  return startWorkerModule(new URL('./ort-worker.js', import.meta.url), import.meta.url, {
    workerData: spec,
  });
}

/** Starts a worker that creates the instance described by `spec`; resolves once it is ready. */
async function startWorker(spec: OnnxInstanceSpec): Promise<Worker> {
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
      : new BackendError('INSTANCE_CREATION_FAILED', error instanceof Error ? error.message : String(error), {
          cause: error,
        });
  } finally {
    // Remove only our listeners: the Worker keeps internal ones that start and stop its port.
    if (onMessage !== undefined) worker.off('message', onMessage);
    if (onError !== undefined) worker.off('error', onError);
    if (onExit !== undefined) worker.off('exit', onExit);
  }
  return worker;
}

/** When the backend ran one execution, on the process-wide monotonic clock (`process.hrtime.bigint()`). */
export interface ExecutionSpan {
  readonly startNs: bigint;
  readonly endNs: bigint;
}

/** Options of {@link WorkerModelInstance.start}. */
export interface WorkerInstanceOptions {
  /** `false`: every execution runs in the worker (no inline executions). Default true. */
  readonly inline?: boolean;
  /** The inline policy's short-execution bound in ns (default `INLINE_COMPUTE_MAX_NS`). @internal */
  readonly inlineComputeMaxNs?: bigint;
}

/**
 * One onnxruntime instance hosted in a worker thread.
 *
 * - The worker is unreferenced while idle, so a process that forgets to shut the server down still
 *   exits; it is referenced while an execution or a disposal is in flight.
 * - If the worker dies (an uncaught error, a native crash that ends the thread, `terminate()`), the
 *   executions it held fail with `EXECUTION_FAILED` and a message naming the instance, and a new
 *   worker with the same spec is started; executions sent meanwhile wait for it. If the restart
 *   fails, every later execution fails with a message saying so.
 */
export class WorkerModelInstance implements RuntimeModelInstance {
  readonly name: string;
  readonly kind: string;
  readonly groupName: string;
  readonly index: number;
  readonly version: number;
  readonly #spec: OnnxInstanceSpec;
  #worker: Worker;
  #exited = false;
  readonly #pending = new Map<number, Pending>();
  /** Input buffers handed back by the worker, by input name, reused by the next execution. */
  readonly #buffers = new Map<string, ArrayBuffer>();
  #nextId = 0;
  #restarts = 0;
  #restarting: Promise<void> | undefined;
  #dead: BackendError | undefined;
  #disposed: Promise<void> | undefined;
  #lastExecution: ExecutionSpan | undefined;
  readonly #inlinePolicy: InlinePolicy;
  readonly #inlineEligible: boolean;
  /** The main-thread session for tiny executions, once the policy asked for it and it exists. */
  #inline: RuntimeModelInstance | undefined;
  #inlineStarting: Promise<void> | undefined;

  private constructor(spec: OnnxInstanceSpec, worker: Worker, options: WorkerInstanceOptions) {
    this.name = spec.name;
    this.kind = spec.kind;
    this.groupName = spec.groupName;
    this.index = spec.index;
    this.version = spec.version;
    this.#spec = spec;
    this.#inlineEligible = options.inline !== false && inlineEligible(spec);
    this.#inlinePolicy = new InlinePolicy(options.inlineComputeMaxNs);
    this.#worker = worker;
    this.#attach(worker);
  }

  /** Starts a worker that creates the instance described by `spec`; resolves once it is ready. */
  static async start(
    spec: OnnxInstanceSpec,
    options: WorkerInstanceOptions = {},
  ): Promise<WorkerModelInstance> {
    return new WorkerModelInstance(spec, await startWorker(spec), options);
  }

  /** How many times the worker was restarted after dying. */
  get restarts(): number {
    return this.#restarts;
  }

  /** Whether the current worker thread is running (false once disposed, or dead for good). */
  get running(): boolean {
    return !this.#exited;
  }

  /** Whether an execution has been sent to the worker and not answered yet. */
  get busy(): boolean {
    return this.#pending.size > 0;
  }

  /** When the most recent successful execution ran in the worker (diagnostics and tests). */
  get lastExecution(): ExecutionSpan | undefined {
    return this.#lastExecution;
  }

  /**
   * Test hook: the worker throws an uncaught error when its next execution arrives (so that execution
   * is in flight when it dies), as a crashing worker would; `armed: false` takes that back. (Not `Worker.terminate()`: terminating a thread inside onnxruntime's `run` aborts
   * the whole process.)
   * @internal
   */
  crashWorkerForTesting(armed = true): void {
    // The next execution must reach the worker.
    this.#inlinePolicy.disable();
    this.#worker.postMessage({ type: 'crash-for-testing', armed } satisfies ToWorker);
  }

  #attach(worker: Worker): void {
    this.#worker = worker;
    this.#exited = false;
    let handled = false;
    const crashed = (what: string): void => {
      if (handled) return;
      handled = true;
      this.#onWorkerDied(worker, what);
    };
    worker.on('message', (m: FromWorker) => this.#onMessage(m));
    worker.on('error', (e) => crashed(`failed: ${e.message}`));
    worker.on('exit', (code) => {
      if (worker === this.#worker) this.#exited = true;
      crashed(`exited unexpectedly (exit code ${code})`);
    });
    // After adding the listeners (a 'message' listener references the worker's port again).
    if (this.#pending.size === 0) worker.unref();
  }

  #settled(): void {
    if (this.#pending.size === 0 && this.#disposed === undefined) this.#worker.unref();
  }

  execute(inputs: ReadonlyMap<string, PackedTensor>): Promise<ExecutionResult> {
    if (this.#disposed !== undefined) {
      return Promise.reject(
        new BackendError('INSTANCE_DISPOSED', `instance '${this.name}' has been disposed`),
      );
    }
    if (this.#dead !== undefined) return Promise.reject(this.#dead);
    if (this.#restarting !== undefined) return this.#restarting.then(() => this.execute(inputs));
    const bytes = inputBytes(inputs);
    const inline = this.#inline;
    if (inline !== undefined && this.#inlinePolicy.allows(bytes)) return inline.execute(inputs);
    const id = this.#nextId++;
    return new Promise<ExecutionResult>((resolve, reject) => {
      const t0 = process.hrtime.bigint();
      // One copy per input (BYTES: its serialized buffer) into a buffer that is transferred to the
      // worker and handed back with the result, so steady-state executions allocate no input memory
      // (600 KB per food image). Cloning a view would copy its whole underlying buffer (e.g. the
      // entire HTTP body), and transferring the caller's own buffer would detach it.
      const transfer: ArrayBuffer[] = [];
      const tensors = [...inputs.values()].map((t): WorkerTensor => {
        const data: FixedTensorData = BytesList.isBytesList(t.data) ? t.data.serialized : t.data;
        const bytes = data.byteLength;
        const reuse = this.#buffers.get(t.name);
        this.#buffers.delete(t.name);
        const buffer = reuse !== undefined && reuse.byteLength >= bytes ? reuse : new ArrayBuffer(bytes);
        new Uint8Array(buffer, 0, bytes).set(new Uint8Array(data.buffer, data.byteOffset, bytes));
        // A Buffer is sent as a Uint8Array (what the worker receives of it either way): its own
        // constructor with an ArrayBuffer is the deprecated `new Buffer()` (DEP0005, warned on Node 24).
        const View = (Buffer.isBuffer(data) ? Uint8Array : data.constructor) as new (
          b: ArrayBuffer,
          offset: number,
          length: number,
        ) => typeof data;
        transfer.push(buffer);
        const length = data.byteLength / data.BYTES_PER_ELEMENT;
        return toWorkerTensor(t, new View(buffer, 0, length));
      });
      const message: ToWorker = { type: 'execute', id, inputs: tensors };
      try {
        this.#worker.postMessage(message, transfer);
      } catch (error) {
        reject(
          new BackendError('INVALID_EXECUTION_INPUT', error instanceof Error ? error.message : String(error)),
        );
        return;
      }
      if (this.#pending.size === 0) this.#worker.ref();
      this.#pending.set(id, { resolve, reject, sentNs: process.hrtime.bigint() - t0, bytes });
    });
  }

  #onMessage(m: FromWorker): void {
    if (m.type !== 'result' && m.type !== 'error') return;
    for (const [name, buffer] of m.returned) this.#buffers.set(name, buffer);
    const p = this.#pending.get(m.id);
    if (p === undefined) return;
    this.#pending.delete(m.id);
    this.#settled();
    if (m.type === 'error') {
      p.reject(new BackendError(m.code as BackendErrorCode, m.message));
      return;
    }
    this.#lastExecution = { startNs: m.startNs, endNs: m.endNs };
    this.#learn(p.bytes, m.timings.computeInferNs);
    p.resolve({
      outputs: new Map(m.outputs.map((t) => [t.name, fromWorkerTensor(t)])),
      timings: { ...m.timings, computeInputNs: m.timings.computeInputNs + p.sentNs },
    });
  }

  /** Feeds the inline policy; starts the main-thread session once it is wanted. */
  #learn(bytes: number, computeInferNs: bigint): void {
    if (!this.#inlineEligible) return;
    this.#inlinePolicy.record(bytes, computeInferNs);
    if (!this.#inlinePolicy.proven || this.#inlineStarting !== undefined) return;
    this.#inlineStarting = createOnnxInstance(this.#spec).then(
      (instance) => {
        if (this.#disposed !== undefined) return instance.dispose();
        this.#inline = instance;
        return undefined;
      },
      () => this.#inlinePolicy.disable(),
    );
  }

  #onWorkerDied(worker: Worker, what: string): void {
    if (worker !== this.#worker) return;
    const disposing = this.#disposed !== undefined;
    const failure = disposing
      ? new BackendError('INSTANCE_DISPOSED', `instance '${this.name}' has been disposed`)
      : new BackendError(
          'EXECUTION_FAILED',
          `the worker thread of model instance '${this.name}' ${what}; the instance is being restarted`,
        );
    for (const p of this.#pending.values()) p.reject(failure);
    this.#pending.clear();
    if (disposing) return;
    this.#restarts += 1;
    this.#restarting = startWorker(this.#spec).then(
      (next) => {
        this.#restarting = undefined;
        if (this.#disposed !== undefined) {
          void next.terminate();
          return;
        }
        this.#attach(next);
      },
      (error: unknown) => {
        this.#restarting = undefined;
        this.#dead = new BackendError(
          'EXECUTION_FAILED',
          `the worker thread of model instance '${this.name}' ${what} and could not be restarted: ${
            error instanceof Error ? error.message : String(error)
          }`,
        );
      },
    );
  }

  dispose(): Promise<void> {
    this.#disposed ??= (async () => {
      await this.#inlineStarting;
      const inline = this.#inline;
      this.#inline = undefined;
      await inline?.dispose();
      await this.#restarting;
      const worker = this.#worker;
      if (this.#dead === undefined && !this.#exited) {
        worker.ref();
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 5000);
          const done = (): void => {
            clearTimeout(timer);
            resolve();
          };
          worker.on('message', (m: FromWorker) => {
            if (m.type === 'disposed') done();
          });
          worker.once('exit', done);
          worker.postMessage({ type: 'dispose' } satisfies ToWorker);
        });
      }
      await worker.terminate();
      this.#exited = true;
    })();
    return this.#disposed;
  }
}
