/**
 * Which backends tritonserver-ts can run (no backend code imported), and the check that tells a
 * config whose backend is not registered, with the message the repository lists it UNAVAILABLE with.
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
  | { readonly supported: true; readonly backend: string }
  | { readonly supported: false; readonly backend: string; readonly reason: string };

/**
 * Tells whether a (normalized) config's backend can run in tritonserver-ts, e.g.
 * `backend 'tensorflow' is not supported by tritonserver-ts (supported: onnxruntime, identity, python)`.
 * @param supported - the registered names (a registry's `names()`); default {@link SUPPORTED_BACKENDS}.
 */
export function checkBackend(
  config: { readonly backend: string; readonly platform: string },
  supported: readonly string[] = SUPPORTED_BACKENDS,
): BackendSupport {
  const backend = config.backend;
  // The registry's key: the backend, or the platform for configs without one (ensembles never get
  // here: they have no backend, ADR 0011).
  const key = backend !== '' ? backend : config.platform;
  if (supported.includes(key)) {
    return { supported: true, backend: key };
  }
  const what =
    backend === ''
      ? `platform '${config.platform}' is not supported by tritonserver-ts`
      : `backend '${backend}' is not supported by tritonserver-ts`;
  return { supported: false, backend, reason: `${what} (supported: ${supported.join(', ')})` };
}
