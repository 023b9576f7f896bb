/**
 * The config-stage checks of an ensemble (`platform: "ensemble"` with `ensemble_scheduling`), as
 * Triton runs them while parsing the config, with Triton's messages (protocol.md §5.2 "config"):
 * the platform/backend pair, no instance groups / optimization / warmup, at least one step, every
 * step naming a model and mapping inputs and outputs, each ensemble tensor produced once, every
 * ensemble input consumed, every ensemble output written from the inputs (a cycle never is), and
 * no dangling intermediate tensor. The checks that need the composing models' configs run at load
 * (`core/ensemble-graph.ts`).
 * @packageDocumentation
 */
import { ModelConfigError } from './errors.js';
import type { ModelConfig } from './model-config.js';

/** Triton's platform name of ensembles. */
export const ENSEMBLE_PLATFORM = 'ensemble';

function invalid(message: string, fieldPath?: string): ModelConfigError {
  return new ModelConfigError('MODEL_CONFIG_INVALID', message, fieldPath === undefined ? {} : { fieldPath });
}

interface FlowNode {
  ready: boolean;
  produced: boolean;
  readonly prev: FlowNode[];
  readonly next: FlowNode[];
}

/** Whether a config describes an ensemble (it has `ensemble_scheduling` or the ensemble platform). */
export function isEnsembleConfig(config: Pick<ModelConfig, 'platform' | 'ensemble_scheduling'>): boolean {
  return config.ensemble_scheduling !== undefined || config.platform === ENSEMBLE_PLATFORM;
}

/**
 * Validates an ensemble's own config (nothing is done for other models).
 * @throws ModelConfigError `MODEL_CONFIG_INVALID` with Triton's message
 */
export function validateEnsembleConfig(config: ModelConfig): void {
  const name = config.name;
  const scheduling = config.ensemble_scheduling;
  if (scheduling === undefined) {
    if (config.platform === ENSEMBLE_PLATFORM) {
      throw invalid(
        `ensemble scheduling must be set for ensemble ${name} whose platform is ${ENSEMBLE_PLATFORM}`,
        'ensemble_scheduling',
      );
    }
    return;
  }
  if (config.platform !== ENSEMBLE_PLATFORM) {
    throw invalid(
      `ensemble scheduling cannot be set for model '${name}' whose platform is not ${ENSEMBLE_PLATFORM}`,
      'platform',
    );
  }
  if (config.backend !== '') {
    throw invalid(
      `Ensemble model '${name}' must have platform type '${ENSEMBLE_PLATFORM}' and empty backend type`,
      'backend',
    );
  }
  if (config.instance_group.length !== 0) {
    throw invalid(`instance group should not be specified for ensemble '${name}'`, 'instance_group');
  }
  if (config.optimization !== undefined) {
    throw invalid(`optimization should not be specified for ensemble '${name}'`, 'optimization');
  }
  if (config.model_warmup.length !== 0) {
    throw invalid(`model_warmup can not be specified for ensemble '${name}'`, 'model_warmup');
  }
  if (scheduling.step.length === 0) {
    throw invalid(`must specify 'step' for ensemble '${name}'`, 'ensemble_scheduling.step');
  }

  // The data-flow graph: one node per ensemble tensor; a step links each of its inputs to each of
  // its outputs.
  const tensors = new Map<string, FlowNode>();
  const node = (tensor: string): FlowNode => {
    let n = tensors.get(tensor);
    if (n === undefined) {
      n = { ready: false, produced: false, prev: [], next: [] };
      tensors.set(tensor, n);
    }
    return n;
  };
  scheduling.step.forEach((step, i) => {
    const path = `ensemble_scheduling.step[${i}]`;
    if (step.model_name === '') {
      throw invalid(`must specify 'model_name' in step ${i} of ensemble '${name}'`, `${path}.model_name`);
    }
    if (Object.keys(step.input_map).length === 0) {
      throw invalid(`must specify 'input_map' in step ${i} of ensemble '${name}'`, `${path}.input_map`);
    }
    if (Object.keys(step.output_map).length === 0) {
      throw invalid(`must specify 'output_map' in step ${i} of ensemble '${name}'`, `${path}.output_map`);
    }
    const outputs: FlowNode[] = [];
    for (const tensor of Object.values(step.output_map)) {
      const n = node(tensor);
      if (n.produced) {
        throw invalid(
          `ensemble tensor '${tensor}' can appear in an output map only once for ensemble '${name}' step ${i}`,
          `${path}.output_map`,
        );
      }
      n.produced = true;
      outputs.push(n);
    }
    for (const tensor of Object.values(step.input_map)) {
      const input = node(tensor);
      for (const out of outputs) {
        out.prev.push(input);
        input.next.push(out);
      }
    }
  });

  // Walk the data flow from the ensemble inputs.
  const queue: FlowNode[] = [];
  for (const input of config.input) {
    const n = tensors.get(input.name);
    if (n === undefined) {
      // Triton's text (sic: one quote only after the ensemble name).
      throw invalid(`ensemble input '${input.name}' for ensemble ${name}' is not used`, 'input');
    }
    n.ready = true;
    queue.push(n);
  }
  for (let i = 0; i < queue.length; i++) {
    for (const next of (queue[i] as FlowNode).next) {
      if (next.ready) continue;
      if (next.prev.every((p) => p.ready)) {
        next.ready = true;
        queue.push(next);
      }
    }
  }
  const outputs = new Set<string>();
  for (const output of config.output) {
    const n = tensors.get(output.name);
    if (n === undefined) {
      throw invalid(`ensemble output '${output.name}' for ensemble ${name}' is not used`, 'output');
    }
    if (!n.ready) throw invalid(`output '${output.name}' for ensemble '${name}' is not written`, 'output');
    outputs.add(output.name);
  }
  for (const [tensor, n] of tensors) {
    if (outputs.has(tensor)) continue;
    if (!n.ready || n.next.length === 0) {
      throw invalid(`ensemble tensor '${tensor}' is unused in ensemble '${name}'`, 'ensemble_scheduling');
    }
  }
}
