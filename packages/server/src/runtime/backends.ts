/**
 * Model loading's entry to the runtime: `createInstances`, the instance factory the scheduler builds
 * instance groups on, which takes each instance from the backend registry (`registry.ts`,
 * `builtin-backends.ts`); also re-exports the registry and which backends tritonserver-ts can run.
 * @packageDocumentation
 */
import type { ModelDefinition } from '../repository/types.js';
import { builtinBackends } from './builtin-backends.js';
import { BackendError } from './errors.js';
import { backendKey, type CreateInstancesOptions } from './registry.js';
import { checkBackend } from './support.js';
import type { RuntimeModelInstance } from './types.js';

export { SUPPORTED_BACKENDS, checkBackend, type BackendSupport, type SupportedBackend } from './support.js';
export type { RuntimeModelInstance } from './types.js';
export {
  BackendRegistry,
  backendKey,
  type Backend,
  type BackendDescription,
  type BackendFactory,
  type BackendInstanceSpec,
  type BatchInputSupport,
  type CreateInstancesOptions,
} from './registry.js';
export { builtinBackends, createBuiltinBackends, registerBuiltinBackends } from './builtin-backends.js';

/**
 * Creates every instance of one model version: for each `instance_group`, `count` instances of its
 * `kind` (for `KIND_GPU`, `count` on each GPU of its `gpus` list, as Triton), named
 * `<group name>_<index>` with the index running over the whole group. The instances are created
 * at the same time (Triton's parallel instance loading: a Python instance is a process that
 * starts, an onnxruntime one a worker that builds its session); when one fails, the others are
 * disposed once created and the first failure is reported.
 *
 * Kinds: `KIND_CPU` and `KIND_MODEL` run on the CPU and report their kind; `KIND_GPU` groups fail
 * with `INSTANCE_CREATION_FAILED` (no GPU here, as Triton fails to load them) unless
 * `gpuFallback: 'cpu'`, which runs them on the CPU and reports `KIND_CPU`.
 *
 * Each instance comes from the factory registered for the model's backend in `options.backends`
 * (default {@link builtinBackends}; see `registry.ts`).
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
  const registry = options.backends ?? builtinBackends;
  const factory = registry.get(backendKey(config));
  if (factory === undefined) {
    throw new BackendError(
      'BACKEND_UNAVAILABLE',
      `backend '${backendKey(config)}' is not supported by tritonserver-ts (supported: ${registry.names().join(', ')})`,
    );
  }
  const modelVersion = model.versions.find((v) => v.version === version);
  if (modelVersion === undefined) {
    throw new BackendError(
      'INSTANCE_CREATION_FAILED',
      `version ${version} of model '${model.name}' is not available (available: ${model.versions.map((v) => v.version).join(', ')})`,
    );
  }
  const specs: Parameters<typeof factory>[0][] = [];
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
        const name = `${group.name}_${index}`;
        specs.push({ name, kind, groupName: group.name, index, version, config, modelVersion });
      }
    }
  } catch (err) {
    throw creationError(err);
  }
  const results = await Promise.allSettled(specs.map(async (spec) => factory(spec, options)));
  const created = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) {
    await Promise.allSettled(created.map((i) => i.dispose()));
    throw creationError(failed.reason);
  }
  return created;
}

/** A failure of instance creation as the runtime reports it. */
function creationError(err: unknown): BackendError {
  if (err instanceof BackendError) return err;
  return new BackendError('INSTANCE_CREATION_FAILED', err instanceof Error ? err.message : String(err), {
    cause: err,
  });
}
