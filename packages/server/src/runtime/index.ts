/**
 * The runtime: backends (onnxruntime, identity), their registry and the model-instance factory.
 * @packageDocumentation
 */
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
  registerBuiltinBackends,
  type BackendFactory,
  type BackendInstanceSpec,
  type CreateInstancesOptions,
} from './backends.js';
export { sessionOptionsFor } from './onnxruntime-backend.js';
export { identityPairs } from './identity-backend.js';
export { DATATYPE_TO_ORT, ORT_TO_DATATYPE, toOrtTensor, fromOrtTensor } from './ort-tensors.js';
