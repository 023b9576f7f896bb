/**
 * Triton's model `platform` names and the backend each one stands for: the one platform → backend
 * map, shared by the embedded server (config auto-complete and validation) and by clients that
 * read a model config from any Triton (the web gateway shows which backend serves its model).
 * @packageDocumentation
 */

/**
 * Known platform → backend pairs (Triton's `platform` values). Platforms without a backend of
 * their own (`ensemble`) are not listed. A prototype-free object: a platform named like an
 * `Object.prototype` member (`constructor`, `toString`) is unknown, not a function.
 */
export const PLATFORM_BACKENDS: Readonly<Record<string, string>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, string>, {
    onnxruntime_onnx: 'onnxruntime',
    tensorrt_plan: 'tensorrt',
    tensorflow_graphdef: 'tensorflow',
    tensorflow_savedmodel: 'tensorflow',
    pytorch_libtorch: 'pytorch',
    torch_aoti: 'pytorch',
  }),
);

/** The backend `platform` stands for (`onnxruntime_onnx` → `onnxruntime`), `undefined` when unknown. */
export function backendOfPlatform(platform: string): string | undefined {
  return PLATFORM_BACKENDS[platform];
}

/**
 * The backend a model config names: its `backend` when set, else the backend of its `platform`
 * ({@link PLATFORM_BACKENDS}); `undefined` when neither tells (no backend, an unknown platform or
 * `ensemble`).
 */
export function modelBackend(config: {
  readonly backend?: string;
  readonly platform?: string;
}): string | undefined {
  if (config.backend) return config.backend;
  return config.platform ? backendOfPlatform(config.platform) : undefined;
}
