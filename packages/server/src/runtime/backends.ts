/**
 * The backend registry: which backends tritonserver-ts can run, and the instance factory the
 * scheduler builds instance groups on.
 * @packageDocumentation
 */
import type { GpuFallback, ModelDefinition } from '../repository/types.js';
import type { ModelConfig } from '../repository/model-config.js';
import type { ModelInstance } from './types.js';

/** Backends this server implements. */
export const SUPPORTED_BACKENDS = ['onnxruntime', 'identity'] as const;

/** A supported backend name. */
export type SupportedBackend = (typeof SUPPORTED_BACKENDS)[number];

/** Whether a config's backend can run here; when not, a user-facing reason. */
export type BackendSupport =
  | { readonly supported: true; readonly backend: SupportedBackend }
  | { readonly supported: false; readonly backend: string; readonly reason: string };

/** Options for {@link createInstances}. */
export interface CreateInstancesOptions {
  /** See {@link GpuFallback}. Default `'error'`. */
  readonly gpuFallback?: GpuFallback;
  /** ORT intra-op threads when the config has no `intra_op_thread_count` parameter. Default 1. */
  readonly defaultIntraOpThreads?: number;
  /** ORT inter-op threads when the config has no `inter_op_thread_count` parameter. Default 1. */
  readonly defaultInterOpThreads?: number;
}

/** A model instance created by this runtime (adds its group and index to {@link ModelInstance}). */
export interface RuntimeModelInstance extends ModelInstance {
  /** The instance group's name. */
  readonly groupName: string;
  /** Index of the instance within its group. */
  readonly index: number;
  /** The model version this instance runs. */
  readonly version: number;
}

/**
 * Tells whether `config`'s backend (after platform normalization) can run in tritonserver-ts.
 * Unsupported: `backend 'python' is not supported by tritonserver-ts (supported: onnxruntime, identity)`.
 */
export function checkBackend(config: ModelConfig): BackendSupport {
  void config;
  throw new Error('not implemented yet');
}

/**
 * Creates every instance of one model version: for each `instance_group`, `count` instances of its
 * `kind`, named `<group name>_<index>`. KIND_GPU groups fail with `INSTANCE_CREATION_FAILED` unless
 * `gpuFallback: 'cpu'`. On failure, instances already created are disposed.
 * @throws BackendError `BACKEND_UNAVAILABLE` / `INSTANCE_CREATION_FAILED`
 */
export function createInstances(
  model: ModelDefinition,
  version: number,
  options: CreateInstancesOptions = {},
): Promise<RuntimeModelInstance[]> {
  void model;
  void version;
  void options;
  return Promise.reject(new Error('not implemented yet'));
}
