/**
 * The load-time checks of an ensemble that need its composing models (protocol.md §5.2 "graph" and
 * "typed"), with Triton's messages: composing models present, loaded and at the pinned versions;
 * the batch-size rule; every mapped tensor an input / output of its step model; each tensor's
 * datatype and shape agreeing wherever it is produced or consumed; and inputs of one step never
 * coming from two different decoupled models. The ensemble's own config was checked when it was
 * parsed (`repository/validate-ensemble.ts`).
 * @packageDocumentation
 */
import type { EnsembleStep, ModelConfig } from '../repository/model-config.js';
import { ServerError } from '../common/errors.js';

/** The composing model names of an ensemble config, in step order, without repeats. */
export function composingModels(config: ModelConfig): string[] {
  return [...new Set((config.ensemble_scheduling?.step ?? []).map((s) => s.model_name))];
}

/** What the graph check needs to know about one composing model. */
export type ComposingStatus =
  /** Absent from every repository (or found twice). */
  | { readonly kind: 'missing' }
  /** Its config could not be read or is invalid (Triton: the node is not valid). */
  | { readonly kind: 'invalid'; readonly message: string }
  /** Resolved, but no version is READY; `message` is why the load failed, if it did. */
  | { readonly kind: 'not-loaded'; readonly message?: string }
  /** READY versions (ascending). */
  | { readonly kind: 'loaded'; readonly versions: readonly number[] };

const invalidArg = (message: string): ServerError => new ServerError('INVALID_ARG', message);

/**
 * Triton's dependency-graph check of ensemble `name` (run before its typed check).
 * @throws ServerError INVALID_ARG with Triton's message
 */
export function checkComposingModels(
  name: string,
  config: ModelConfig,
  statusOf: (model: string) => ComposingStatus,
): void {
  const models = composingModels(config);
  const missing = models.filter((m) => statusOf(m).kind === 'missing').sort();
  if (missing.length > 0) {
    throw invalidArg(
      `ensemble ${name} contains models that are not available or ambiguous: ${missing.join(', ')}`,
    );
  }
  for (const model of models) {
    const status = statusOf(model);
    if (status.kind === 'invalid') {
      throw invalidArg(
        `ensemble '${name}' depends on '${model}' which is not valid. Model '${model}' failed with error: ${status.message}`,
      );
    }
    if (status.kind === 'not-loaded') {
      throw invalidArg(
        status.message === undefined
          ? `ensemble '${name}' depends on '${model}' which has no loaded version.`
          : `ensemble '${name}' depends on '${model}' which has no loaded version. Model '${model}' loading failed with error: ${status.message}`,
      );
    }
    if (status.kind === 'loaded') {
      const pinned = (config.ensemble_scheduling?.step ?? [])
        .filter((s) => s.model_name === model && s.model_version >= 0)
        .map((s) => s.model_version);
      for (const v of pinned) {
        if (!status.versions.includes(v)) {
          throw invalidArg(
            `ensemble '${name}' depends on '${model}' whose required version ${v} is not loaded.`,
          );
        }
      }
    }
  }
}

/** One ensemble tensor as inferred from one model (Triton's `TensorNode`). */
interface TensorNode {
  readonly model: string;
  readonly type: string;
  readonly dims: readonly number[];
  readonly fullDims: readonly number[];
  decoupled: boolean;
  label: number;
  visited: boolean;
  readonly prev: TensorNode[];
  readonly next: TensorNode[];
  /** Shared by the outputs of one step (they carry one decoupled label). */
  sibling?: { label: number; visited: boolean };
}

function tensorNode(model: string, batching: boolean, type: string, dims: readonly number[]): TensorNode {
  return {
    model,
    type,
    dims,
    fullDims: batching ? [-1, ...dims] : [...dims],
    decoupled: false,
    label: 0,
    visited: false,
    prev: [],
    next: [],
  };
}

function wildcardEqual(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === -1 || b[i] === -1 || d === b[i]);
}

function consistent(lhs: TensorNode, rhs: TensorNode, prefix: string): void {
  if (lhs.type !== rhs.type) {
    throw invalidArg(
      `${prefix}inconsistent data type: ${lhs.type} is inferred from model ${lhs.model} while ${rhs.type} is inferred from model ${rhs.model}`,
    );
  }
  if (!wildcardEqual(lhs.dims, rhs.dims) && !wildcardEqual(lhs.fullDims, rhs.fullDims)) {
    throw invalidArg(
      `${prefix}inconsistent shape: [${lhs.fullDims.join(',')}] is inferred from model ${lhs.model} while [${rhs.fullDims.join(',')}] is inferred from model ${rhs.model}`,
    );
  }
}

