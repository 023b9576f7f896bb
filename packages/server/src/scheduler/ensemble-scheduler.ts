/**
 * The ensemble scheduler (Triton's `EnsembleScheduler`): one ensemble request runs its steps as
 * their input tensors become ready — independent steps at the same time — each step being an
 * ordinary request to the composing model through the server ({@link InferenceHost}), so it goes
 * through that model's validation, queue, dynamic batcher, instances and statistics. Tensors are
 * handed from step to step by reference (no copy). Only the steps the requested outputs need run.
 *
 * Decoupled steps (Triton's decoupled ensembles): every response of a decoupled step is a new
 * "iteration" of its output tensors; a later step runs once per iteration whose inputs are all
 * present, and the ensemble answers once per iteration of its outputs (the ensemble's config is
 * marked decoupled at load, so the front ends stream it). A step output a model leaves out is an
 * absent tensor: an optional input of the next step, or an output the response leaves out.
 * `ensemble_scheduling.max_inflight_requests` bounds each step's requests in flight across the
 * ensemble's requests ({@link StepLimiter}).
 *
 * Errors: the first failing step stops new steps; once the steps in flight are done the request
 * fails with `in ensemble '<m>', <step error>` (the step's status kind). A cancelled request
 * launches no more steps (its queued steps are dropped by their schedulers). Statistics as Triton
 * keeps them for an ensemble: one success with its end-to-end time, a queue time of ~0, one
 * "execution" whose compute durations are the sums of the composing requests' compute durations;
 * a failure counts under `reason="OTHER"`. Ensemble requests are not in the pending gauge.
 * @packageDocumentation
 */
import type { PackedTensor } from '@tritonserver-ts/protocol';

import { echo } from '../common/echo.js';
import { ServerError, toServerError } from '../common/errors.js';
import type { InferenceHost } from '../common/inference-host.js';
import type { CoreInferInput, CoreInferOutput, CoreInferRequest } from '../common/types.js';
import type { EnsembleStep, ModelConfig } from '../repository/model-config.js';
import type { ModelStatistics } from '../statistics/model-statistics.js';
import { SchedulerRejection } from './errors.js';
import { StepLimiter } from './step-limiter.js';
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

/**
 * One iteration of an ensemble tensor: the tensor (absent for an optional input left out or an
 * output the step's model did not produce), its batch size (0 = none) and how many consumers
 * (steps, and the response when it is a requested output) still need it.
 */
