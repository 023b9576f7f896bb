/**
 * Reading and writing {@link ModelConfig}s: `config.pbtxt` text, Triton's JSON, and configs built in
 * code.
 * @packageDocumentation
 */
import { renderJson, parseJsonMessage } from './config-json.js';
import { ModelConfigError } from './errors.js';
import type { ModelConfig, ModelConfigInit } from './model-config.js';
import { parseTextFormat } from './pbtxt/parser.js';
import { writeTextFormat } from './pbtxt/writer.js';

/**
 * Parses `config.pbtxt` text into a complete {@link ModelConfig} (proto3 defaults filled in).
 * @param options.file path used in error messages (e.g. `/models/simple/config.pbtxt`)
 * @throws ModelConfigError `MODEL_CONFIG_PARSE_ERROR` naming file:line:column and the field path
 */
export function parseModelConfigText(text: string, options: { file?: string } = {}): ModelConfig {
  return parseTextFormat(
    text,
    options.file === undefined ? {} : { file: options.file },
  ) as unknown as ModelConfig;
}

/**
 * Parses a JSON model config as Triton accepts it in the `config` parameter of `POST .../load`:
 * proto (or lowerCamelCase) field names, case-insensitive enum names, numbers or numeric strings for
 * numeric fields, unknown fields rejected.
 * @param json a JSON string or an already parsed value
 * @throws ModelConfigError `MODEL_CONFIG_JSON_ERROR`
 */
export function parseModelConfigJson(json: string | object): ModelConfig {
  let value: unknown = json;
  if (typeof json === 'string') {
    try {
      value = JSON.parse(json);
    } catch (err) {
      throw new ModelConfigError(
        'MODEL_CONFIG_JSON_ERROR',
        `invalid model config JSON: ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
  }
  return parseJsonMessage(value) as unknown as ModelConfig;
}

/**
 * Renders a config as the JSON object Triton returns from `GET v2/models/{m}[/versions/{v}]/config`
 * (protocol.md §2.11). `JSON.stringify` the result.
 */
export function modelConfigToJson(config: ModelConfig): Record<string, unknown> {
  return renderJson(config as unknown as Record<string, unknown>);
}

/**
 * Completes a partial config with proto3 defaults (enum names must be exact).
 * @throws ModelConfigError `MODEL_CONFIG_JSON_ERROR` for unknown fields or bad values
 */
export function createModelConfig(init: ModelConfigInit = {}): ModelConfig {
  return parseJsonMessage(init, {
    caseInsensitiveEnums: false,
    context: 'invalid model config',
  }) as unknown as ModelConfig;
}

/**
 * Writes a config as `config.pbtxt` text (fields at their default are left out);
 * `parseModelConfigText(modelConfigToText(c))` equals `c`.
 */
export function modelConfigToText(config: ModelConfig): string {
  return writeTextFormat(config as unknown as Record<string, unknown>);
}
