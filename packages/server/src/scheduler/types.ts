/**
 * The contract between the transport-neutral core and the scheduler.
 *
 * Note to the server engineers (issue 5): `SchedulerFactory` options now take the typed
 * `ModelConfig` (was `unknown`) and an optional `statistics` object to record into; schedulers reject
 * with the core's `ServerError` (Triton texts: see `scheduler/errors.ts`). Implementation:
 * `createScheduler` in `scheduler/create-scheduler.ts`.
 *
 * Note to the core engineer: instances come from the runtime (`runtime/backends.ts`
 * `createInstances`, with the core's backend registry, which hosts onnxruntime sessions in worker
 * threads); call `runWarmup` (`scheduler/warmup.ts`) before marking a version READY.
 *
 * The core validates a request, then hands it to the model's scheduler; the scheduler queues it,
 * forms batches (dynamic batching, issue 5), runs them on free {@link ModelInstance}s, splits
 * outputs back per request and records statistics exactly as Triton accounts them.
 * @packageDocumentation
 */
import type { PackedTensor } from '@tritonserver-ts/protocol';

import type { ServerError } from '../common/errors.js';
import type { InferenceHost } from '../common/inference-host.js';
import type { RequestTrace } from '../common/request-trace.js';
import type { ParameterValue } from '../common/types.js';
import type { ModelConfig } from '../repository/model-config.js';
import type { BatchInputSupport } from '../runtime/registry.js';
import type { ModelInstance } from '../runtime/types.js';
import type { ModelStatistics } from '../statistics/model-statistics.js';
import type { ImplicitState } from './implicit-state.js';
import type { RateLimiter } from './rate-limiter.js';

/** One inference request as the scheduler sees it. */
export interface SchedulerRequest {
  /** Inputs by name. With `max_batch_size > 0` the first dim of each is this request's batch size. */
  readonly inputs: ReadonlyMap<string, PackedTensor>;
  /** Rows in this request (1 when the model does not batch). */
  readonly batchSize: number;
  /** Triton priority level: 0 = the model's default, 1 = highest. */
  readonly priority: number;
  /** Per-request queue timeout in microseconds (request `timeout` parameter), if given. */
  readonly timeoutUs?: number;
  /**
   * `process.hrtime.bigint()` when the core started the request (start of its `success` duration):
   * as Triton's `request_start_ns` (trace `REQUEST_START`), after the front end has read and decoded
   * it, so the time the body takes to arrive is not counted.
   */
  readonly receivedAt: bigint;
  /** Aborted when the client goes away; a request still queued is then dropped. */
  readonly signal?: AbortSignal;
  /**
   * Trace hook (set only for traced requests): called with Triton's activity names and their
   * `process.hrtime.bigint()` times, from the times the scheduler keeps for statistics.
   */
  readonly onActivity?: (activity: SchedulerActivity, ns: bigint) => void;
  /**
   * The request's trace, when it is traced: an ensemble spawns its steps' traces from it (their
   * `parent_id`). Schedulers report timestamps through {@link SchedulerRequest.onActivity}.
   */
  readonly trace?: RequestTrace;
  /** The request's id (ensembles hand it on to their steps' requests). */
  readonly id?: string;
  /** The request's parameters, `priority` and `timeout` included (ensembles hand them on to their steps). */
  readonly parameters?: Readonly<Record<string, ParameterValue>>;
  /** The outputs the client asked for (absent = every output); ensembles prune unneeded steps. */
  readonly requestedOutputs?: readonly string[];
  /**
   * `sequence_id` of the request, when given: an unsigned integer (number, or bigint above 2^53) or
   * a string; the sequence batcher keys sequences by kind and value, per-request backends (Python)
   * read it.
   */
  readonly correlationId?: number | bigint | string;
  /** Triton request flags (1 = sequence start, 2 = sequence end); 0 when absent. */
  readonly flags?: number;
  /**
   * Decoupled models: receives every response of the request (outputs or a per-response error),
   * the last one with `final: true`; `enqueue` then resolves with an empty output map once the
   * request is complete. Without it, `enqueue` resolves with the last response's outputs.
   */
  readonly onResponse?: (response: SchedulerStreamResponse) => void;
}

/** One response of a request to a decoupled model (see {@link SchedulerRequest.onResponse}). */
export interface SchedulerStreamResponse {
  readonly outputs?: ReadonlyMap<string, PackedTensor>;
  /** The response's parameters (per-request backends: a Python model's response parameters). */
  readonly parameters?: Readonly<Record<string, ParameterValue>>;
  readonly error?: ServerError;
  readonly final: boolean;
}

/** The trace activities a scheduler reports. */
export type SchedulerActivity =
  'QUEUE_START' | 'COMPUTE_START' | 'COMPUTE_INPUT_END' | 'COMPUTE_OUTPUT_START' | 'COMPUTE_END';

/** What the scheduler returns for one request: that request's rows of every model output. */
export interface SchedulerResponse {
  readonly outputs: ReadonlyMap<string, PackedTensor>;
  /** The response's parameters, when the backend gave it any (Python models). */
  readonly parameters?: Readonly<Record<string, ParameterValue>>;
}

/** Schedules requests of one model version onto its instances. */
export interface Scheduler {
  /** Queues a request; resolves with its outputs or rejects with a `ServerError` (see core). */
  enqueue(request: SchedulerRequest): Promise<SchedulerResponse>;
  /** Requests queued or executing. */
  readonly pendingCount: number;
  /** Stops accepting requests, waits for queued and in-flight requests to finish. */
  drain(): Promise<void>;
}

/** Builds a scheduler for one model version. */
export type SchedulerFactory = (options: {
  readonly modelName: string;
  readonly modelVersion: string;
  /** The parsed model config (see repository/). */
  readonly config: ModelConfig;
  readonly instances: readonly ModelInstance[];
  /**
   * Which ragged / batch-input features the model's backend reads (the runtime's
   * `Backend.batchInputs`, asked by the core). Default `none`.
   */
  readonly batchInputs?: BatchInputSupport;
  /** Where the scheduler records this version's statistics (see statistics/StatisticsRegistry). */
  readonly statistics?: ModelStatistics;
  /** The server hosting the model, for schedulers that run other models (ensembles). */
  readonly inferenceHost?: InferenceHost;
  /**
   * The config of a model of the same server serving `version` ('' = latest), if it serves: an
   * ensemble reads its steps' current configs (batching, dims) when it hands tensors on.
   */
  readonly modelConfig?: (name: string, version: string) => ModelConfig | undefined;
  /**
   * The server's rate limiter (`--rate-limit=execution_count`); absent when rate limiting is off.
   * Schedulers with instances register them (a load fails with Triton's message when a resource
   * cannot cover an instance) and run a batch only on an instance the limiter grants.
   */
  readonly rateLimiter?: RateLimiter;
  /**
   * A sequence model's implicit states (`sequence_batching.state`), validated and with their start
   * values read (`loadImplicitStates` in `implicit-state.ts`, which the core awaits at load).
   */
  readonly implicitStates?: readonly ImplicitState[];
}) => Scheduler;