interface TensorEntry {
  readonly tensor: PackedTensor | undefined;
  readonly batchSize: number;
  remaining: number;
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

/**
 * An output's `reshape` undone for the response (Triton's `InferenceResponse::Output::Reshape`):
 * the tensor has the `reshape.shape` layout; the client sees `dims`, each `-1` of `dims` taken in
 * order from the dims at the `-1`s of `reshape.shape`.
 */
export function responseShape(
  shape: readonly number[],
  batched: boolean,
  reshape: readonly number[],
  dims: readonly number[],
): number[] {
  const offset = batched ? 1 : 0;
  const variable = reshape.flatMap((d, i) => (d === -1 ? [shape[i + offset] ?? 0] : []));
  const out = batched && shape.length > 0 ? [shape[0] as number] : [];
  for (const d of dims) out.push(d === -1 ? (variable.shift() ?? 0) : d);
  return out;
}

function versionString(step: EnsembleStep): string {
  return step.model_version < 0 ? '' : String(step.model_version);
}

/** The steps the requested outputs need (Triton prunes backwards from the outputs left out). */
function neededSteps(steps: readonly EnsembleStep[], wanted: readonly string[]): Set<number> {
  const needed = new Set<number>();
  const producer = new Map<string, number>();
  steps.forEach((s, i) => {
    for (const t of Object.values(s.output_map)) producer.set(t, i);
  });
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

/** One step about to be sent: its request, its batch size (0 = none) and whether its model is decoupled. */
interface StepPlan {
  readonly stepRequest: CoreInferRequest;
  readonly stepBatch: number;
  readonly decoupledStep: boolean;
}

/** What one run of an ensemble request gives back. */
interface RunResult {
  readonly outputs: Map<string, PackedTensor>;
  readonly computeInputNs: bigint;
  readonly computeInferNs: bigint;
  readonly computeOutputNs: bigint;
}

class EnsembleScheduler implements Scheduler {
  readonly #opts: EnsembleSchedulerOptions;
  readonly #clock: () => bigint;
  readonly #steps: readonly EnsembleStep[];
  readonly #batches: boolean;
  /** One limiter per step when `max_inflight_requests` > 0 (shared by every request). */
  readonly #limiters: readonly StepLimiter[];
  #inflight = 0;
  #draining = false;
  #idle: (() => void)[] = [];

  constructor(options: EnsembleSchedulerOptions) {
    this.#opts = options;
    this.#clock = options.clock ?? ((): bigint => process.hrtime.bigint());
    this.#steps = options.config.ensemble_scheduling?.step ?? [];
    this.#batches = options.config.max_batch_size > 0;
    const max = options.config.ensemble_scheduling?.max_inflight_requests ?? 0;
    this.#limiters = max > 0 ? this.#steps.map(() => new StepLimiter(max)) : [];
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

  /** Runs the steps of one request; resolves with the (last) response's ensemble outputs. */
  #run(request: SchedulerRequest): Promise<RunResult> {
    const { config, modelName } = this.#opts;
    const steps = this.#steps;
    const decoupledEnsemble = config.model_transaction_policy?.decoupled === true;
    const requested = request.requestedOutputs ?? [];
    const wanted = requested.length > 0 ? requested : config.output.map((o) => o.name);
    const wantedSet = new Set(wanted);
    const needed = neededSteps(steps, wanted);
    // Consumers of each tensor among the needed steps (Triton's pruned `tensor_to_step_`).
    const consumers = new Map<string, number[]>();
    for (const i of needed) {
      for (const t of new Set(Object.values((steps[i] as EnsembleStep).input_map))) {
        let list = consumers.get(t);
        if (list === undefined) consumers.set(t, (list = []));
        list.push(i);
      }
    }
    const tensors = new Map<string, Map<number, TensorEntry>>();
    const iterations = new Map<string, number>();
    /** Adds the next iteration of `name`; returns its iteration number (undefined: nobody needs it). */
    const addTensor = (name: string, tensor: PackedTensor | undefined, batchSize: number): number => {
      const iteration = iterations.get(name) ?? 0;
      iterations.set(name, iteration + 1);
      const remaining = (consumers.get(name)?.length ?? 0) + (wantedSet.has(name) ? 1 : 0);
      if (remaining > 0) {
        let byIteration = tensors.get(name);
        if (byIteration === undefined) tensors.set(name, (byIteration = new Map<number, TensorEntry>()));
        byIteration.set(iteration, { tensor, batchSize, remaining });
      }
      return iteration;
    };
    const release = (name: string, iteration: number): void => {
      const byIteration = tensors.get(name);
      const entry = byIteration?.get(iteration);
      if (entry === undefined) return;
      entry.remaining -= 1;
      if (entry.remaining <= 0) byIteration?.delete(iteration);
    };

    const inputBatch = this.#batches ? request.batchSize : 0;
    const initial: [string, number][] = [];
    for (const [name, tensor] of request.inputs) initial.push([name, addTensor(name, tensor, inputBatch)]);
    // Optional ensemble inputs left out are "present" without data.
    for (const input of config.input) {
      if (input.optional && !request.inputs.has(input.name)) {
        initial.push([input.name, addTensor(input.name, undefined, inputBatch)]);
      }
    }

    let inflight = 0;
    let failure: ServerError | undefined;
    let responses = 0;
    let finalSent = false;
    let lastOutputs = new Map<string, PackedTensor>();
    let computeInputNs = 0n;
    let computeInferNs = 0n;
    let computeOutputNs = 0n;
    const prefix = request.id !== undefined && request.id !== '' ? `[request id: ${echo(request.id)}] ` : '';

    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (): void => {
        if (settled || inflight > 0) return;
        settled = true;
        if (failure !== undefined) {
          reject(
            new ServerError(failure.kind, `in ensemble '${modelName}', ${failure.message}`, {
              cause: failure,
            }),
          );
          return;
        }
        if (responses === 0 && !decoupledEnsemble) {
          reject(
            new ServerError(
              'INVALID_ARG',
              `in ensemble '${modelName}', ${prefix}unexpected deadlock, at least one output is not set while no more ensemble steps can be made`,
            ),
          );
          return;
        }
        if (request.onResponse !== undefined) {
          // A decoupled ensemble that sent no response (or none flagged final) ends with the flag.
          if (!finalSent) request.onResponse({ final: true });
          lastOutputs = new Map();
        }
        resolve({ outputs: lastOutputs, computeInputNs, computeInferNs, computeOutputNs });
      };

      /** The ensemble response of `iteration` when every requested output has a value for it. */
      const emitted = new Set<number>();
      const emitIfReady = (updated: readonly [string, number][]): void => {
        for (const [name, iteration] of updated) {
          if (!wantedSet.has(name) || emitted.has(iteration)) continue;
          if (!wanted.every((o) => tensors.get(o)?.has(iteration) === true)) continue;
          emitted.add(iteration);
          const outputs = new Map<string, PackedTensor>();
          for (const o of wanted) {
            const entry = tensors.get(o)?.get(iteration) as TensorEntry;
            release(o, iteration);
            if (entry.tensor === undefined) continue; // the composing model did not produce it
            outputs.set(o, { ...entry.tensor, name: o, shape: this.#outputShape(o, entry) });
          }
          responses += 1;
          if (request.onResponse !== undefined) {
            const final = inflight === 0;
            finalSent ||= final;
            request.onResponse({ outputs, final });
          } else {
            lastOutputs = outputs;
          }
        }
      };

      /** Triton's `Proceed`: launch the steps `updated` made ready, answer what is ready, finish. */
      const proceed = (updated: readonly [string, number][]): void => {
        if (failure === undefined) {
          const ready: [number, number][] = [];
          const seen = new Set<string>();
          for (const [name, iteration] of updated) {
            for (const i of consumers.get(name) ?? []) {
              const key = `${i}/${iteration}`;
              if (seen.has(key)) continue;
              const inputs = Object.values((steps[i] as EnsembleStep).input_map);
              if (!inputs.every((t) => tensors.get(t)?.has(iteration) === true)) continue;
              seen.add(key);
              ready.push([i, iteration]);
            }
          }
          inflight += ready.length;
          emitIfReady(updated);
          for (const [i, iteration] of ready) void launch(i, iteration);
        }
        settle();
      };

      const stepFailed = (error: unknown): void => {
        failure ??= toServerError(error);
      };

      const consume = (i: number, outputs: ReadonlyMap<string, PackedTensor>, batch: number): void => {
        const updated: [string, number][] = [];
        for (const [output, tensor] of Object.entries((steps[i] as EnsembleStep).output_map)) {
          updated.push([tensor, addTensor(tensor, outputs.get(output), batch)]);
        }
        // After a failure nothing more is launched or answered; the entries only wait for the end.
        if (failure === undefined) proceed(updated);
      };

      const addTimes = (times: ReadonlyMap<string, bigint>): void => {
        const cs = times.get('COMPUTE_START');
        const ie = times.get('COMPUTE_INPUT_END');
        const os = times.get('COMPUTE_OUTPUT_START');
        const ce = times.get('COMPUTE_END');
        if (cs !== undefined && ie !== undefined && os !== undefined && ce !== undefined) {
          computeInputNs += ie - cs;
          computeInferNs += os - ie;
          computeOutputNs += ce - os;
        }
      };

      const launch = async (i: number, iteration: number): Promise<void> => {
        const step = steps[i] as EnsembleStep;
        const limiter = this.#limiters[i];
        let prepared: StepPlan | undefined;
        try {
          prepared = this.#stepRequest(step, tensors, iteration, request);
        } catch (error) {
          stepFailed(error);
        } finally {
          for (const t of new Set(Object.values(step.input_map))) release(t, iteration);
        }
        if (prepared === undefined) {
          inflight -= 1;
          settle();
          return;
        }
        const { stepRequest, stepBatch, decoupledStep } = prepared;
        if (limiter !== undefined) await limiter.acquire(request.signal);
        const times = new Map<string, bigint>();
        // The step is done at its final response (Triton decrements then, before the response is
        // used, so an ensemble response made by the last step is flagged final).
        let done = false;
        const finish = (): void => {
          if (done) return;
          done = true;
          addTimes(times);
          limiter?.release();
          inflight -= 1;
        };
        try {
          if (failure !== undefined) return;
          if (request.signal?.aborted === true) {
            stepFailed(SchedulerRejection.cancelled());
            return;
          }
          const onActivity = (activity: string, ns: bigint): void => void times.set(activity, ns);
          const byName = (outputs: readonly CoreInferOutput[]): Map<string, PackedTensor> =>
            new Map(outputs.map((o) => [o.name, o.tensor]));
          if (decoupledStep) {
            await this.#opts.inferenceHost.infer({
              ...stepRequest,
              onActivity,
              onResponse: (r) => {
                if (r.final) finish();
                if (r.error !== undefined) stepFailed(r.error);
                else if (r.response !== undefined && failure === undefined) {
                  consume(i, byName(r.response.outputs), stepBatch);
                }
              },
            });
          } else {
            const response = await this.#opts.inferenceHost.infer({ ...stepRequest, onActivity });
            finish();
            consume(i, byName(response.outputs), stepBatch);
          }
        } catch (error) {
          stepFailed(error);
        } finally {
          finish();
          settle();
        }
      };

      if (request.signal?.aborted === true) failure = SchedulerRejection.cancelled();
      proceed(initial);
    });
  }

