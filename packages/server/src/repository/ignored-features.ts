/**
 * Parts of a model config this server parses (they are valid Triton config) but does not act on.
 * The model manager logs one warning per feature at load, so nobody believes a cache or an
 * accelerator is on when it is not.
 * @packageDocumentation
 */
import type { ModelConfig } from './model-config.js';

/** One warning line per configured feature that tritonserver-ts ignores, in config order. */
export function ignoredFeatures(config: ModelConfig): string[] {
  const out: string[] = [];
  const model = `model '${config.name}'`;
  if (config.response_cache?.enable === true) {
    out.push(
      `${model}: response_cache is enabled in the config but tritonserver-ts has no response cache; every request runs the model`,
    );
  }
  const limited = config.instance_group.filter(
    (g) =>
      g.rate_limiter !== undefined && (g.rate_limiter.resources.length > 0 || g.rate_limiter.priority !== 0),
  );
  if (limited.length > 0) {
    out.push(
      `${model}: rate_limiter of instance group(s) ${limited.map((g) => `'${g.name}'`).join(', ')} is ignored (tritonserver-ts has no rate limiter)`,
    );
  }
  const agents = config.model_repository_agents?.agents ?? [];
  if (agents.length > 0) {
    out.push(
      `${model}: model_repository_agents (${agents.map((a) => a.name).join(', ')}) are ignored (tritonserver-ts runs no repository agents)`,
    );
  }
  const accelerators = config.optimization?.execution_accelerators;
  const named = [
    ...(accelerators?.gpu_execution_accelerator ?? []).map((a) => `gpu:${a.name}`),
    ...(accelerators?.cpu_execution_accelerator ?? []).map((a) => `cpu:${a.name}`),
  ];
  if (named.length > 0) {
    out.push(
      `${model}: execution accelerators (${named.join(', ')}) are ignored; onnxruntime runs on its default CPU execution provider`,
    );
  }
  if (config.optimization?.cuda?.graphs === true) {
    out.push(`${model}: optimization.cuda.graphs is ignored (no GPU)`);
  }
  return out;
}
