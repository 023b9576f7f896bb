/**
 * Test doubles: a model instance whose executions finish only when the test releases them, and
 * request builders. Nothing here sleeps; tests assert orderings and counts.
 */
import type { PackedTensor } from '@tritonserver-ts/protocol';

import type {
  ModelConfig,
  ModelDynamicBatching,
  ModelQueuePolicy,
} from '../../src/repository/model-config.js';
import type { ExecutionResult, ModelInstance } from '../../src/runtime/types.js';
import type { SchedulerRequest } from '../../src/scheduler/types.js';

/** One execution the controlled instance has started. */
export interface StartedExecution {
  readonly instance: string;
  readonly inputs: ReadonlyMap<string, PackedTensor>;
  /** Rows of input `x` (dim 0). */
  readonly rows: number;
  /** Finish with outputs `y = x * 2` (INT32/FP32) or echoed BYTES, and fixed timings. */
  release(): void;
  /** Finish with an error. */
  fail(message: string): void;
}

/** A set of instances whose executions are released by the test. */
export class ControlledModel {
  readonly started: StartedExecution[] = [];
  readonly instances: ModelInstance[];
  running = 0;
  maxConcurrent = 0;
  private waiters: { count: number; resolve: () => void }[] = [];

  constructor(
    count = 1,
    readonly timings = { computeInputNs: 1000n, computeInferNs: 5000n, computeOutputNs: 2000n },
  ) {
    this.instances = Array.from({ length: count }, (_, i) => this.makeInstance(`m_0_${i}`));
  }

  private makeInstance(name: string): ModelInstance {
    return {
      name,
      kind: 'KIND_CPU',
      execute: (inputs) =>
        new Promise<ExecutionResult>((resolve, reject) => {
          this.running += 1;
          this.maxConcurrent = Math.max(this.maxConcurrent, this.running);
          const x = inputs.get('x');
          const done = (): void => {
            this.running -= 1;
          };
          this.started.push({
            instance: name,
            inputs,
            rows: x?.shape[0] ?? 0,
            release: () => {
              done();
              resolve({ outputs: computeOutputs(inputs), timings: this.timings });
            },
            fail: (message) => {
              done();
              reject(new Error(message));
            },
          });
          this.notify();
        }),
      dispose: () => Promise.resolve(),
    };
  }

  private notify(): void {
    this.waiters = this.waiters.filter((w) => {
      if (this.started.length >= w.count) {
        w.resolve();
        return false;
      }
      return true;
    });
  }

  /** Resolves once `count` executions have started in total. */
  waitForStarted(count: number): Promise<void> {
    if (this.started.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }
}

function computeOutputs(inputs: ReadonlyMap<string, PackedTensor>): ReadonlyMap<string, PackedTensor> {
  const out = new Map<string, PackedTensor>();
  const x = inputs.get('x');
  if (x !== undefined) {
    if (x.datatype === 'INT32') {
      const d = x.data as Int32Array;
      out.set('y', { name: 'y', datatype: 'INT32', shape: [...x.shape], data: d.map((v) => v * 2) });
    } else if (x.datatype === 'FP32') {
      const d = x.data as Float32Array;
      out.set('y', { name: 'y', datatype: 'FP32', shape: [...x.shape], data: d.map((v) => v * 2) });
    }
  }
  const s = inputs.get('s');
  if (s !== undefined) out.set('t', { name: 't', datatype: 'BYTES', shape: [...s.shape], data: s.data });
  return out;
}

/** An INT32 request of `rows` rows × `cols` values; row r holds `base + r` repeated. */
export function int32Request(
  base: number,
  rows = 1,
  options: { cols?: number; priority?: number; timeoutUs?: number; signal?: AbortSignal } = {},
): SchedulerRequest {
  const cols = options.cols ?? 2;
  const data = new Int32Array(rows * cols);
  for (let r = 0; r < rows; r++) data.fill(base + r, r * cols, (r + 1) * cols);
  return {
    inputs: new Map([['x', { name: 'x', datatype: 'INT32', shape: [rows, cols], data }]]),
    batchSize: rows,
    priority: options.priority ?? 0,
    ...(options.timeoutUs === undefined ? {} : { timeoutUs: options.timeoutUs }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    receivedAt: process.hrtime.bigint(),
  };
}

/** First value of each row of input `x` of an execution. */
export function rowBases(exec: StartedExecution): number[] {
  const x = exec.inputs.get('x');
  if (x === undefined) return [];
  const cols = x.shape[1] ?? 1;
  const d = x.data as Int32Array;
  const out: number[] = [];
  for (let r = 0; r < (x.shape[0] ?? 0); r++) out.push(d[r * cols] ?? NaN);
  return out;
}

/** Lets pending promise callbacks run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

/** A complete config for model `m` (proto defaults filled in by hand). */
export function makeConfig(init: Partial<ModelConfig> = {}): ModelConfig {
  return {
    name: 'm',
    platform: '',
    backend: 'onnxruntime',
    runtime: '',
    max_batch_size: 8,
    input: [],
    output: [],
    batch_input: [],
    batch_output: [],
    instance_group: [],
    default_model_filename: '',
    cc_model_filenames: {},
    metric_tags: {},
    parameters: {},
    model_warmup: [],
    ...init,
  };
}

/** A complete `dynamic_batching` message. */
export function dynamicBatching(init: Partial<ModelDynamicBatching> = {}): ModelDynamicBatching {
  return {
    preferred_batch_size: [],
    max_queue_delay_microseconds: 0,
    preserve_ordering: false,
    priority_levels: 0,
    default_priority_level: 0,
    priority_queue_policy: {},
    ...init,
  };
}

/** A complete `ModelQueuePolicy`. */
export function queuePolicy(init: Partial<ModelQueuePolicy> = {}): ModelQueuePolicy {
  return {
    timeout_action: 'REJECT',
    default_timeout_microseconds: 0,
    allow_timeout_override: false,
    max_queue_size: 0,
    ...init,
  };
}
