/**
 * The ensemble scheduler (Triton's `EnsembleScheduler`): one ensemble request runs its steps as
 * their input tensors become ready — independent steps at the same time — each step being an
 * ordinary request to the composing model through the server ({@link InferenceHost}), so it goes
 * through that model's validation, queue, dynamic batcher, instances and statistics. Tensors are
 * handed from step to step by reference (no copy). Only the steps the requested outputs need run.
 *
 * Errors: the first failing step stops new steps; once the steps in flight are done the request
 * fails with `in ensemble '<m>', <step error>` (the step's status kind). A cancelled request
 * launches no more steps (its queued steps are dropped by their schedulers). Statistics as Triton
 * keeps them for an ensemble: one success with its end-to-end time, a queue time of ~0, one
 * "execution" whose compute durations are the sums of the composing requests' compute durations;
 * a failure counts under `reason="OTHER"`. Ensemble requests are not in the pending gauge.
 * @packageDocumentation
 */
import type { PackedTensor } from '@tritonserver-ts/client/protocol';

import { echo } from '../core/echo.js';
import { ServerError, toServerError } from '../core/errors.js';
import type { InferenceHost } from '../core/inference-host.js';
import type { CoreInferInput, CoreInferRequest } from '../core/types.js';
import type { EnsembleStep, ModelConfig } from '../repository/model-config.js';
import type { ModelStatistics } from '../statistics/model-statistics.js';
import { SchedulerRejection } from './errors.js';
import type { Scheduler, SchedulerRequest, SchedulerResponse } from './types.js';

/** Options of {@link createEnsembleScheduler}. */
export interface EnsembleSchedulerOptions {
  readonly modelName: string;
  /** The ensemble's (validated) config. */
  readonly config: ModelConfig;
  /** Runs the steps' requests. */
  readonly inferenceHost: InferenceHost;
  /** The current config of a serving model version ('' = latest); see `SchedulerFactory`. */
  readonly modelConfig: (name: string, version: string) => ModelConfig | undefined;
  readonly statistics?: ModelStatistics;
  /** Monotonic clock in ns (tests). Default `process.hrtime.bigint`. */
  readonly clock?: () => bigint;
}

/** An ensemble tensor's value: a tensor (absent for an optional input left out), with its batch size (0 = none). */
interface TensorValue {
  readonly tensor: PackedTensor | undefined;
  readonly batchSize: number;
}

/** Whether two shapes agree, `-1` matching anything (Triton's `CompareDimsWithWildcard`). */
export function dimsMatch(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((d, i) => d === -1 || b[i] === -1 || d === b[i]);
}

/**
 * Triton's batch / non-batch conversion when a tensor crosses between a batching and a non-batching
 * model: a non-batched tensor matching a batching model's dims gets a batch dim of 1; a batch-1
 * tensor that does not fit a non-batching model's dims loses its batch dim. Otherwise unchanged.
 */
export function reshapeForConsumer(
  configDims: readonly number[],
  consumerBatches: boolean,
  tensorBatchSize: number,
  shape: readonly number[],
): readonly number[] {
  if (consumerBatches === (tensorBatchSize !== 0)) return shape;
  if (consumerBatches) return dimsMatch(configDims, shape) ? [1, ...shape] : shape;
  return !dimsMatch(configDims, shape) && tensorBatchSize === 1 ? shape.slice(1) : shape;
}

function versionString(step: EnsembleStep): string {
  return step.model_version < 0 ? '' : String(step.model_version);
}

/** The steps the requested outputs need (Triton prunes backwards from the outputs left out). */
function neededSteps(
  steps: readonly EnsembleStep[],
  outputs: readonly string[],
  all: readonly string[],
): Set<number> {
  const needed = new Set<number>();
  const producer = new Map<string, number>();
  steps.forEach((s, i) => {
    for (const t of Object.values(s.output_map)) producer.set(t, i);
  });
  const wanted = outputs.length > 0 ? outputs : all;
  const stack = [...wanted];
  const seen = new Set<string>();
  while (stack.length > 0) {
    const tensor = stack.pop() as string;
    if (seen.has(tensor)) continue;
    seen.add(tensor);
    const i = producer.get(tensor);
    if (i === undefined || needed.has(i)) continue;
    needed.add(i);
    stack.push(...Object.values((steps[i] as EnsembleStep).input_map));
  }
  return needed;
}

