/**
 * What perf_analyzer reads of a model before loading it: metadata and config, as a
 * {@link ModelProfile}. Like perf_analyzer's model parser: tensor shapes come from the metadata
 * with the batch dimension dropped when the model batches; `optional` and `is_shape_tensor` from
 * the config; an ensemble's composing models are collected recursively (step version -1 → the
 * server's choice), and an ensemble counts as a sequence model, or as cached, when one of its
 * composing models is.
 * @packageDocumentation
 */
import {
  datatypeFromModelConfig,
  isDatatype,
  type Datatype,
  type ModelConfig,
  type ModelMetadata,
  type TensorMetadata,
  type TritonClient,
} from '@tritonserver-ts/client';

import { PerfError } from '../errors.js';
import type { ModelProfile, TensorSpec } from '../types.js';

/** Nested ensembles deeper than this are refused (a cycle would be refused by the server anyway). */
const MAX_ENSEMBLE_DEPTH = 32;

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function readConfig(client: TritonClient, name: string, version: string): Promise<ModelConfig> {
  try {
    return await client.getModelConfig(name, version === '' ? undefined : version);
  } catch (error) {
    throw new PerfError('MODEL', `failed to get the model config of '${name}': ${messageOf(error)}`, {
      cause: error,
    });
  }
}

function toInt(value: number | string | undefined, what: string): number {
  const n = typeof value === 'string' ? Number(value) : (value ?? 0);
  if (!Number.isSafeInteger(n)) throw new PerfError('MODEL', `${what} is not an integer: ${String(value)}`);
  return n;
}

function datatypeOf(tensor: TensorMetadata, model: string): Datatype {
  if (!isDatatype(tensor.datatype)) {
    throw new PerfError(
      'MODEL',
      `model '${model}': tensor '${tensor.name}' has datatype '${tensor.datatype}', which perf cannot send`,
    );
  }
  return tensor.datatype;
}

function specsOf(
  tensors: readonly TensorMetadata[],
  configTensors: readonly {
    name: string;
    data_type: string;
    is_shape_tensor?: boolean;
    optional?: boolean;
  }[],
  maxBatchSize: number,
  model: string,
  kind: 'input' | 'output',
): TensorSpec[] {
  const byName = new Map(configTensors.map((t) => [t.name, t]));
  for (const t of configTensors) {
    if (!tensors.some((m) => m.name === t.name)) {
      throw new PerfError('MODEL', `no metadata found for ${kind} tensor ${t.name} of model '${model}'`);
    }
  }
  return tensors.map((tensor) => {
    const config = byName.get(tensor.name);
    let datatype = datatypeOf(tensor, model);
    if (config !== undefined) {
      const fromConfig = datatypeFromModelConfig(config.data_type);
      if (fromConfig !== undefined) datatype = fromConfig;
    }
    const shape = tensor.shape.map((d) => toInt(d, `a dimension of ${kind} '${tensor.name}'`));
    return {
      name: tensor.name,
      datatype,
      dims: maxBatchSize > 0 ? shape.slice(1) : shape,
      optional: config?.optional === true,
      isShapeTensor: config?.is_shape_tensor === true,
    };
  });
}

interface Composing {
  readonly models: { name: string; version: string }[];
  sequence: boolean;
  cache: boolean;
}

async function collectComposing(
  client: TritonClient,
  config: ModelConfig,
  into: Composing,
  depth: number,
): Promise<void> {
  if (config.platform !== 'ensemble') return;
  if (depth > MAX_ENSEMBLE_DEPTH) {
    throw new PerfError(
      'MODEL',
      `ensemble '${config.name}' nests more than ${MAX_ENSEMBLE_DEPTH} levels deep`,
    );
  }
  for (const step of config.ensemble_scheduling?.step ?? []) {
    const name = step.model_name ?? '';
    const versionNumber = toInt(step.model_version ?? -1, `model_version of step '${name}'`);
    const version = versionNumber === -1 ? '' : String(versionNumber);
    if (!into.models.some((m) => m.name === name && m.version === version)) {
      into.models.push({ name, version });
    }
    const stepConfig = await readConfig(client, name, version);
    if (stepConfig.sequence_batching !== undefined) into.sequence = true;
    if (stepConfig.response_cache?.enable === true) into.cache = true;
    await collectComposing(client, stepConfig, into, depth + 1);
  }
}

/**
 * Reads the model's metadata and config (and, for an ensemble, each composing model's config).
 *
 * ```ts
 * const profile = await fetchModelProfile(client, 'simple', '');
 * profile.inputs; // [{ name: 'INPUT0', datatype: 'INT32', dims: [16], ... }, ...]
 * ```
 * @param modelVersion - `-x`; '' for the server's choice
 * @throws PerfError `MODEL` when the model is unknown or not ready (with the server's message), or
 *   its metadata and config disagree.
 */
export async function fetchModelProfile(
  client: TritonClient,
  modelName: string,
  modelVersion: string,
): Promise<ModelProfile> {
  let metadata: ModelMetadata;
  try {
    metadata = await client.getModelMetadata(modelName, modelVersion === '' ? undefined : modelVersion);
  } catch (error) {
    throw new PerfError('MODEL', `failed to get the model metadata of '${modelName}': ${messageOf(error)}`, {
      cause: error,
    });
  }
  const config = await readConfig(client, modelName, modelVersion);
  const maxBatchSize = toInt(config.max_batch_size, 'max_batch_size');
  const inputs = specsOf(metadata.inputs, config.input ?? [], maxBatchSize, modelName, 'input');
  const outputs = specsOf(metadata.outputs, config.output ?? [], maxBatchSize, modelName, 'output');

  const composing: Composing = { models: [], sequence: false, cache: false };
  await collectComposing(client, config, composing, 0);

  return {
    name: metadata.name,
    version: modelVersion,
    maxBatchSize,
    inputs,
    outputs,
    decoupled: config.model_transaction_policy?.decoupled === true,
    sequenceBatching: config.sequence_batching !== undefined || composing.sequence,
    dynamicBatching: config.dynamic_batching !== undefined,
    responseCacheEnabled: config.response_cache?.enable === true || composing.cache,
    composingModels: composing.models,
    config,
  };
}
