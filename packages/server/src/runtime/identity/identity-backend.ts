/**
 * The `identity` backend, implemented natively in TypeScript after Triton's identity backend:
 * every `OUTPUT<n>` is a copy of `INPUT<n>`, for every datatype (BF16 and BYTES included).
 *
 * Config rules (Triton's): as many inputs as outputs; inputs named `INPUT<n>`, outputs
 * `OUTPUT<n>`; matching indices with the same datatype and shape (`reshape` when given, else
 * `dims`). Parameters: `execute_delay_ms` sleeps that long in every execution (counted in
 * compute_infer) — handy for scheduler tests — and `instance_wise_delay_multiplier` m makes
 * instance i sleep `execute_delay_ms × (1 + m × i)`; `creation_delay_sec` makes the load of each
 * version take that many seconds longer (Triton's backend sleeps in `ModelInitialize`, once per
 * version, after checking the config; here the version's first instance waits, without blocking
 * the event loop) — for tests of what a server does while a model loads.
 *
 * Ragged batches (`allow_ragged_batch` on an input): requests whose shapes of such inputs differ
 * share a dynamic batch (as Triton's batcher forms it); the instance then takes the batch's requests
 * one by one (the scheduler's per-request path) instead of one concatenated batch.
 * @packageDocumentation
 */
import type { PackedTensor, PackedTensorData } from '@tritonserver-ts/protocol';
import { BytesList, datatypeFromModelConfig } from '@tritonserver-ts/protocol';
import { setTimeout as sleep } from 'node:timers/promises';

import type { ModelConfig } from '../../repository/model-config.js';
import { BackendError } from '../errors.js';
import type {
  ExecutionResult,
  ExecutionTimings,
  InstanceRequest,
  InstanceResponse,
  RuntimeModelInstance,
} from '../types.js';

/** What an identity instance needs to know. */
export interface IdentityInstanceSpec {
  readonly name: string;
  readonly kind: string;
  readonly groupName: string;
  readonly index: number;
  readonly version: number;
  readonly config: ModelConfig;
}

function intParam(config: ModelConfig, key: string): number {
  const raw = config.parameters[key]?.string_value;
  if (raw === undefined) return 0;
  if (!/^[0-9]+$/.test(raw.trim())) {
    throw new BackendError(
      'INSTANCE_CREATION_FAILED',
      `parameter '${key}' of model '${config.name}' must be a non-negative integer, got '${raw}'`,
    );
  }
  return Number(raw.trim());
}

/**
 * Checks a config against the identity backend's rules.
 * @returns pairs of (input name, output name)
 * @throws BackendError `INSTANCE_CREATION_FAILED`
 */
export function identityPairs(config: ModelConfig): [string, string][] {
  const fail = (m: string): never => {
    throw new BackendError('INSTANCE_CREATION_FAILED', m);
  };
  if (config.input.length !== config.output.length)
    fail('model configuration must have equal input/output pairs');
  const inputs = new Map<string, (typeof config.input)[number]>();
  for (const input of config.input) {
    if (!input.name.startsWith('INPUT'))
      fail(`expected input name to follow INPUT<index> pattern, got '${input.name}'`);
    inputs.set(input.name.slice('INPUT'.length), input);
  }
  const pairs: [string, string][] = [];
  for (const output of config.output) {
    if (!output.name.startsWith('OUTPUT'))
      fail(`expected output name to follow OUTPUT<index> pattern, got '${output.name}'`);
    const input = inputs.get(output.name.slice('OUTPUT'.length));
    if (input === undefined) return fail('expected input and output indices to match');
    if (input.data_type !== output.data_type) {
      fail(`expected input and output datatype to match, got ${input.data_type} and ${output.data_type}`);
    }
    const inShape = input.reshape?.shape ?? input.dims;
    const outShape = output.reshape?.shape ?? output.dims;
    if (inShape.join(',') !== outShape.join(',')) {
      fail(
        `expected input and output shape to match, got [${inShape.join(',')}] and [${outShape.join(',')}]`,
      );
    }
    pairs.push([input.name, output.name]);
  }
  return pairs;
}

/** A copy of the data (BYTES: one copy of its buffer). */
function copyData(data: PackedTensorData): PackedTensorData {
  return BytesList.isBytesList(data) ? data.copy() : data.slice();
}

/**
 * Creates one identity instance; the version's first instance (index 0 of the first instance group)
 * waits `creation_delay_sec` after the config was checked.
 * @throws BackendError `INSTANCE_CREATION_FAILED`
 */
export async function createIdentityInstance(spec: IdentityInstanceSpec): Promise<RuntimeModelInstance> {
  const instance = new IdentityInstance(spec);
  const first =
    spec.index === 0 && spec.groupName === (spec.config.instance_group[0]?.name ?? spec.groupName);
  const creationDelaySec = first ? intParam(spec.config, 'creation_delay_sec') : 0;
  if (creationDelaySec > 0) await sleep(creationDelaySec * 1000);
  return instance;
}

