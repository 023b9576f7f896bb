/**
 * The registration point: the one module of `src/` (with the runtime's entry `index.ts`) that names
 * the backends tritonserver-ts ships and imports their folders. Everything else reaches a backend
 * through the `Backend` interface of a registry built here (see `registry.ts` for how to add one).
 * @packageDocumentation
 */
import { identityBackend } from './identity/index.js';
import { onnxruntimeBackend, type OnnxruntimeSettings } from './onnxruntime/index.js';
import { pythonBackend, type PythonBackendSettings } from './python/index.js';
import { BackendRegistry } from './registry.js';

export type { OnnxruntimeSettings, WorkerInstanceOptions } from './onnxruntime/index.js';
export {
  PythonBackendConfigError,
  applyPythonBackendConfig,
  type PythonBackendSettings,
  type PythonLogSink,
} from './python/index.js';

/** Settings of the built-in backends, by backend name (each bound when it is registered). */
export interface BuiltinBackendSettings {
  readonly onnxruntime?: OnnxruntimeSettings;
  readonly python?: PythonBackendSettings;
}

/**
 * Registers onnxruntime, identity and python (in the order of `SUPPORTED_BACKENDS`) in `registry`,
 * with `settings`.
 */
export function registerBuiltinBackends(
  registry: BackendRegistry,
  settings: BuiltinBackendSettings = {},
): BackendRegistry {
  return registry
    .register('onnxruntime', onnxruntimeBackend(settings.onnxruntime))
    .register('identity', identityBackend())
    .register('python', pythonBackend(settings.python));
}

/** A registry of every built-in backend with `settings`. */
export function createBuiltinBackends(settings: BuiltinBackendSettings = {}): BackendRegistry {
  return registerBuiltinBackends(new BackendRegistry(), settings);
}

/**
 * The default registry: every built-in backend with default settings (onnxruntime sessions on the
 * calling thread).
 */
export const builtinBackends: BackendRegistry = createBuiltinBackends();