/**
 * Triton's typed check of ensemble `name` against its composing models' (completed) configs.
 * @param configOf - the config of the step's model at the step's version (−1 = latest ready).
 * @returns whether the ensemble is decoupled (a decoupled step feeds its outputs)
 * @throws ServerError INVALID_ARG with Triton's message
 */
export function checkEnsembleTypes(
  name: string,
  config: ModelConfig,
  configOf: (step: EnsembleStep) => ModelConfig,
): { decoupled: boolean } {
  const batching = config.max_batch_size > 0;
  const tensors = new Map<string, TensorNode>();
  for (const input of config.input) {
    const dims = input.reshape !== undefined ? input.reshape.shape : input.dims;
    tensors.set(input.name, tensorNode(name, batching, input.data_type, dims));
  }
  const sink = tensorNode(name, false, '', []);
  for (const output of config.output) {
    const dims = output.reshape !== undefined ? output.reshape.shape : output.dims;
    const node = tensors.get(output.name) ?? tensorNode(name, batching, output.data_type, dims);
    tensors.set(output.name, node);
    sink.prev.push(node);
    node.next.push(sink);
  }

  for (const step of config.ensemble_scheduling?.step ?? []) {
    const model = configOf(step);
    const stepName = step.model_name;
    if (model.max_batch_size !== 0 && model.max_batch_size < config.max_batch_size) {
      throw invalidArg(
        `ensemble ${name} allows maximum batch size ${config.max_batch_size}, but it contains model ${stepName} which only allows maximum batch size to be ${model.max_batch_size}`,
      );
    }
    const stepBatching = model.max_batch_size > 0;
    const inputNames = new Set(model.input.map((i) => i.name));
    for (const [input, tensor] of Object.entries(step.input_map)) {
      if (!inputNames.has(input)) {
        throw invalidArg(
          `in ensemble ${name}, ensemble tensor ${tensor} is mapping to non-existing input ${input} in model ${stepName}`,
        );
      }
    }
    for (const input of model.input) {
      const tensor = step.input_map[input.name];
      if (tensor === undefined) {
        if (input.optional) continue;
        throw invalidArg(
          `in ensemble ${name}, input ${input.name} in model ${stepName} is not mapped to any ensemble tensors`,
        );
      }
      const node = tensorNode(stepName, stepBatching, input.data_type, input.dims);
      const existing = tensors.get(tensor);
      if (existing !== undefined)
        consistent(existing, node, `in ensemble ${name}, ensemble tensor ${tensor}: `);
      else tensors.set(tensor, node);
    }
    const outputNames = new Set(model.output.map((o) => o.name));
    for (const [output, tensor] of Object.entries(step.output_map)) {
      if (!outputNames.has(output)) {
        throw invalidArg(
          `in ensemble ${name}, ensemble tensor ${tensor} is mapped from non-existing output ${output} in model ${stepName}`,
        );
      }
    }
    const sibling = { label: 0, visited: false };
    for (const [output, tensor] of Object.entries(step.output_map)) {
      const cfg = model.output.find((o) => o.name === output);
      if (cfg === undefined) continue;
      const node = tensorNode(stepName, stepBatching, cfg.data_type, cfg.dims);
      let target = tensors.get(tensor);
      if (target !== undefined) consistent(target, node, `in ensemble ${name}, ensemble tensor ${tensor}: `);
      else {
        target = node;
        tensors.set(tensor, node);
      }
      target.sibling = sibling;
    }
    // Link the step's inputs to its outputs.
    const decoupled = model.model_transaction_policy?.decoupled === true;
    for (const tensor of Object.values(step.output_map)) {
      const node = tensors.get(tensor) as TensorNode;
      node.decoupled = decoupled;
      for (const input of Object.values(step.input_map)) {
        const prev = tensors.get(input) as TensorNode;
        node.prev.push(prev);
        prev.next.push(node);
      }
    }
  }

  // Walk the data flow and label tensors by the decoupled model they originate from.
  let label = 0;
  const queue: TensorNode[] = [];
  for (const input of config.input) {
    const node = tensors.get(input.name) as TensorNode;
    node.visited = true;
    queue.push(node);
  }
  for (let i = 0; i < queue.length; i++) {
    for (const next of (queue[i] as TensorNode).next) {
      if (next.visited || !next.prev.every((p) => p.visited)) continue;
      const first = (next.prev[0] as TensorNode).label;
      if (next.prev.some((p) => p.label !== first)) {
        throw invalidArg(
          `in ensemble ${name}, step of model '${next.model}' receives inputs originated from different decoupled models`,
        );
      }
      if (next.sibling !== undefined) {
        if (!next.sibling.visited) {
          next.sibling.label = next.decoupled ? ++label : first;
          next.sibling.visited = true;
        }
        next.label = next.sibling.label;
      } else {
        next.label = next.decoupled ? ++label : first;
      }
      next.visited = true;
      queue.push(next);
    }
  }
  return { decoupled: label !== 0 };
}
