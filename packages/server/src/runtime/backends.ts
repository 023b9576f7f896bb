/**
 * The backend registry: which backends tritonserver-ts can run, and the instance factory the
 * scheduler builds instance groups on.
 * @packageDocumentation
 */
import type { GpuFallback, ModelDefinition } from '../repository/types.js';
import { BackendError } from './errors.js';
import { createIdentityInstance } from './identity-backend.js';
import { createOnnxInstance, type OnnxInstanceSpec } from './onnxruntime-backend.js';
import { checkBackend } from './support.js';
import type { ModelInstance } from './types.js';

export { SUPPORTED_BACKENDS, checkBackend, type BackendSupport, type SupportedBackend } from './support.js';

/** Options for {@link createInstances}. */
export interface CreateInstancesOptions {
  /** See {@link GpuFallback}. Default `'error'`. */
  readonly gpuFallback?: GpuFallback;
  /** ORT intra-op threads when the config has no `intra_op_thread_count` parameter. Default 1. */
  readonly defaultIntraOpThreads?: number;
  /** ORT inter-op threads when the config has no `inter_op_thread_count` parameter. Default 1. */
  readonly defaultInterOpThreads?: number;
  /**
   * Creates one onnxruntime instance from its spec. Default: {@link createOnnxInstance} (a session on
   * the calling thread). The scheduler's `createWorkerInstances` passes a factory that hosts the
   * session in a worker thread.
   */
  readonly createOnnxInstance?: (spec: OnnxInstanceSpec) => Promise<RuntimeModelInstance>;
}

/** A model instance created by this runtime (adds its group and index to {@link ModelInstance}). */
export interface RuntimeModelInstance extends ModelInstance {
  /** The instance group's name. */
  readonly groupName: string;
  /** Index of the instance within its group. */
  readonly index: number;
  /** The model version this instance runs. */
  readonly version: number;
}

/**
 * Creates every instance of one model version: for each `instance_group`, `count` instances of its
 * `kind` (for `KIND_GPU`, `count` on each GPU of its `gpus` list, as Triton), named
 * `<group name>_<index>` with the index running over the whole group. Instances are created one
 * after another; on failure, instances already created are disposed.
 *
 * Kinds: `KIND_CPU` and `KIND_MODEL` run on the CPU and report their kind; `KIND_GPU` groups fail
 * with `INSTANCE_CREATION_FAILED` (no GPU here, as Triton fails to load them) unless
 * `gpuFallback: 'cpu'`, which runs them on the CPU and reports `KIND_CPU`.
 * @throws BackendError `BACKEND_UNAVAILABLE` | `INSTANCE_CREATION_FAILED`
 */
export async function createInstances(
  model: ModelDefinition,
  version: number,
  options: CreateInstancesOptions = {},
): Promise<RuntimeModelInstance[]> {
  const config = model.config;
  const support = checkBackend(config);
  if (!support.supported) throw new BackendError('BACKEND_UNAVAILABLE', support.reason);
  const modelVersion = model.versions.find((v) => v.version === version);
  if (modelVersion === undefined) {
    throw new BackendError(
      'INSTANCE_CREATION_FAILED',
      `version ${version} of model '${model.name}' is not available (available: ${model.versions.map((v) => v.version).join(', ')})`,
    );
  }
  const created: RuntimeModelInstance[] = [];
  try {
    for (const group of config.instance_group) {
      let kind: string = group.kind;
      if (kind === 'KIND_GPU') {
        if ((options.gpuFallback ?? 'error') !== 'cpu') {
          throw new BackendError(
            'INSTANCE_CREATION_FAILED',
            `instance group ${group.name} of model ${model.name} has kind KIND_GPU but no GPUs are available (tritonserver-ts runs on the CPU only; pass gpuFallback: 'cpu' to run KIND_GPU groups on the CPU)`,
          );
        }
        kind = 'KIND_CPU';
      } else if (kind === 'KIND_AUTO') {
        kind = 'KIND_CPU';
      }
      // As Triton: a KIND_GPU group has `count` instances on each GPU it lists (on the CPU here).
      const perDevice = group.kind === 'KIND_GPU' ? Math.max(1, group.gpus.length) : 1;
      for (let index = 0; index < group.count * perDevice; index++) {
        const base = { name: `${group.name}_${index}`, kind, groupName: group.name, index, version, config };
        const instance =
          support.backend === 'onnxruntime'
            ? await (options.createOnnxInstance ?? createOnnxInstance)({
                ...base,
                modelPath: modelVersion.modelPath,
                ...(modelVersion.displayPath === undefined ? {} : { displayPath: modelVersion.displayPath }),
                ...(options.defaultIntraOpThreads === undefined
                  ? {}
                  : { defaultIntraOpThreads: options.defaultIntraOpThreads }),
                ...(options.defaultInterOpThreads === undefined
                  ? {}
                  : { defaultInterOpThreads: options.defaultInterOpThreads }),
              })
            : await createIdentityInstance(base);
        created.push(instance);
      }
    }
  } catch (err) {
    await Promise.allSettled(created.map((i) => i.dispose()));
    if (err instanceof BackendError) throw err;
    throw new BackendError('INSTANCE_CREATION_FAILED', err instanceof Error ? err.message : String(err), {
      cause: err,
    });
  }
  return created;
}
