/**
 * Which backends tritonserver-ts can run (no heavy imports: the repository layer uses this to mark
 * models UNAVAILABLE early).
 * @packageDocumentation
 */

/**
 * Backends this server implements: the names registered in the runtime's built-in backend registry
 * (`builtin-backends.ts`), listed here without loading any backend code. Add a new backend's name
 * here too (see `registry.ts`).
 */
export const SUPPORTED_BACKENDS = ['onnxruntime', 'identity', 'python'] as const;

/** A supported backend name. */
export type SupportedBackend = (typeof SUPPORTED_BACKENDS)[number];

/** Whether a config's backend can run here; when not, a user-facing reason. */
export type BackendSupport =
  | { readonly supported: true; readonly backend: SupportedBackend }
  | { readonly supported: false; readonly backend: string; readonly reason: string };

/**
 * Tells whether a (normalized) config's backend can run in tritonserver-ts, e.g.
 * `backend 'tensorflow' is not supported by tritonserver-ts (supported: onnxruntime, identity, python)`.
 */
export function checkBackend(config: {
  readonly backend: string;
  readonly platform: string;
}): BackendSupport {
  const backend = config.backend;
  // The registry's key: the backend, or the platform for configs without one (ensembles never get
  // here: they have no backend, ADR 0011).
  const key = backend !== '' ? backend : config.platform;
  if ((SUPPORTED_BACKENDS as readonly string[]).includes(key)) {
    return { supported: true, backend: key as SupportedBackend };
  }
  const what =
    backend === ''
      ? `platform '${config.platform}' is not supported by tritonserver-ts`
      : `backend '${backend}' is not supported by tritonserver-ts`;
  return { supported: false, backend, reason: `${what} (supported: ${SUPPORTED_BACKENDS.join(', ')})` };
}
