/**
 * Parts of a model config this server parses (they are valid Triton config) but does not act on.
 * The model manager logs one warning per feature at load, so nobody believes a rate limiter (with
 * `--rate-limit=off`), an accelerator or a response cache on a sequence model is on when it is not.
 * @packageDocumentation
 */
import type { ModelConfig, ModelInstanceGroup } from './model-config.js';

function groups(list: readonly ModelInstanceGroup[]): string {
  return list.map((g) => `'${g.name}'`).join(', ');
}

/** What the server runs with that decides whether a section has an effect. */
export interface IgnoredFeaturesOptions {
  /** `--rate-limit=execution_count`: `rate_limiter` sections are then acted on. Default false. */
  readonly rateLimiting?: boolean;
}

/** One warning line per configured feature that tritonserver-ts ignores, in config order. */
export function ignoredFeatures(config: ModelConfig, options: IgnoredFeaturesOptions = {}): string[] {
  const out: string[] = [];
  const model = `model '${config.name}'`;
  if (config.response_cache?.enable === true && config.sequence_batching !== undefined) {
    // As in Triton: the sequence batcher does not look the response cache up.
    out.push(
      `${model}: response_cache is not used with sequence_batching (as in Triton); every request runs the model`,
    );
  }
  const limited = config.instance_group.filter(
    (g) =>
      g.rate_limiter !== undefined && (g.rate_limiter.resources.length > 0 || g.rate_limiter.priority !== 0),
  );
  // Triton ignores these silently with --rate-limit=off (its default); this server says so.
  if (limited.length > 0 && options.rateLimiting !== true) {
    out.push(
      `${model}: rate_limiter of instance group(s) ${groups(limited)} has no effect: rate limiting is off (--rate-limit=off, the default; --rate-limit=execution_count turns it on)`,
    );
  }
  const passive = config.instance_group.filter((g) => g.passive);
  if (passive.length > 0) {
    out.push(
      `${model}: instance group(s) ${groups(passive)} are passive in the config, but tritonserver-ts schedules requests on every instance`,
    );
  }
  const devices = config.instance_group.filter((g) => g.secondary_devices.length > 0);
  if (devices.length > 0) {
    out.push(`${model}: secondary_devices of instance group(s) ${groups(devices)} are ignored (no NVDLA)`);
  }
  const policies = config.instance_group.filter((g) => g.host_policy !== '');
  if (policies.length > 0) {
    out.push(
      `${model}: host_policy of instance group(s) ${groups(policies)} is ignored (tritonserver-ts has no host policies)`,
    );
  }
  const agents = config.model_repository_agents?.agents ?? [];
  if (agents.length > 0) {
    out.push(
      `${model}: model_repository_agents (${agents.map((a) => a.name).join(', ')}) are ignored (tritonserver-ts runs no repository agents)`,
    );
  }
  const optimization = config.optimization;
  const gpuAccelerators = optimization?.execution_accelerators?.gpu_execution_accelerator ?? [];
  if (gpuAccelerators.length > 0) {
    out.push(
      `${model}: execution accelerators (${gpuAccelerators.map((a) => `gpu:${a.name}`).join(', ')}) are ignored; there is no GPU, onnxruntime runs on its default CPU execution provider`,
    );
  }
  // onnxruntime refuses CPU accelerators at instance creation, as Triton's backend does for the ones
  // it lacks; other backends would silently run without them.
  const cpuAccelerators = optimization?.execution_accelerators?.cpu_execution_accelerator ?? [];
  if (cpuAccelerators.length > 0 && config.backend !== 'onnxruntime') {
    out.push(
      `${model}: execution accelerators (${cpuAccelerators.map((a) => `cpu:${a.name}`).join(', ')}) are ignored by the ${config.backend} backend`,
    );
  }
  const cuda = optimization?.cuda;
  if (cuda?.graphs === true) out.push(`${model}: optimization.cuda.graphs is ignored (no GPU)`);
  const otherCuda = [
    ...(cuda?.busy_wait_events === true ? ['busy_wait_events'] : []),
    ...((cuda?.graph_spec.length ?? 0) > 0 ? ['graph_spec'] : []),
    ...(cuda?.output_copy_stream === true ? ['output_copy_stream'] : []),
  ];
  if (otherCuda.length > 0) {
    out.push(`${model}: optimization.cuda ${otherCuda.join(', ')} ignored (no GPU)`);
  }
  if ((optimization?.gather_kernel_buffer_threshold ?? 0) !== 0) {
    out.push(`${model}: optimization.gather_kernel_buffer_threshold is ignored (no GPU)`);
  }
  if (optimization !== undefined && optimization.priority !== 'PRIORITY_DEFAULT') {
    out.push(`${model}: optimization.priority ${optimization.priority} is ignored`);
  }
  if (optimization?.eager_batching === true) {
    out.push(`${model}: optimization.eager_batching is ignored`);
  }
  const libraries = config.model_operations?.op_library_filename ?? [];
  if (libraries.length > 0) {
    out.push(
      `${model}: model_operations.op_library_filename (${libraries.join(', ')}) is ignored; no custom operation library is loaded`,
    );
  }
  // `model_metrics` is honoured for the one family Triton lets a model configure (the first-response
  // histogram's buckets); any other family gets Triton's warning.
  for (const control of config.model_metrics?.metric_control ?? []) {
    const family = control.metric_identifier?.family ?? '';
    if (family !== 'nv_inference_first_response_histogram_ms') {
      out.push(
        `Metric family '${family}' in 'metric_identifier' is not a customizable metric in Triton core.`,
      );
    }
  }
  return out;
}
