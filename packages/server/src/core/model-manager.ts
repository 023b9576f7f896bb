/**
 * Model lifecycle, as Triton's model repository manager does it: the model control modes (`none`,
 * `explicit`, `poll`), the startup load, load with a config override and `file:` contents, unload,
 * and the lookups front ends need. Operations run one at a time; the state lives in the
 * {@link ModelRegistry}, loading in the {@link ModelLoader}, poll mode in the {@link RepositoryWatcher}.
 * @packageDocumentation
 */
import type { ResolveModelOptions } from '../repository/types.js';
import { invalidModelNameMessage, isValidModelName } from '../repository/model-name.js';
import type { CreateInstancesOptions } from '../runtime/backends.js';
import type { StatisticsRegistry } from '../statistics/registry.js';
import { invalidArg, unavailable } from './errors.js';
import type { InferenceHost } from './inference-host.js';
import type { Logger } from './logging.js';
import { ModelLoader, type LoadOverride, type ModelServices } from './model-loader.js';
import { ModelRegistry, groupEntries, type ServingVersion } from './model-registry.js';
import { RepositoryWatcher, pollRepository } from './repository-watcher.js';
import type { ModelControlMode, RepositoryIndexEntry } from './types.js';

export { isUnsupportedBackend, type ModelServices } from './model-loader.js';
export { parseVersion, type ServingVersion } from './model-registry.js';

/** Options of {@link ModelManager}. */
export interface ModelManagerOptions {
  readonly repositories: readonly string[];
  readonly controlMode: ModelControlMode;
  /** `--load-model` names for explicit mode (`*` = every model). */
  readonly startupModels?: readonly string[];
  /** Poll interval in ms (poll mode). */
  readonly pollIntervalMs?: number;
  /** Options passed to every resolve (model config name, GPU fallback, auto-complete, …). */
  readonly resolveOptions?: ResolveModelOptions;
  readonly instanceOptions?: CreateInstancesOptions;
  readonly services: ModelServices;
  readonly logger: Logger;
  /** Where schedulers record each version's statistics. */
  readonly statistics?: StatisticsRegistry;
  /** The server the models run in (see `inference-host.ts`). */
  readonly inferenceHost?: InferenceHost;
}

/** Result of the startup load. */
export interface StartupResult {
  /** Models that failed to load, with the reason. */
  readonly failures: readonly { readonly name: string; readonly reason: string }[];
  /** Models listed UNAVAILABLE because their backend cannot run here (python, tensorrt, …). */
  readonly unsupported: readonly { readonly name: string; readonly reason: string }[];
}

/** Owns every model of the server. Load / unload / poll operations run one at a time. */
export class ModelManager {
  readonly #opts: ModelManagerOptions;
  readonly #registry = new ModelRegistry();
  readonly #loader: ModelLoader;
  readonly #watcher: RepositoryWatcher | undefined;
  #chain: Promise<unknown> = Promise.resolve();

  constructor(options: ModelManagerOptions) {
    this.#opts = options;
    this.#loader = new ModelLoader(options, this.#registry);
    this.#watcher =
      options.controlMode === 'poll' && (options.pollIntervalMs ?? 0) > 0
        ? new RepositoryWatcher(options.pollIntervalMs ?? 0, () => this.poll(), options.logger)
        : undefined;
  }

  /** The model control mode. */
  get controlMode(): ModelControlMode {
    return this.#opts.controlMode;
  }