  /** The shape the response gives ensemble output `name`: batch conversion, then its `reshape` undone. */
  #outputShape(name: string, entry: TensorEntry): readonly number[] {
    const cfg = this.#opts.config.output.find((o) => o.name === name);
    const tensor = entry.tensor as PackedTensor;
    const dims = cfg?.reshape !== undefined ? cfg.reshape.shape : (cfg?.dims ?? []);
    const shape = reshapeForConsumer(dims, this.#batches, entry.batchSize, tensor.shape);
    if (cfg?.reshape === undefined) return shape;
    return responseShape(shape, this.#batches, cfg.reshape.shape, cfg.dims);
  }

  /** The request of one step: its inputs at `iteration` (by reference), requested outputs, id and parameters. */
  #stepRequest(
    step: EnsembleStep,
    tensors: ReadonlyMap<string, ReadonlyMap<number, TensorEntry>>,
    iteration: number,
    request: SchedulerRequest,
  ): StepPlan {
    const version = versionString(step);
    const stepConfig = this.#opts.modelConfig(step.model_name, version);
    const batches = (stepConfig?.max_batch_size ?? 0) > 0;
    const inputs: CoreInferInput[] = [];
    let stepBatch = 0;
    for (const [input, tensorName] of Object.entries(step.input_map)) {
      const entry = tensors.get(tensorName)?.get(iteration) as TensorEntry;
      if (entry.tensor === undefined) continue; // an optional input left out, or an output not produced
      const cfg = stepConfig?.input.find((i) => i.name === input);
      const shape = reshapeForConsumer(cfg?.dims ?? [], batches, entry.batchSize, entry.tensor.shape);
      if (batches && stepBatch === 0 && cfg?.is_shape_tensor !== true) stepBatch = shape[0] ?? 0;
      inputs.push({ name: input, datatype: entry.tensor.datatype, shape, data: entry.tensor.data });
    }
    const stepRequest: CoreInferRequest = {
      modelName: step.model_name,
      modelVersion: version,
      inputs,
      outputs: Object.keys(step.output_map).map((name) => ({ name })),
      ...(request.id !== undefined ? { id: request.id } : {}),
      ...(request.parameters !== undefined ? { parameters: request.parameters } : {}),
      ...(request.signal !== undefined ? { signal: request.signal } : {}),
      ...(request.trace !== undefined ? { parentTrace: request.trace } : {}),
    };
    const decoupledStep = stepConfig?.model_transaction_policy?.decoupled === true;
    return { stepRequest, stepBatch, decoupledStep };
  }
}