class IdentityInstance implements RuntimeModelInstance {
  readonly name: string;
  readonly kind: string;
  readonly groupName: string;
  readonly index: number;
  readonly version: number;
  readonly #pairs: [string, string][];
  readonly #config: ModelConfig;
  readonly #delayMs: number;
  #disposed = false;
  /** Present when an input allows ragged batches (see {@link IdentityInstance.#executeEach}). */
  readonly executeRequests?: (requests: readonly InstanceRequest[]) => Promise<ExecutionTimings>;

  constructor(spec: IdentityInstanceSpec) {
    this.name = spec.name;
    this.kind = spec.kind;
    this.groupName = spec.groupName;
    this.index = spec.index;
    this.version = spec.version;
    this.#config = spec.config;
    this.#pairs = identityPairs(spec.config);
    const delay = intParam(spec.config, 'execute_delay_ms');
    const multiplier = intParam(spec.config, 'instance_wise_delay_multiplier');
    this.#delayMs = delay * (1 + multiplier * spec.index);
    if (spec.config.input.some((i) => i.allow_ragged_batch)) {
      this.executeRequests = (requests) => this.#executeEach(requests);
    }
  }

  async execute(inputs: ReadonlyMap<string, PackedTensor>): Promise<ExecutionResult> {
    this.#checkLive();
    const t0 = process.hrtime.bigint();
    const outputs = this.#copy(inputs);
    const t1 = process.hrtime.bigint();
    if (this.#delayMs > 0) await sleep(this.#delayMs);
    const t2 = process.hrtime.bigint();
    return { outputs, timings: { computeInputNs: t1 - t0, computeInferNs: t2 - t1, computeOutputNs: 0n } };
  }

  /**
   * The per-request path, taken when an input allows ragged batches: a batch's requests may differ
   * in the shapes of those inputs, so each request is copied on its own (as Triton's identity
   * backend answers every request of an execution), with one `execute_delay_ms` per execution; a
   * request that cannot be answered gets its own error.
   */
  async #executeEach(requests: readonly InstanceRequest[]): Promise<ExecutionTimings> {
    this.#checkLive();
    const t0 = process.hrtime.bigint();
    const answers: InstanceResponse[] = requests.map((request) => {
      try {
        return { outputs: this.#copy(request.inputs), final: true };
      } catch (error) {
        return { error: error instanceof Error ? error : new Error(String(error)), final: true };
      }
    });
    const t1 = process.hrtime.bigint();
    if (this.#delayMs > 0) await sleep(this.#delayMs);
    const t2 = process.hrtime.bigint();
    requests.forEach((request, i) => request.respond(answers[i] as InstanceResponse));
    return { computeInputNs: t1 - t0, computeInferNs: t2 - t1, computeOutputNs: 0n };
  }

  #checkLive(): void {
    if (this.#disposed)
      throw new BackendError('INSTANCE_DISPOSED', `instance '${this.name}' has been disposed`);
  }

  /** Every OUTPUT<n> as a copy of INPUT<n>. @throws BackendError `INVALID_EXECUTION_INPUT` */
  #copy(inputs: ReadonlyMap<string, PackedTensor>): Map<string, PackedTensor> {
    for (const name of inputs.keys()) {
      if (!this.#pairs.some(([i]) => i === name)) {
        throw new BackendError(
          'INVALID_EXECUTION_INPUT',
          `unexpected inference input '${name}' for model '${this.#config.name}'`,
        );
      }
    }
    const outputs = new Map<string, PackedTensor>();
    for (const [inputName, outputName] of this.#pairs) {
      const tensor = inputs.get(inputName);
      if (tensor === undefined) {
        const optional = this.#config.input.find((i) => i.name === inputName)?.optional ?? false;
        if (optional) continue;
        throw new BackendError(
          'INVALID_EXECUTION_INPUT',
          `expected input '${inputName}' for model '${this.#config.name}' is missing`,
        );
      }
      const expected = datatypeFromModelConfig(
        this.#config.input.find((i) => i.name === inputName)?.data_type ?? '',
      );
      if (expected !== undefined && tensor.datatype !== expected) {
        throw new BackendError(
          'INVALID_EXECUTION_INPUT',
          `unexpected datatype ${tensor.datatype} for input '${inputName}' of model '${this.#config.name}', expecting ${expected}`,
        );
      }
      outputs.set(outputName, {
        name: outputName,
        datatype: tensor.datatype,
        shape: [...tensor.shape],
        data: copyData(tensor.data),
      });
    }
    return outputs;
  }

  dispose(): Promise<void> {
    this.#disposed = true;
    return Promise.resolve();
  }
}
