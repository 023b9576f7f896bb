/**
 * The model repository: config.pbtxt parsing, ModelConfig ⇄ JSON, repository scanning, versions,
 * normalization and validation. It knows no backend: a backend's auto-complete runs through the
 * `RepositoryBackends` the caller hands in (the runtime's registry).
 * @packageDocumentation
 */
export * from './model-config.js';
export * from './errors.js';
export * from './types.js';
export { MODEL_CONFIG_SCHEMA, INT64_AS_NUMBER_PATHS } from './schema.js';
export type {
  Schema,
  MessageDescriptor,
  FieldDescriptor,
  EnumDescriptor,
  ValueType,
  ScalarType,
} from './schema.js';
export * from './model-config-io.js';
export { listRepositoryModels, resolveModel, readLabels, writeOverrideFiles } from './repository.js';
export { listVersionDirectories, selectVersions } from './versions.js';
export { completeBackendFields, PLATFORM_BACKENDS, DEFAULT_MODEL_FILENAMES } from './platform.js';
export {
  normalizeModelConfig,
  normalizeInstanceGroups,
  SEQUENCE_IDLE_DEFAULT_MICROSECONDS,
} from './normalize.js';
export { validateModelConfig, type ValidateOptions } from './validate.js';
export * from './sequence-controls.js';
export { parseTextFormat, writeTextFormat, type TextFormatOptions } from './pbtxt/index.js';
