/**
 * What perf_analyzer reads of a model before loading it: metadata and config, as a {@link ModelProfile}.
 * @packageDocumentation
 */
import type { TritonClient } from '@tritonserver-ts/client';

import type { ModelProfile } from '../types.js';

/** Reads the model's metadata and config. (Being written: issue 10.) */
export function fetchModelProfile(
  client: TritonClient,
  modelName: string,
  modelVersion: string,
): Promise<ModelProfile> {
  void client;
  return Promise.reject(new Error(`fetchModelProfile(${modelName}, ${modelVersion}): not implemented yet`));
}
