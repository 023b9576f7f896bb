/**
 * Platform ↔ backend normalization and default model filenames, as Triton's server-side
 * auto-complete does it before any backend sees the model. The platform → backend map itself is
 * the protocol package's ({@link PLATFORM_BACKENDS}), shared with clients that read model configs.
 * @packageDocumentation
 */
import { PLATFORM_BACKENDS } from '@tritonserver-ts/protocol';
import type { ModelConfig } from './model-config.js';

export { PLATFORM_BACKENDS };

/** Default model file (or directory) name per backend. */
export const DEFAULT_MODEL_FILENAMES: Readonly<Record<string, string>> = {
  onnxruntime: 'model.onnx',
  tensorrt: 'model.plan',
  pytorch: 'model.pt',
  python: 'model.py',
  openvino: 'model.xml',
};

/**
 * Fills `platform`, `backend` and `default_model_filename` like Triton (in place), looking at the
 * config and at the file names in the first version directory (`versionFiles`, lexicographic
 * first version as Triton does). Unknown backends are left as given.
 */
export function completeBackendFields(config: ModelConfig, versionFiles: ReadonlySet<string>): void {
  const hasFile = (name: string): boolean => versionFiles.has(name);

  // TensorFlow: the platform decides.
  if (config.platform === '' && (config.backend === '' || config.backend === 'tensorflow')) {
    if (config.default_model_filename === 'model.savedmodel') config.platform = 'tensorflow_savedmodel';
    else if (config.default_model_filename === 'model.graphdef') config.platform = 'tensorflow_graphdef';
    else if (config.default_model_filename === '') {
      if (hasFile('model.savedmodel')) config.platform = 'tensorflow_savedmodel';
      if (hasFile('model.graphdef')) config.platform = 'tensorflow_graphdef';
    }
  }
  if (config.platform === 'tensorflow_savedmodel' || config.platform === 'tensorflow_graphdef') {
    if (config.backend === '') config.backend = 'tensorflow';
    if (config.default_model_filename === '') {
      config.default_model_filename =
        config.platform === 'tensorflow_savedmodel' ? 'model.savedmodel' : 'model.graphdef';
    }
    return;
  }

  const byFile = config.platform === '' && config.default_model_filename === '';
  const claim = (backend: string, platform: string, filename: string): boolean => {
    if (config.backend === '') {
      if (
        (platform !== '' && config.platform === platform) ||
        config.default_model_filename === filename ||
        (byFile && hasFile(filename))
      ) {
        config.backend = backend;
      }
    }
    if (config.backend !== backend) return false;
    if (config.platform === '' && platform !== '') config.platform = platform;
    if (config.default_model_filename === '') config.default_model_filename = filename;
    return true;
  };

  if (claim('tensorrt', 'tensorrt_plan', 'model.plan')) return;
  if (claim('onnxruntime', 'onnxruntime_onnx', 'model.onnx')) return;
  if (claim('openvino', '', 'model.xml')) return;
  if (config.backend === '' && PLATFORM_BACKENDS[config.platform] === 'pytorch') config.backend = 'pytorch';
  if (claim('pytorch', 'pytorch_libtorch', 'model.pt')) return;
  if (claim('python', '', 'model.py')) return;
}
