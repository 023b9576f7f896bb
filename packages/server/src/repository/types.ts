/**
 * What the repository layer hands to the core and the runtime: a resolved model definition.
 * @packageDocumentation
 */
import type { PythonBackendSettings } from '../runtime/python/settings.js';
import type { ModelConfig } from './model-config.js';

/** A model directory found in a repository (before its config is read). */
export interface RepositoryEntry {
  /** Model name = directory name. */
  readonly name: string;
  /** Absolute path of `<repository>/<name>`. */
  readonly directory: string;
  /** The repository path it was found in. */
  readonly repository: string;
}

/** One version directory selected by the model's `version_policy`. */
export interface ModelVersion {
  /** The numeric version (directory name). */
  readonly version: number;
  /** Absolute path of `<model>/<version>`. */
  readonly directory: string;
  /**
   * Absolute path of the model file inside the version directory
   * (`default_model_filename`, e.g. `<model>/1/model.onnx`); it may not exist for backends that
   * need no file (identity).
   */
  readonly modelPath: string;
  /** The model file as messages name it: relative to the repository, never an absolute host path. */
  readonly displayPath?: string;
}

/** How instance groups of kind `KIND_GPU` are treated on a host without a GPU. */
export type GpuFallback =
  /** Like Triton: a `KIND_GPU` group makes the model fail to load (UNAVAILABLE with a reason). Default. */
  | 'error'
  /** Run `KIND_GPU` groups on the CPU (instances report `kind: 'KIND_CPU'`; the config is unchanged). */
  | 'cpu';

/** A model ready to be instantiated: complete config, selected versions, labels. */
export interface ModelDefinition {
  readonly name: string;
  /** The model directory (a temporary directory for loads with `file:` contents). */
  readonly directory: string;
  /**
   * The complete config as Triton would report it: parsed, auto-completed from the model file when
   * allowed, normalized (platform/backend, default filename, instance groups, defaults) and validated.
   */
  readonly config: ModelConfig;
  /** Normalized backend name (`onnxruntime`, `identity`, `python`, …). */
  readonly backend: string;
  /** Versions selected by `version_policy`, ascending. Never empty. */
  readonly versions: readonly ModelVersion[];
  /** Labels per output name (from `label_filename`; line N = class N). */
  readonly labels: ReadonlyMap<string, readonly string[]>;
  /** Which file the config came from (`config.pbtxt`, `configs/<n>.pbtxt`), or `undefined` (override / auto-complete only). */
  readonly configFile: string | undefined;
  /** Removes temporary files (loads with `file:` contents); a no-op otherwise. Call after unload. */
  cleanup(): Promise<void>;
}

/** The result of resolving one model: a definition, or the reason it is UNAVAILABLE. */
export type ModelResolution =
  | { readonly ok: true; readonly model: ModelDefinition }
  | {
      readonly ok: false;
      readonly name: string;
      /** Human-readable reason for the repository index (`reason`) and load errors. */
      readonly reason: string;
      /** The typed error behind the reason. */
      readonly error: Error;
    };

/** Options for resolving a model. */
export interface ResolveModelOptions {
  /** `--model-config-name`: use `<model>/configs/<name>.pbtxt` when it exists. */
  readonly modelConfigName?: string;
  /** Fill inputs/outputs/max_batch_size from the model file (Triton's auto-complete). Default true. */
  readonly autoCompleteConfig?: boolean;
  /** `--backend-config=onnxruntime,default-max-batch-size=<n>`; default 4. */
  readonly defaultMaxBatchSize?: number;
  /** See {@link GpuFallback}. Default `'error'`. */
  readonly gpuFallback?: GpuFallback;
  /** Python backend settings, for running a Python model's `auto_complete_config`. */
  readonly python?: PythonBackendSettings;
  /**
   * `POST load` parameter `config`: a JSON string (or an already parsed object) replacing
   * `config.pbtxt`.
   */
  readonly configOverride?: string | object;
  /**
   * `POST load` `file:<version>/<name>` contents (keys with or without the `file:` prefix). When
   * given, the model directory is replaced by a temporary directory holding only these files, as
   * Triton does; `configOverride` is then required.
   */
  readonly files?: ReadonlyMap<string, Uint8Array> | Readonly<Record<string, Uint8Array>>;
}
