/**
 * The backend interface and its registry. A backend is one folder, `runtime/<name>/`, behind the
 * {@link Backend} interface: how it creates an instance, and what the repository, the scheduler and
 * the core may ask of it (auto-complete of a config, whether it needs its model file, which
 * batch-input features its instances read). Its settings (`--backend-config=<name>,…`, the server
 * log, how instances are hosted) are bound when it is registered. Model loading
 * (`createInstances` in `backends.ts`) looks a model's backend up here; the repository asks it
 * through {@link BackendRegistry.find} and {@link BackendRegistry.support} (the
 * `RepositoryBackends` it declares), the scheduler through the factory's `batchInputs` option.
 *
 * Adding a backend (onnxruntime, identity and python are added this way):
 * 1. Write `runtime/<name>/`, whose entry creates one instance and returns a
 *    {@link RuntimeModelInstance} (import that type from `../types.js`; never import `backends.ts`,
 *    the registration module or another backend's folder). Throw
 *    `BackendError('INSTANCE_CREATION_FAILED', …)` for a config the backend refuses.
 * 2. Register it in `builtin-backends.ts` (the one module that names the backends):
 *    `registry.register('<name>', { createInstance, autoCompleteConfig, … })`.
 * 3. Add the name to `SUPPORTED_BACKENDS` in `support.ts` (the unsupported-backend message lists
 *    it; a test keeps it equal to the built-in registry's names).
 * No file outside `runtime/` imports a backend's folder (a test walks the imports).
 *
 * The lookup key is the config's `backend`, or its `platform` when `backend` is empty (after
 * `repository/platform.ts` has mapped known platforms such as `onnxruntime_onnx` to their backend).
 * An ensemble (`platform: "ensemble"`, no backend) never enters the registry (ADR 0011): it has no
 * instances, and its scheduler runs each step as a core request on the composing models.
 * @packageDocumentation
 */
import type { InferenceHost } from '../common/inference-host.js';
import type { ModelConfig } from '../repository/model-config.js';
import type {
  AutoCompleteRequest,
  GpuFallback,
  ModelVersion,
  RepositoryBackend,
  RepositoryBackends,
} from '../repository/types.js';
import { checkBackend, type BackendSupport } from './support.js';
import type { RuntimeModelInstance } from './types.js';

/** Options for `createInstances`, also handed to every backend's {@link Backend.createInstance}. */
export interface CreateInstancesOptions {
  /** See {@link GpuFallback}. Default `'error'`. */
  readonly gpuFallback?: GpuFallback;
  /** The backends to create instances with. Default: the built-in registry (`builtinBackends`). */
  readonly backends?: BackendRegistry;
  /** The server hosting the instance, for backends that call other models (Python BLS). */
  readonly inferenceHost?: InferenceHost;
}

/**
 * Which of Triton's batching features that change a batch's layout a backend's instances read:
 * `all` (ragged inputs, batch inputs, batch outputs: onnxruntime), `ragged` (ragged inputs only:
 * requests whose ragged inputs differ in shape may share a batch, which the instances answer
 * request by request: identity), `none` (the default).
 */
export type BatchInputSupport = 'all' | 'ragged' | 'none';

/** What a backend factory gets for one instance. */
export interface BackendInstanceSpec {
  /** `<group name>_<index>`. */
  readonly name: string;
  /** The kind the instance runs as (`KIND_CPU` or `KIND_MODEL`; `KIND_GPU` groups arrive as `KIND_CPU`). */
  readonly kind: string;
  /** The instance group's name. */
  readonly groupName: string;
  /** Index of the instance within its group. */
  readonly index: number;
  /** The model version. */
  readonly version: number;
  /** The model's (normalized) config. */
  readonly config: ModelConfig;
  /** The version's directory and model file. */
  readonly modelVersion: ModelVersion;
}

/** Creates one model instance; throws `BackendError` when it cannot. */
export type BackendFactory = (
  spec: BackendInstanceSpec,
  options: CreateInstancesOptions,
) => Promise<RuntimeModelInstance>;

/** A backend: its instance factory and what the repository, scheduler and core may ask of it. */
export interface Backend extends RepositoryBackend {
  /** The name configs give (`backend: "onnxruntime"`), or a platform name for configs without one. */
  readonly name: string;
  /** Creates one model instance. */
  readonly createInstance: BackendFactory;
  /** See {@link BatchInputSupport}. Default `none`. */
  readonly batchInputs?: BatchInputSupport;
}

/** What {@link BackendRegistry.register} takes: a bare factory, or a backend without its name. */
export type BackendDescription = BackendFactory | Omit<Backend, 'name'>;

export type { AutoCompleteRequest };

/** The name a config is looked up by: its `backend`, or its `platform` when `backend` is empty. */
export function backendKey(config: { readonly backend: string; readonly platform: string }): string {
  return config.backend !== '' ? config.backend : config.platform;
}

/** Backend name → backend. Implements the repository's {@link RepositoryBackends}. */
export class BackendRegistry implements RepositoryBackends {
  readonly #backends = new Map<string, Backend>();

  /**
   * Registers a backend under `name` (a backend name such as `onnxruntime`, or a platform name for
   * configs without a backend): a bare instance factory, or a {@link Backend} description.
   * @throws Error when `name` is empty or already registered.
   */
  register(name: string, backend: BackendDescription): this {
    if (name === '') throw new Error('a backend needs a name');
    if (this.#backends.has(name)) throw new Error(`backend '${name}' is already registered`);
    this.#backends.set(
      name,
      typeof backend === 'function' ? { name, createInstance: backend } : { ...backend, name },
    );
    return this;
  }

  /** The instance factory registered under `name`, if any. */
  get(name: string): BackendFactory | undefined {
    return this.#backends.get(name)?.createInstance;
  }

  /** The backend a config runs on (by {@link backendKey}), if it is registered. */
  find(config: { readonly backend: string; readonly platform: string }): Backend | undefined {
    return this.#backends.get(backendKey(config));
  }

  /** Whether a config's backend is registered here; when not, the user-facing reason. */
  support(config: { readonly backend: string; readonly platform: string }): BackendSupport {
    return checkBackend(config, this.names());
  }

  /** Which batch-input features the instances of a config's backend read. */
  batchInputs(config: { readonly backend: string; readonly platform: string }): BatchInputSupport {
    return this.find(config)?.batchInputs ?? 'none';
  }

  /** Registered names, in registration order. */
  names(): string[] {
    return [...this.#backends.keys()];
  }
}
