/**
 * Generated models for the rate limiter's tests: instance groups with a `rate_limiter` section, as
 * Triton's `L0_rate_limiter` builds them from `custom_zero_1_float32` (a delay per execution).
 * @packageDocumentation
 */
import type { GeneratedPythonModel } from './python-models.js';

/** One `rate_limiter.resources` entry. */
export interface RateLimiterResourceSpec {
  readonly name: string;
  readonly count: number;
  readonly global?: boolean;
}

/** What a generated rate-limited model looks like. */
export interface RateLimitedModelSpec {
  readonly name: string;
  /** Instances of its one KIND_CPU group (default 1). */
  readonly count?: number;
  readonly resources?: readonly RateLimiterResourceSpec[];
  /** `rate_limiter.priority` (omitted when undefined). */
  readonly priority?: number;
  /** Execution time in ms (default 100). */
  readonly delayMs?: number;
}

function rateLimiterText(spec: RateLimitedModelSpec): string {
  const resources = (spec.resources ?? [])
    .map((r) => `{ name: "${r.name}" count: ${r.count}${r.global === true ? ' global: true' : ''} }`)
    .join(', ');
  const list = resources === '' ? '' : ` resources [ ${resources} ]`;
  const priority = spec.priority === undefined ? '' : ` priority: ${spec.priority}`;
  return `rate_limiter {${list}${priority} }`;
}

function instanceGroup(spec: RateLimitedModelSpec): string {
  return `instance_group [ { kind: KIND_CPU count: ${spec.count ?? 1} ${rateLimiterText(spec)} } ]\n`;
}

/**
 * A Python model that sleeps `delayMs` in every execution and answers each request with the
 * execution's start and end on the host's monotonic clock (`time.monotonic_ns()`, one clock for
 * every process): FP32 INPUT0 [1] → START, END (INT64 [1]); max_batch_size 0. Two executions
 * overlapped when one started before the other ended.
 */
export function sleepingRateLimitedModel(spec: RateLimitedModelSpec): GeneratedPythonModel {
  const config =
    `name: "${spec.name}"\nbackend: "python"\nmax_batch_size: 0\n` +
    'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]\n' +
    'output [\n  { name: "START" data_type: TYPE_INT64 dims: [ 1 ] },\n  { name: "END" data_type: TYPE_INT64 dims: [ 1 ] }\n]\n' +
    instanceGroup(spec) +
    `parameters { key: "sleep_ms" value { string_value: "${spec.delayMs ?? 100}" } }\n`;
  const model = `import json
import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.sleep = int(config["parameters"]["sleep_ms"]["string_value"]) / 1000.0

    def execute(self, requests):
        start = time.monotonic_ns()
        time.sleep(self.sleep)
        end = time.monotonic_ns()
        return [
            pb_utils.InferenceResponse(
                [
                    pb_utils.Tensor("START", np.array([start], dtype=np.int64)),
                    pb_utils.Tensor("END", np.array([end], dtype=np.int64)),
                ]
            )
            for _ in requests
        ]
`;
  return { name: spec.name, files: { 'config.pbtxt': config, '1/model.py': model } };
}

/**
 * An identity-backend model (no process, loads at once) that takes `delayMs` per execution
 * (`execute_delay_ms`), as Triton's `custom_zero_1_float32` in `L0_rate_limiter`: FP32 INPUT0 [1] →
 * OUTPUT0 = INPUT0; max_batch_size 0 (each request runs alone).
 */
export function delayedRateLimitedModel(spec: RateLimitedModelSpec): GeneratedPythonModel {
  const config =
    `name: "${spec.name}"\nbackend: "identity"\nmax_batch_size: 0\n` +
    'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]\n' +
    'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]\n' +
    instanceGroup(spec) +
    `parameters { key: "execute_delay_ms" value { string_value: "${spec.delayMs ?? 100}" } }\n`;
  return { name: spec.name, files: { 'config.pbtxt': config, '1/.keep': '' } };
}
