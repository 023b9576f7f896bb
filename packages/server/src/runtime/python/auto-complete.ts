/**
 * Triton's Python auto-complete: when auto-complete is on and the model's `TritonPythonModel`
 * defines `auto_complete_config`, a short-lived stub runs it on the config (Triton's JSON form)
 * before the model loads, and the completed config replaces it.
 *
 * To avoid starting Python for every model.py, the stub is started only when the file's text
 * mentions `auto_complete_config` (a model defining it always does).
 * @packageDocumentation
 */
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';

import { ModelRepositoryError } from '../../repository/errors.js';
import { modelConfigToJson, parseModelConfigJson } from '../../repository/model-config-io.js';
import type { ModelConfig } from '../../repository/model-config.js';
import type { AutoCompleteRequest } from '../../repository/types.js';
import { initErrorMessage } from './missing-module.js';
import {
  findPythonInterpreter,
  DEFAULT_STUB_TIMEOUT_SECONDS,
  type PythonBackendSettings,
} from './settings.js';
import { StubProcess } from './stub-process.js';

/**
 * Runs the model's `auto_complete_config` on `config`; returns the completed config, or undefined
 * when the model does not define it.
 * @throws Error with the Python error (or what is missing to run Python) as its message.
 */
export async function runPythonAutoComplete(
  config: ModelConfig,
  modelPath: string,
  settings: PythonBackendSettings = {},
): Promise<ModelConfig | undefined> {
  let source: string;
  try {
    source = await readFile(modelPath, 'utf8');
  } catch {
    return undefined; // a missing model.py fails when the instance is created, with its own message
  }
  if (!source.includes('auto_complete_config')) return undefined;
  const found = await findPythonInterpreter(settings);
  if (!found.ok) throw new Error(found.reason);
  const stub = StubProcess.start({
    interpreter: found.path,
    modelPath,
    label: `${config.name} (auto-complete)`,
    cwd: dirname(modelPath),
    ...(settings.log !== undefined ? { log: settings.log } : {}),
  });
  try {
    const timeoutMs = (settings.stubTimeoutSeconds ?? DEFAULT_STUB_TIMEOUT_SECONDS) * 1000;
    const answer = stub.waitFor(
      ['auto_complete_done', 'init_error'],
      timeoutMs,
      `auto_complete_config of model '${config.name}'`,
    );
    stub.send({ type: 'auto_complete', config: modelConfigToJson(config) });
    const frame = await answer;
    if (frame.header.type === 'init_error') {
      throw new Error(await initErrorMessage(frame.header, found.path, settings));
    }
    if (frame.header.defined !== true) return undefined;
    return parseModelConfigJson(frame.header.config as object);
  } finally {
    await stub.stop(1000);
  }
}

/**
 * The Python backend's auto-complete (its `Backend.autoCompleteConfig`): runs the latest version's
 * `auto_complete_config` ({@link runPythonAutoComplete}) and resolves with the completed config.
 * @throws ModelRepositoryError `MODEL_LOAD_FAILED` naming the model and its file.
 */
export async function autoCompletePythonConfig(
  config: ModelConfig,
  request: AutoCompleteRequest,
  settings?: PythonBackendSettings,
): Promise<ModelConfig | undefined> {
  try {
    return await runPythonAutoComplete(config, request.modelPath, settings);
  } catch (error) {
    throw new ModelRepositoryError(
      'MODEL_LOAD_FAILED',
      `auto_complete_config of model '${config.name}' (${request.displayPath}) failed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}
