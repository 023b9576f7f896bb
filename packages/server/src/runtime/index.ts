/**
 * The runtime: backends (onnxruntime, identity) and the model-instance factory.
 * @packageDocumentation
 */
export type { ExecutionResult, ExecutionTimings, ModelInstance } from './types.js';
export * from './errors.js';
export {
  createInstances,
  checkBackend,
  SUPPORTED_BACKENDS,
  type BackendSupport,
  type SupportedBackend,
  type CreateInstancesOptions,
  type RuntimeModelInstance,
} from './backends.js';
export { sessionOptionsFor } from './onnxruntime-backend.js';
export { identityPairs } from './identity-backend.js';
export { DATATYPE_TO_ORT, ORT_TO_DATATYPE, toOrtTensor, fromOrtTensor } from './ort-tensors.js';
