/**
 * The runtime's backend registry: a map from a backend's name to the factory that creates one
 * model instance. Model loading (`createInstances` in `backends.ts`) looks a model's backend up
 * here; no backend module imports the registry or `backends.ts`, so the runtime has no import cycle.
 *
 * Adding a backend (onnxruntime, identity and python are added this way):
 * 1. Write `runtime/<name>-backend.ts` with a function that creates one instance and returns a
 *    {@link RuntimeModelInstance} (import that type from `./types.js`, never from `backends.ts`).
 *    Throw `BackendError('INSTANCE_CREATION_FAILED', …)` for a config the backend refuses.
 * 2. Register it in `builtin-backends.ts`: `registry.register('<name>', (spec, options) => …)`,
 *    where `spec` has the instance's name, kind, group, version, config and model files.
 * 3. Add the name to `SUPPORTED_BACKENDS` in `support.ts`: the repository checks that light list
 *    (no backend code loaded) to mark a model UNAVAILABLE early, and the unsupported-backend
 *    message lists it. A test keeps it equal to the built-in registry's names.
 *
 * The lookup key is the config's `backend`, or its `platform` when `backend` is empty (after
 * `repository/platform.ts` has mapped known platforms such as `onnxruntime_onnx` to their backend).
 * An ensemble (`platform: "ensemble"`, no backend) never enters the registry (ADR 0011): it has no
 * instances, and its scheduler runs each step as a core request on the composing models.
 * @packageDocumentation
 */
import type { InferenceHost } from '../common/inference-host.js';
import type { GpuFallback, ModelVersion } from '../repository/types.js';
import type { ModelConfig } from '../repository/model-config.js';
import type { OnnxInstanceSpec } from './onnxruntime-backend.js';
import type { PythonBackendSettings } from './python/settings.js';
import type { RuntimeModelInstance } from './types.js';

/** Options for `createInstances`, also handed to every backend factory. */
export interface CreateInstancesOptions {
  /** See {@link GpuFallback}. Default `'error'`. */
  readonly gpuFallback?: GpuFallback;
  /** ORT intra-op threads when the config has no `intra_op_thread_count` parameter. Default 1. */
  readonly defaultIntraOpThreads?: number;
  /** ORT inter-op threads when the config has no `inter_op_thread_count` parameter. Default 1. */
  readonly defaultInterOpThreads?: number;
  /**
   * Creates one onnxruntime instance from its spec. Default: `createOnnxInstance` (a session on
   * the calling thread). The scheduler's `createWorkerInstances` passes a factory that hosts the
   * session in a worker thread.
   */
  readonly createOnnxInstance?: (spec: OnnxInstanceSpec) => Promise<RuntimeModelInstance>;
  /** The backends to create instances with. Default: the built-in registry (`builtinBackends`). */
  readonly backends?: BackendRegistry;
  /** The server hosting the instance, for backends that call other models (Python BLS). */
  readonly inferenceHost?: InferenceHost;
  /** Python backend settings (`--backend-config=python,…`, the interpreter, the server log). */
  readonly python?: PythonBackendSettings;
}

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

/** The name a config is looked up by: its `backend`, or its `platform` when `backend` is empty. */
export function backendKey(config: { readonly backend: string; readonly platform: string }): string {
  return config.backend !== '' ? config.backend : config.platform;
}

/** Backend name → instance factory. */
export class BackendRegistry {
  readonly #factories = new Map<string, BackendFactory>();

  /**
   * Registers `factory` under `name` (a backend name such as `onnxruntime`, or a platform name for
   * configs without a backend, such as `ensemble`).
   * @throws Error when `name` is empty or already registered.
   */
  register(name: string, factory: BackendFactory): this {
    if (name === '') throw new Error('a backend needs a name');
    if (this.#factories.has(name)) throw new Error(`backend '${name}' is already registered`);
    this.#factories.set(name, factory);
    return this;
  }

  /** The factory registered under `name`, if any. */
  get(name: string): BackendFactory | undefined {
    return this.#factories.get(name);
  }

  /** Registered names, in registration order. */
  names(): string[] {
    return [...this.#factories.keys()];
  }
}