  #serialize<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(task, task);
    this.#chain = run.catch(() => undefined);
    return run;
  }

  /** Loads the startup models (every model, or the `--load-model` ones in explicit mode) and starts polling. */
  start(): Promise<StartupResult> {
    return this.#serialize(async () => {
      const entries = await this.#opts.services.listModels(this.#opts.repositories);
      const byName = groupEntries(entries);
      let names: string[];
      if (this.#opts.controlMode === 'explicit') {
        const wanted = this.#opts.startupModels ?? [];
        names = wanted.includes('*') ? [...byName.keys()] : [...new Set(wanted)];
      } else {
        names = [...byName.keys()];
      }
      const failures: { name: string; reason: string }[] = [];
      const unsupported: { name: string; reason: string }[] = [];
      await Promise.all(
        names.map(async (name) => {
          try {
            await this.#loader.load(name, byName.get(name), {});
          } catch (error) {
            const reason = error instanceof Error ? error.message : String(error);
            (this.#registry.get(name)?.unsupported === true ? unsupported : failures).push({ name, reason });
          }
        }),
      );
      this.#watcher?.start();
      const byNameOrder = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : 1);
      return { failures: failures.sort(byNameOrder), unsupported: unsupported.sort(byNameOrder) };
    });
  }

  /** One poll pass (poll mode): loads new models, reloads changed ones, unloads removed ones. */
  poll(): Promise<void> {
    return this.#serialize(() =>
      pollRepository({
        listModels: () => this.#opts.services.listModels(this.#opts.repositories),
        registry: this.#registry,
        load: (name, group) => this.#loader.load(name, group, {}),
        unload: (name) => this.#loader.unload(name),
        logger: this.#opts.logger,
      }),
    );
  }

  /** `POST v2/repository/models/{m}/load`. */
  load(name: string, options: LoadOverride = {}): Promise<void> {
    this.#assertControl();
    // Triton's checks, before anything touches the disk: names become directory names.
    name = name.trim();
    if (name === '') {
      return Promise.reject(invalidArg('Model name cannot be empty. Please enter a valid name to deploy.'));
    }
    if (!isValidModelName(name)) return Promise.reject(invalidArg(invalidModelNameMessage(name)));
    if (options.files !== undefined && options.files.size > 0 && options.config === undefined) {
      return Promise.reject(
        invalidArg(
          `failed to load '${name}', failed to poll from model repository: 'file:' parameters require a 'config' override`,
        ),
      );
    }
    return this.#serialize(async () => {
      const entries = await this.#opts.services.listModels(this.#opts.repositories);
      await this.#loader.load(name, groupEntries(entries).get(name), options);
    });
  }

  /** `POST v2/repository/models/{m}/unload` (`unload_dependents` is accepted; models here have no dependents). */
  unload(name: string): Promise<void> {
    this.#assertControl();
    return this.#serialize(() => this.#loader.unload(name));
  }

  #assertControl(): void {
    if (this.#opts.controlMode !== 'explicit') {
      throw unavailable('explicit model load / unload is not allowed if polling is enabled');
    }
  }

  /**
   * The version that serves a request, or Triton's error: unknown model (INVALID_ARG), no available
   * versions / unknown version (NOT_FOUND), version not ready (UNAVAILABLE).
   */
  resolve(name: string, version?: string): ServingVersion {
    return this.#registry.resolve(name, version);
  }

  /** Ready versions of a model, ascending (for metadata). */
  readyVersions(name: string): number[] {
    return this.#registry.readyVersions(name);
  }

  /** Every serving version of every model (statistics). */
  servingVersions(): ServingVersion[] {
    return this.#registry.servingVersions();
  }

  /** Whether the manager has ever seen `name` (loaded, failed or unloaded). */
  has(name: string): boolean {
    return this.#registry.has(name);
  }

  /** True when `name` (and `version`, if given) is READY. Never throws. */
  isReady(name: string, version?: string): boolean {
    try {
      this.resolve(name, version);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Triton's strict readiness: every model that should be loaded has all its versions READY
   * (versions UNAVAILABLE because they were unloaded do not count, nor do models whose backend this
   * server cannot run).
   */
  allModelsReady(): boolean {
    return this.#registry.allModelsReady();
  }

  /** `POST v2/repository/index`: every model directory of the repositories, plus known models. */
  async index(readyOnly = false): Promise<RepositoryIndexEntry[]> {
    const entries = await this.#opts.services.listModels(this.#opts.repositories).catch(() => []);
    return this.#registry.index(groupEntries(entries), readyOnly);
  }

  /** Stops polling, drains every scheduler and disposes every instance. */
  stop(): Promise<void> {
    this.#watcher?.stop();
    return this.#serialize(async () => {
      await Promise.all([...this.#registry.records()].map((r) => this.#loader.retireAll(r, 'unloaded')));
    });
  }
}
