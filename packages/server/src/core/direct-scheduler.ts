/**
 * The simplest correct {@link Scheduler}: each request runs alone on the first free instance; when
 * every instance is busy, requests wait in arrival order. Used when no scheduler factory is given
 * (the scheduler package provides Triton's default and dynamic-batching schedulers).
 * @packageDocumentation
 */
import type { ModelInstance } from '../runtime/types.js';
import type { Scheduler, SchedulerFactory, SchedulerRequest, SchedulerResponse } from '../scheduler/types.js';
import { ServerError, unavailable } from './errors.js';

interface Waiter {
  readonly request: SchedulerRequest;
  readonly resolve: (r: SchedulerResponse) => void;
  readonly reject: (e: unknown) => void;
}

class DirectScheduler implements Scheduler {
  readonly #free: ModelInstance[];
  readonly #queue: Waiter[] = [];
  readonly #modelName: string;
  #running = 0;
  #draining = false;
  #idle: (() => void) | undefined;

  constructor(modelName: string, instances: readonly ModelInstance[]) {
    this.#modelName = modelName;
    this.#free = [...instances];
  }

  get pendingCount(): number {
    return this.#queue.length + this.#running;
  }

  enqueue(request: SchedulerRequest): Promise<SchedulerResponse> {
    if (this.#draining) return Promise.reject(unavailable(`model '${this.#modelName}' is unloading`));
    if (request.signal?.aborted === true) {
      return Promise.reject(new ServerError('CANCELLED', 'request was cancelled'));
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({ request, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#free.length > 0 && this.#queue.length > 0) {
      const waiter = this.#queue.shift() as Waiter;
      if (waiter.request.signal?.aborted === true) {
        waiter.reject(new ServerError('CANCELLED', 'request was cancelled'));
        continue;
      }
      const instance = this.#free.shift() as ModelInstance;
      this.#running++;
      instance
        .execute(waiter.request.inputs)
        .then(
          (result) => waiter.resolve({ outputs: result.outputs }),
          (error: unknown) => waiter.reject(error),
        )
        .finally(() => {
          this.#running--;
          this.#free.push(instance);
          this.#pump();
          if (this.pendingCount === 0) this.#idle?.();
        });
    }
  }

  drain(): Promise<void> {
    this.#draining = true;
    if (this.pendingCount === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#idle = resolve;
    });
  }
}

/** Factory for {@link DirectScheduler}s. */
export const createDirectScheduler: SchedulerFactory = ({ modelName, instances }) =>
  new DirectScheduler(modelName, instances);
