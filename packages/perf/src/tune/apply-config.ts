/**
 * Applying a configuration: the repository load API with a config override (Triton's
 * `POST v2/repository/models/{m}/load` with `parameters.config`; the server must run with
 * `--model-control-mode=explicit`), then waiting until the model is ready and checking that the
 * server serves the swept settings. Restoring loads the model again without an override, so the
 * server reads its own `config.pbtxt` again.
 * @packageDocumentation
 */
import type { ModelConfig, TritonClient } from '@tritonserver-ts/client';
import { setTimeout as sleep } from 'node:timers/promises';

import { PerfError } from '../errors.js';
import type { ModelConfigJson, VariantSettings } from './search-space.js';
import { describeSettings, sameSettings, settingsOf } from './search-space.js';

/** The client calls the tuner makes (a {@link TritonClient} has them all). */
export type ConfigClient = Pick<TritonClient, 'loadModel' | 'isModelReady' | 'getModelConfig'>;

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Polls `isModelReady` until true or `timeoutMs` passes. @throws PerfError `TUNE` */
export async function waitUntilReady(
  client: ConfigClient,
  modelName: string,
  modelVersion: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let delay = 10;
  for (;;) {
    const ready = await client.isModelReady(modelName, modelVersion).catch(() => false);
    if (ready) return;
    if (Date.now() >= deadline) {
      throw new PerfError('TUNE', `model '${modelName}' is not ready ${String(timeoutMs)} ms after its load`);
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 250);
  }
}

/**
 * Loads `config` as `modelName`'s configuration and waits until the model is ready. When `expected`
 * is given, the configuration the server then reports must have those settings (a server that
 * ignored the override would otherwise be measured under the wrong name).
 * @throws PerfError `TUNE` when the load fails, the model does not become ready, or the served
 * settings differ
 */
export async function applyConfig(
  client: ConfigClient,
  modelName: string,
  modelVersion: string,
  config: ModelConfigJson,
  options: { readonly expected?: VariantSettings; readonly readyTimeoutMs: number },
): Promise<ModelConfig> {
  try {
    await client.loadModel(modelName, { config });
  } catch (error) {
    throw new PerfError('TUNE', `loading '${modelName}' with the configuration failed: ${message(error)}`, {
      cause: error,
    });
  }
  await waitUntilReady(client, modelName, modelVersion, options.readyTimeoutMs);
  let served: ModelConfig;
  try {
    served = await client.getModelConfig(modelName, modelVersion);
  } catch (error) {
    throw new PerfError('TUNE', `reading the configuration of '${modelName}' failed: ${message(error)}`, {
      cause: error,
    });
  }
  if (options.expected !== undefined) {
    const got = settingsOf(served);
    if (!sameSettings(options.expected, got)) {
      throw new PerfError(
        'TUNE',
        `the server serves '${modelName}' with "${describeSettings(got)}" after loading "${describeSettings(options.expected)}"`,
      );
    }
  }
  return served;
}

/**
 * Puts `original` back: loads `modelName` again without an override (the server reads its
 * repository `config.pbtxt`), waits until it is ready, and when the served settings still differ
 * from `original` (the model had been loaded with an override before the tuner started) loads
 * `original` itself as the override. @throws PerfError `TUNE`
 */
export async function restoreConfig(
  client: ConfigClient,
  modelName: string,
  modelVersion: string,
  original: ModelConfig,
  readyTimeoutMs: number,
): Promise<void> {
  try {
    await client.loadModel(modelName);
  } catch (error) {
    throw new PerfError(
      'TUNE',
      `restoring the repository configuration of '${modelName}' failed: ${message(error)}`,
      { cause: error },
    );
  }
  await waitUntilReady(client, modelName, modelVersion, readyTimeoutMs);
  const served = await client.getModelConfig(modelName, modelVersion).catch(() => undefined);
  const expected = settingsOf(original);
  if (served !== undefined && sameSettings(expected, settingsOf(served))) return;
  await applyConfig(client, modelName, modelVersion, original, {
    expected,
    readyTimeoutMs,
  });
}
