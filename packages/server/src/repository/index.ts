/**
 * The model repository: config.pbtxt parsing, ModelConfig ⇄ JSON, repository scanning, versions,
 * auto-complete and validation.
 * @packageDocumentation
 */
export * from './model-config.js';
export * from './errors.js';
export * from './types.js';
export { MODEL_CONFIG_SCHEMA } from './schema.js';
export * from './model-config-io.js';
