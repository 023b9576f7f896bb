/**
 * The runtime's entry: the backend interface and registry, the model-instance factory, the built-in
 * backends (onnxruntime, identity, python) and a few of their helpers. Like `builtin-backends.ts`
 * it may name the backends' folders; no other module of `src/` outside `runtime/` does.
 * @packageDocumentation
 */
import { resolveModel as resolveRepositoryModel } from '../repository/repository.js';
import type {
  ModelDefinition,
  ModelResolution,
  RepositoryBackends,
  RepositoryEntry,
  ResolveModelOptions as RepositoryResolveOptions,
} from '../repository/types.js';
import { createInstances, type CreateInstancesOptions, type RuntimeModelInstance } from './backends.js';
import { builtinBackends, createBuiltinBackends } from './builtin-backends.js';
import type { WorkerInstanceOptions } from './onnxruntime/index.js';

export type { ExecutionResult, ExecutionTimings, ModelInstance, RuntimeModelInstance } from './types.js';
export * from './errors.js';
export {
  createInstances,
  checkBackend,
  SUPPORTED_BACKENDS,
  type BackendSupport,
  type SupportedBackend,
  BackendRegistry,
  backendKey,
  builtinBackends,
  createBuiltinBackends,
  registerBuiltinBackends,
  type Backend,
  type BackendDescription,
  type BatchInputSupport,
  type BackendFactory,
  type BackendInstanceSpec,
  type CreateInstancesOptions,
} from './backends.js';
export { sessionOptionsFor } from './onnxruntime/onnxruntime-backend.js';
export { identityPairs } from './identity/identity-backend.js';
export { DATATYPE_TO_ORT, ORT_TO_DATATYPE, toOrtTensor, fromOrtTensor } from './onnxruntime/ort-tensors.js';
export type {
  BuiltinBackendSettings,
  OnnxruntimeSettings,
  WorkerInstanceOptions,
} from './builtin-backends.js';

/**
 * `createInstances` with the built-in backends and every onnxruntime instance hosted in a worker
 * thread of its own (`onnxruntime/worker-instances.ts`), with `workerOptions`; `options.backends`
 * is replaced by that registry (tests and benches; the core builds its own registry).
 */
export function createWorkerInstances(
  model: ModelDefinition,
  version: number,
  options: CreateInstancesOptions = {},
  workerOptions: WorkerInstanceOptions = {},
): Promise<RuntimeModelInstance[]> {
  return createInstances(model, version, {
    ...options,
    backends: createBuiltinBackends({ onnxruntime: { workerThreads: workerOptions } }),
  });
}

/** The repository's resolve options, with `backends` optional (default: the built-in backends). */
export type ResolveModelOptions = Omit<RepositoryResolveOptions, 'backends'> & {
  readonly backends?: RepositoryBackends;
};

/**
 * The repository's `resolveModel` asking the built-in backends (default settings) unless
 * `options.backends` names others (tests; the core passes its own registry).
 */
export function resolveModel(
  entry: RepositoryEntry,
  options: ResolveModelOptions = {},
): Promise<ModelResolution> {
  return resolveRepositoryModel(entry, { ...options, backends: options.backends ?? builtinBackends });
}
