/**
 * The core as seen from inside a model: what a Python model's BLS calls and an ensemble's steps use
 * to run other models of the same server. `InferenceServer` implements it; backends and schedulers
 * receive it through `CreateInstancesOptions.inferenceHost` and the scheduler factory's
 * `inferenceHost` option, so neither imports the core server module (no import cycle).
 * @packageDocumentation
 */
import type { CoreInferRequest, CoreInferResponse } from './types.js';

/** Runs inference requests on the models of the server that hosts the caller. */
export interface InferenceHost {
  /**
   * Runs one request exactly as a front end would (version resolution, validation, scheduling,
   * statistics of the called model); rejects with the core's `ServerError`.
   */
  infer(request: CoreInferRequest): Promise<CoreInferResponse>;
}