/** Creates the scheduler of one ensemble version. */
export function createEnsembleScheduler(options: EnsembleSchedulerOptions): Scheduler {
  return new EnsembleScheduler(options);
}

class EnsembleScheduler implements Scheduler {
  readonly #opts: EnsembleSchedulerOptions;
  readonly #clock: () => bigint;
  readonly #steps: readonly EnsembleStep[];
  readonly #batches: boolean;
  #inflight = 0;
  #draining = false;
  #idle: (() => void)[] = [];

  constructor(options: EnsembleSchedulerOptions) {
    this.#opts = options;
    this.#clock = options.clock ?? ((): bigint => process.hrtime.bigint());
    this.#steps = options.config.ensemble_scheduling?.step ?? [];
    this.#batches = options.config.max_batch_size > 0;
  }

  get pendingCount(): number {
    return this.#inflight;
  }

  drain(): Promise<void> {
    this.#draining = true;
    if (this.#inflight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  async enqueue(request: SchedulerRequest): Promise<SchedulerResponse> {
    const stats = this.#opts.statistics;
    const enqueuedAt = this.#clock();
    if (this.#draining) {
      stats?.recordFailure({ requestNs: this.#since(request.receivedAt), reason: 'REJECTED' });
      throw SchedulerRejection.stopping();
    }
    request.onActivity?.('QUEUE_START', enqueuedAt);
    this.#inflight += 1;
    try {
      const { outputs, computeInputNs, computeInferNs, computeOutputNs } = await this.#run(request);
      const timings = { computeInputNs, computeInferNs, computeOutputNs };
      const batchSize = Math.max(1, request.batchSize);
      stats?.recordExecution(batchSize, timings);
      stats?.recordSuccess({
        batchSize,
        requestNs: this.#since(request.receivedAt),
        // Triton's ensemble queue time ends when the ensemble starts scheduling its steps.
        queueNs: 0n,
        timings,
      });
      return { outputs };
    } catch (error) {
      stats?.recordFailure({ requestNs: this.#since(request.receivedAt), reason: 'OTHER' });
      throw error;
    } finally {
      this.#inflight -= 1;
      if (this.#inflight === 0) for (const resolve of this.#idle.splice(0)) resolve();
    }
  }

  #since(t: bigint): bigint {
    const d = this.#clock() - t;
    return d > 0n ? d : 0n;
  }

  /** Runs the steps of one request; resolves with the requested ensemble outputs. */
  #run(request: SchedulerRequest): Promise<{
    outputs: Map<string, PackedTensor>;
    computeInputNs: bigint;
    computeInferNs: bigint;
    computeOutputNs: bigint;
  }> {
    const { config, modelName } = this.#opts;
    const steps = this.#steps;
    const requested = request.requestedOutputs ?? [];
    const allOutputs = config.output.map((o) => o.name);
    const wantedOutputs = requested.length > 0 ? requested : allOutputs;
    const needed = neededSteps(steps, requested, allOutputs);
    const values = new Map<string, TensorValue>();
    const inputBatch = this.#batches ? request.batchSize : 0;
    for (const [name, tensor] of request.inputs) values.set(name, { tensor, batchSize: inputBatch });
    // Optional ensemble inputs left out are "present" without data.
    for (const input of config.input) {
      if (input.optional && !values.has(input.name)) {
        values.set(input.name, { tensor: undefined, batchSize: inputBatch });
      }
    }
    const started = new Set<number>();
    let running = 0;
    let failure: ServerError | undefined;
    let computeInputNs = 0n;
    let computeInferNs = 0n;
    let computeOutputNs = 0n;
    const prefix = request.id !== undefined && request.id !== '' ? `[request id: ${echo(request.id)}] ` : '';

    return new Promise((resolve, reject) => {
      const finish = (): void => {
        if (running > 0) return;
        if (failure !== undefined) {
          reject(
            new ServerError(failure.kind, `in ensemble '${modelName}', ${failure.message}`, {
              cause: failure,
            }),
          );
          return;
        }
        const outputs = new Map<string, PackedTensor>();
        for (const name of wantedOutputs) {
          const value = values.get(name);
          if (value === undefined) {
            reject(
              new ServerError(
                'INVALID_ARG',
                `in ensemble '${modelName}', ${prefix}unexpected deadlock, at least one output is not set while no more ensemble steps can be made`,
              ),
            );
            return;
          }
          if (value.tensor === undefined) continue; // the composing model did not produce it
          const cfg = config.output.find((o) => o.name === name);
          const dims = cfg?.reshape !== undefined ? cfg.reshape.shape : (cfg?.dims ?? []);
          const shape = reshapeForConsumer(dims, this.#batches, value.batchSize, value.tensor.shape);
          outputs.set(name, { ...value.tensor, name, shape });
        }
        resolve({ outputs, computeInputNs, computeInferNs, computeOutputNs });
      };

      const launchReady = (): void => {
        if (failure !== undefined) return;
        for (let i = 0; i < steps.length; i++) {
          if (started.has(i) || !needed.has(i)) continue;
          const step = steps[i] as EnsembleStep;
          if (!Object.values(step.input_map).every((t) => values.has(t))) continue;
          if (request.signal?.aborted === true) {
            failure = SchedulerRejection.cancelled();
            return;
          }
          started.add(i);
          running += 1;
          let stepRequest: CoreInferRequest;
          let stepBatch = 0;
          try {
            ({ stepRequest, stepBatch } = this.#stepRequest(step, values, request));
          } catch (error) {
            running -= 1;
            failure = toServerError(error);
            return;
          }
          const times = new Map<string, bigint>();
          this.#opts.inferenceHost
            .infer({ ...stepRequest, onActivity: (activity, ns) => times.set(activity, ns) })
            .then(
              (response) => {
                const produced = new Map(response.outputs.map((o) => [o.name, o.tensor]));
                for (const [output, tensor] of Object.entries(step.output_map)) {
                  values.set(tensor, { tensor: produced.get(output), batchSize: stepBatch });
                }
                const cs = times.get('COMPUTE_START');
                const ie = times.get('COMPUTE_INPUT_END');
                const os = times.get('COMPUTE_OUTPUT_START');
                const ce = times.get('COMPUTE_END');
                if (cs !== undefined && ie !== undefined && os !== undefined && ce !== undefined) {
                  computeInputNs += ie - cs;
                  computeInferNs += os - ie;
                  computeOutputNs += ce - os;
                }
              },
              (error: unknown) => {
                failure ??= toServerError(error);
              },
            )
            .finally(() => {
              running -= 1;
              launchReady();
              finish();
            });
        }
      };

      launchReady();
      finish();
    });
  }

  /** The request of one step: its inputs (by reference), requested outputs, id and parameters. */
  #stepRequest(
    step: EnsembleStep,
    values: ReadonlyMap<string, TensorValue>,
    request: SchedulerRequest,
  ): { stepRequest: CoreInferRequest; stepBatch: number } {
    const version = versionString(step);
    const stepConfig = this.#opts.modelConfig(step.model_name, version);
    const batches = (stepConfig?.max_batch_size ?? 0) > 0;
    const inputs: CoreInferInput[] = [];
    let stepBatch = 0;
    for (const [input, tensorName] of Object.entries(step.input_map)) {
      const value = values.get(tensorName) as TensorValue;
      if (value.tensor === undefined) continue; // an optional input left out
      const cfg = stepConfig?.input.find((i) => i.name === input);
      const shape = reshapeForConsumer(cfg?.dims ?? [], batches, value.batchSize, value.tensor.shape);
      if (batches && stepBatch === 0 && cfg?.is_shape_tensor !== true) stepBatch = shape[0] ?? 0;
      inputs.push({ name: input, datatype: value.tensor.datatype, shape, data: value.tensor.data });
    }
    const stepRequest: CoreInferRequest = {
      modelName: step.model_name,
      modelVersion: version,
      inputs,
      outputs: Object.keys(step.output_map).map((name) => ({ name })),
      ...(request.id !== undefined ? { id: request.id } : {}),
      ...(request.parameters !== undefined ? { parameters: request.parameters } : {}),
      ...(request.signal !== undefined ? { signal: request.signal } : {}),
    };
    return { stepRequest, stepBatch };
  }
}
