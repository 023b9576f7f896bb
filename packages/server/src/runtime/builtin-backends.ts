/**
 * The backends tritonserver-ts ships, registered in the runtime's backend registry (see
 * `registry.ts` for how to add one).
 * @packageDocumentation
 */
import { createIdentityInstance } from './identity-backend.js';
import { createOnnxInstance } from './onnxruntime-backend.js';
import { createPythonInstance } from './python/python-backend.js';
import { BackendRegistry } from './registry.js';

/** Registers onnxruntime, identity and python (in the order of `SUPPORTED_BACKENDS`) in `registry`. */
export function registerBuiltinBackends(registry: BackendRegistry): BackendRegistry {
  return registry
    .register('onnxruntime', ({ modelVersion, ...base }, options) =>
      (options.createOnnxInstance ?? createOnnxInstance)({
        ...base,
        modelPath: modelVersion.modelPath,
        ...(modelVersion.displayPath === undefined ? {} : { displayPath: modelVersion.displayPath }),
        ...(options.defaultIntraOpThreads === undefined
          ? {}
          : { defaultIntraOpThreads: options.defaultIntraOpThreads }),
        ...(options.defaultInterOpThreads === undefined
          ? {}
          : { defaultInterOpThreads: options.defaultInterOpThreads }),
      }),
    )
    .register('identity', ({ modelVersion: _modelVersion, ...base }) => createIdentityInstance(base))
    .register('python', (spec, options) =>
      createPythonInstance(spec, {
        ...(options.python !== undefined ? { settings: options.python } : {}),
        ...(options.inferenceHost !== undefined ? { inferenceHost: options.inferenceHost } : {}),
      }),
    );
}

/** The default registry: every built-in backend. */
export const builtinBackends: BackendRegistry = registerBuiltinBackends(new BackendRegistry());
