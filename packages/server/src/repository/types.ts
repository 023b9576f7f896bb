/**
 * What the repository layer hands to the core and the runtime (a resolved model definition), and
 * what it asks of the backends ({@link RepositoryBackends}: the runtime's backend registry, handed
 * in by the caller, so that the repository imports no backend).
 * @packageDocumentation
 */
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
  /**
   * The backends the models run on (the runtime's `BackendRegistry`): the repository asks them to
   * auto-complete a config, whether they need the model file, and whether they run here at all.
   */
  readonly backends: RepositoryBackends;
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

/** What a backend's auto-complete gets besides the config. */
export interface AutoCompleteRequest {
  /** The model file of the latest selected version (it may not exist). */
  readonly modelPath: string;
  /** How messages name {@link AutoCompleteRequest.modelPath} (never an absolute host path). */
  readonly displayPath: string;
  /** `--backend-config=…,default-max-batch-size=<n>`; 4 unless set. */
  readonly defaultMaxBatchSize: number;
}

/** What the repository asks of one backend (the runtime's `Backend` implements it). */
export interface RepositoryBackend {
  /**
   * Triton's backend auto-complete, run while the model is resolved when auto-complete is on:
   * resolves with the completed config (`config` itself, changed in place, or a replacement whose
   * fields are adopted), or `undefined` when the backend left the config as it was. Rejects with a
   * repository error (`ModelConfigError`, `ModelRepositoryError`) whose message names the model.
   */
  autoCompleteConfig?(config: ModelConfig, request: AutoCompleteRequest): Promise<ModelConfig | undefined>;
  /** The backend cannot load a version without its model file (`unable to find '…'`). Default false. */
  readonly requiresModelFile?: boolean;
}

/** The backends as the repository sees them. */
export interface RepositoryBackends {
  /** The backend a config runs on (its `backend`, or its `platform` when empty), if registered. */
  find(config: { readonly backend: string; readonly platform: string }): RepositoryBackend | undefined;
  /** Whether a config's backend runs here; when not, the user-facing reason. */
  support(config: {
    readonly backend: string;
    readonly platform: string;
  }): { readonly supported: true } | { readonly supported: false; readonly reason: string };
}
