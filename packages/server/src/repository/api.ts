/**
 * Public functions of the repository layer (signatures land first; implementations follow).
 * @packageDocumentation
 */
import type { ModelConfig, ModelConfigInit } from './model-config.js';
import type { ModelResolution, RepositoryEntry, ResolveModelOptions } from './types.js';

/** Parses `config.pbtxt` text. @throws ModelConfigError `MODEL_CONFIG_PARSE_ERROR` naming file:line:column and field. */
export function parseModelConfigText(text: string, options: { file?: string } = {}): ModelConfig {
  void text;
  void options;
  throw new Error('not implemented yet');
}
/** Parses a JSON config (load override): string or parsed object. @throws ModelConfigError `MODEL_CONFIG_JSON_ERROR`. */
export function parseModelConfigJson(json: string | object): ModelConfig {
  void json;
  throw new Error('not implemented yet');
}
/** Renders a config as Triton's `GET .../config` JSON object (pass it to `JSON.stringify`). */
export function modelConfigToJson(config: ModelConfig): Record<string, unknown> {
  void config;
  throw new Error('not implemented yet');
}
/** Completes a partial config with proto defaults. */
export function createModelConfig(init: ModelConfigInit = {}): ModelConfig {
  void init;
  throw new Error('not implemented yet');
}
/** Lists model directories of one or more repositories. @throws ModelRepositoryError `REPOSITORY_NOT_FOUND`. */
export function listRepositoryModels(repositories: readonly string[]): Promise<RepositoryEntry[]> {
  void repositories;
  return Promise.reject(new Error('not implemented yet'));
}
/** Resolves one model (config, auto-complete, versions, labels); never throws for model problems. */
export function resolveModel(
  entry: RepositoryEntry,
  options: ResolveModelOptions = {},
): Promise<ModelResolution> {
  void entry;
  void options;
  return Promise.reject(new Error('not implemented yet'));
}
