/**
 * The Python backend behind the runtime's `Backend` interface: one stub process per instance
 * (`python-backend.ts`, `stub-process.ts`), `auto_complete_config` (`auto-complete.ts`) and its
 * settings (`settings.ts`, `--backend-config=python,…`).
 * @packageDocumentation
 */
import type { Backend } from '../registry.js';
import { autoCompletePythonConfig } from './auto-complete.js';
import { createPythonInstance } from './python-backend.js';
import type { PythonBackendSettings } from './settings.js';

export {
  PythonBackendConfigError,
  applyPythonBackendConfig,
  type PythonBackendSettings,
  type PythonLogSink,
} from './settings.js';

/** The Python backend with `settings` bound (the interpreter, timeouts, the server log). */
export function pythonBackend(settings: PythonBackendSettings = {}): Omit<Backend, 'name'> {
  return {
    createInstance: (spec, options) =>
      createPythonInstance(spec, {
        settings,
        ...(options.inferenceHost !== undefined ? { inferenceHost: options.inferenceHost } : {}),
      }),
    autoCompleteConfig: (config, request) => autoCompletePythonConfig(config, request, settings),
  };
}
