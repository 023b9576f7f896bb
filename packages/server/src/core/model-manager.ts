/**
 * Model lifecycle, as Triton's model repository manager does it: the model control modes (`none`,
 * `explicit`, `poll`), the startup load, load with a config override and `file:` contents, unload,
 * and the lookups front ends need. Explicit loads of different models run at the same time, as in
 * Triton (its model load thread pool): loads that overlap form one operation, loads of one model
 * follow each other; the startup load, polls, unloads and the shutdown run alone. The state lives
 * in the {@link ModelRegistry}, loading in the {@link ModelLoader}, poll mode in the
 * {@link RepositoryWatcher}.
 * @packageDocumentation
 */
import type { RepositoryEntry, ResolveModelOptions } from '../repository/types.js';
import { invalidModelNameMessage, isValidModelName } from '../repository/model-name.js';
import type { CreateInstancesOptions } from '../runtime/backends.js';
import type { StatisticsRegistry } from '../statistics/registry.js';
import { echo } from '../common/echo.js';
import { invalidArg, unavailable } from '../common/errors.js';
import type { InferenceHost } from '../common/inference-host.js';
import type { Logger } from './logging.js';
import { composingModels } from './ensemble-graph.js';
import {
  ModelLoader,
  type EnsembleLoadContext,
  type LoadOverride,
  type ModelServices,
} from './model-loader.js';
import { ModelRegistry, groupEntries, type ModelRecord, type ServingVersion } from './model-registry.js';
import { RepositoryWatcher, pollRepository, treeSignature } from './repository-watcher.js';
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
  readonly resolveOptions: ResolveModelOptions;
  readonly instanceOptions?: CreateInstancesOptions;
  readonly services: ModelServices;
  readonly logger: Logger;
  /** Whether `--rate-limit=execution_count` is on (else `rate_limiter` sections get a warning). */
  readonly rateLimiting?: boolean;
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

/** Loads that overlap (see {@link ModelManager}): they share one operation's bookkeeping. */
interface LoadGroup {
  /** Loads in the group not finished yet. */
  members: number;
  /** Settles when the operation before the group is done. */
  readonly started: Promise<void>;
  /** Settles when the group's last load is done. */
  readonly done: Promise<void>;
  finish(): void;
}

/** Owns every model of the server (see the module documentation for what runs at the same time). */
export class ModelManager {
  readonly #opts: ModelManagerOptions;
  readonly #registry = new ModelRegistry();
  readonly #loader: ModelLoader;
  readonly #watcher: RepositoryWatcher | undefined;
  #chain: Promise<unknown> = Promise.resolve();
  /** The group explicit loads join while nothing exclusive is queued after it. */
  #openGroup: LoadGroup | undefined;
  /** The last load of each model in the open group (loads of one model follow each other). */
  #modelLocks = new Map<string, Promise<void>>();
  // Per operation (operations run one at a time): the loads started (each model once), which
  // ensemble awaits which composing models (to find cycles), the cycles found, and the listing.
  #loads = new Map<string, Promise<void>>();
  #waits = new Map<string, Set<string>>();
  #circular = new Map<string, string>();
  #listing: Map<string, RepositoryEntry[]> | undefined;
  #added = new Set<string>();
  readonly #ensembleContext: EnsembleLoadContext = {
    loadDependencies: (ensemble, names) => this.#loadDependencies(ensemble, names),
    inRepository: (name) => this.#listing?.has(name) === true,
    circular: (name) => this.#circular.get(name),
  };

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

  /** Runs `task` alone, after everything queued before it. */
  #serialize<T>(task: () => Promise<T>): Promise<T> {
    this.#openGroup = undefined;
    const run = this.#chain.then(task, task);
    this.#chain = run.catch(() => undefined);
    return run;
  }

  /**
   * Runs an explicit load of `name`: with the loads already queued or running that nothing
   * exclusive follows (one group, one operation's bookkeeping), after the previous load of `name`.
   */
  #loadInGroup<T>(name: string, task: () => Promise<T>): Promise<T> {
    let group = this.#openGroup;
    if (group === undefined) {
      let finish!: () => void;
      const done = new Promise<void>((resolve) => (finish = resolve));
      const started = this.#chain.then(() => this.#beginOperation(undefined));
      group = { members: 0, started, done, finish };
      this.#openGroup = group;
      this.#chain = done;
    }
    const joined = group;
    joined.members += 1;
    const previous = this.#modelLocks.get(name) ?? joined.started;
    const run = previous.then(task, task);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.#modelLocks.set(name, settled);
    void settled.then(() => {
      joined.members -= 1;
      if (joined.members > 0) return;
      if (this.#openGroup === joined) this.#openGroup = undefined;
      this.#modelLocks.clear();
      joined.finish();
    });
    return run;
  }

  /** Loads the startup models (every model, or the `--load-model` ones in explicit mode) and starts polling. */
  start(): Promise<StartupResult> {
    return this.#serialize(async () => {
      const entries = await this.#opts.services.listModels(this.#opts.repositories);
      const byName = groupEntries(entries);
      this.#beginOperation(byName);
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
            await this.#loadModel(name, byName.get(name), {}, true);
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
    return this.#serialize(async () => {
      this.#beginOperation(undefined);
      await pollRepository({
        listModels: async () => {
          const entries = await this.#opts.services.listModels(this.#opts.repositories);
          this.#listing = groupEntries(entries);
          return entries;
        },
        registry: this.#registry,
        load: (name, group) => this.#loadModel(name, group, {}, true),
        unload: (name) => this.#unloadModel(name, false),
        logger: this.#opts.logger,
      });
      await this.#reloadWaiting();
    });
  }

  /** `POST v2/repository/models/{m}/load`. */
  load(name: string, options: LoadOverride = {}): Promise<void> {
    this.#assertControl();
    // Triton's checks, before anything touches the disk: names become directory names. The name is
    // used exactly as sent (`simple ` is not `simple`); only a blank one is refused as empty.
    if (name.trim() === '') {
      return Promise.reject(invalidArg('Model name cannot be empty. Please enter a valid name to deploy.'));
    }
    if (!isValidModelName(name)) return Promise.reject(invalidArg(invalidModelNameMessage(name)));
    if (options.files !== undefined && options.files.size > 0 && options.config === undefined) {
      return Promise.reject(
        invalidArg(
          `failed to load '${echo(name)}', failed to poll from model repository: 'file:' parameters require a 'config' override`,
        ),
      );
    }
    return this.#loadInGroup(name, async () => {
      const entries = await this.#opts.services.listModels(this.#opts.repositories);
      const byName = groupEntries(entries);
      this.#listing = byName;
      // An explicit load always (re)loads, also a model this operation loaded already.
      this.#loads.delete(name);
      try {
        await this.#loadModel(name, byName.get(name), options, true);
      } finally {
        await this.#reloadWaiting();
      }
    });
  }

  /**
   * `POST v2/repository/models/{m}/unload`. Ensembles using the model are unloaded too; with
   * `unloadDependents`, so are the composing models of an unloaded ensemble that were loaded only
   * for it and that no other serving ensemble uses (Triton's `unload_dependents`).
   */
  unload(name: string, options: { unloadDependents?: boolean } = {}): Promise<void> {
    this.#assertControl();
    return this.#serialize(async () => {
      this.#beginOperation(undefined);
      await this.#unloadModel(name, options.unloadDependents === true);
      await this.#reloadWaiting();
    });
  }

  #beginOperation(listing: Map<string, RepositoryEntry[]> | undefined): void {
    this.#loads.clear();
    this.#waits.clear();
    this.#circular.clear();
    this.#added.clear();
    this.#listing = listing;
  }

  /** Loads `name` once per operation; `explicit` = by name, not only as a composing model. */
  #loadModel(
    name: string,
    group: readonly RepositoryEntry[] | undefined,
    override: LoadOverride,
    explicit: boolean,
  ): Promise<void> {
    const started = this.#loads.get(name);
    if (started !== undefined) {
      // Loaded first as a composing model, then named in the same operation (poll, startup).
      if (explicit) this.#registry.getOrCreate(name).explicit = true;
      return started;
    }
    const run = (async () => {
      const record = this.#registry.getOrCreate(name);
      record.explicit = explicit || record.explicit === true;
      try {
        await this.#loader.load(name, group, override, this.#ensembleContext);
      } finally {
        await this.#recheckDependents(name);
      }
    })();
    this.#loads.set(name, run);
    return run;
  }

  /**
   * Loads an ensemble's composing models first (Triton loads by dependency): a model already
   * serving from unchanged files is kept; a model this operation already loads is awaited; a
   * composing model that (transitively) waits on the ensemble closes a cycle, whose members all get
   * Triton's circular-dependency message.
   */
  async #loadDependencies(ensemble: string, names: readonly string[]): Promise<void> {
    if (this.#listing === undefined) {
      this.#listing = groupEntries(
        await this.#opts.services.listModels(this.#opts.repositories).catch(() => []),
      );
    }
    const listing = this.#listing;
    await Promise.all(
      names.map(async (dep) => {
        const cycle = dep === ensemble ? [ensemble] : this.#waitPath(dep, ensemble);
        if (cycle !== undefined) {
          cycle.forEach((member, i) => {
            const dependent = cycle[(i - 1 + cycle.length) % cycle.length] as string;
            this.#circular.set(
              member,
              `circular dependency between ensembles: ${member} -> ... -> ${dependent} -> ${member}`,
            );
          });
          return;
        }
        const group = listing.get(dep);
        if (!this.#loads.has(dep) && group === undefined) return; // missing: the check says so
        // The wait is recorded at once (before any await), so a cycle is seen from either side.
        let waits = this.#waits.get(ensemble);
        if (waits === undefined) this.#waits.set(ensemble, (waits = new Set()));
        waits.add(dep);
        try {
          let pending = this.#loads.get(dep);
          if (pending === undefined && group !== undefined) {
            if (await this.#servingUnchanged(dep, group)) return;
            pending = this.#loads.get(dep) ?? this.#loadModel(dep, group, {}, false);
          }
          await pending?.catch(() => undefined);
        } finally {
          waits.delete(dep);
        }
      }),
    );
  }

  /** The chain of waits from `from` to `to` (`[from, …, to]`), if `from` already waits on `to`. */
  #waitPath(from: string, to: string): string[] | undefined {
    const seen = new Set<string>();
    const walk = (node: string): string[] | undefined => {
      if (node === to) return [node];
      if (seen.has(node)) return undefined;
      seen.add(node);
      for (const next of this.#waits.get(node) ?? []) {
        const rest = walk(next);
        if (rest !== undefined) return [node, ...rest];
      }
      return undefined;
    };
    return walk(from);
  }

  /** Whether `name` serves a READY version loaded from files that have not changed since. */
  async #servingUnchanged(name: string, group: readonly RepositoryEntry[]): Promise<boolean> {
    const record = this.#registry.get(name);
    if (record === undefined || record.signature === undefined || group.length !== 1) return false;
    if (![...record.versions.values()].some((v) => v.state === 'READY')) return false;
    return (await treeSignature((group[0] as RepositoryEntry).directory)) === record.signature;
  }

  /** Unloads `name` and the ensembles using it; with `dependents`, an ensemble's own composing models. */
  async #unloadModel(name: string, dependents: boolean): Promise<void> {
    const record = this.#registry.get(name);
    const steps = record?.definition !== undefined ? composingModels(record.definition.config) : [];
    await this.#loader.unload(name);
    if (record !== undefined) record.explicit = false;
    await this.#recheckDependents(name);
    if (!dependents) return;
    for (const step of steps) {
      const composing = this.#registry.get(step);
      if (composing === undefined || composing.explicit === true || !serving(composing)) continue;
      if (this.#servingEnsemblesUsing(step).length > 0) continue;
      await this.#unloadModel(step, true);
    }
  }

  /** Serving ensembles with `name` among their composing models. */
  #servingEnsemblesUsing(name: string): ModelRecord[] {
    return [...this.#registry.records()].filter(
      (r) =>
        r.definition?.config.ensemble_scheduling !== undefined &&
        serving(r) &&
        composingModels(r.definition.config).includes(name),
    );
  }

  /**
   * After `name` was loaded, reloaded or unloaded: every serving ensemble using it is checked again
   * against the composing models as they serve now, and unloaded when it no longer passes (as
   * Triton unloads an ensemble whose dependency graph became invalid).
   */
  async #recheckDependents(name: string): Promise<void> {
    for (const record of this.#servingEnsemblesUsing(name)) {
      if (record.name === name || record.definition === undefined) continue;
      const problem = this.#loader.ensembleProblem(record.name, record.definition);
      if (problem === undefined) continue;
      this.#opts.logger.warn(`unloading ensemble '${record.name}': ${problem.message}`);
      await this.#loader.retireAll(record, 'unloaded');
      await this.#recheckDependents(record.name);
    }
    // As Triton re-checks an ensemble when a model it uses is added: an ensemble that should be
    // loaded but is down (taken down with a composing model, or failed on one) loads again, once
    // the operation's own loads are done (see #reloadWaiting).
    const model = this.#registry.get(name);
    if (model !== undefined && serving(model)) this.#added.add(name);
  }

  /** Loads the ensembles that were waiting for a model this operation loaded (until none is left). */
  async #reloadWaiting(): Promise<void> {
    while (this.#added.size > 0) {
      const added = [...this.#added];
      this.#added.clear();
      const waiting = [...this.#registry.records()].filter(
        (r) =>
          r.wanted &&
          r.unsupported !== true &&
          !serving(r) &&
          !this.#loads.has(r.name) &&
          added.some((a) => a !== r.name && r.composing?.includes(a) === true),
      );
      for (const record of waiting) {
        this.#listing ??= groupEntries(
          await this.#opts.services.listModels(this.#opts.repositories).catch(() => []),
        );
        await this.#loadModel(record.name, this.#listing.get(record.name), {}, record.explicit === true).then(
          () => this.#opts.logger.info(`successfully loaded '${record.name}'`),
          (error: unknown) =>
            this.#opts.logger.warn(error instanceof Error ? error.message.trimEnd() : String(error)),
        );
      }
    }
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

/** Whether a model has a READY version. */
function serving(record: ModelRecord): boolean {
  return [...record.versions.values()].some((v) => v.state === 'READY');
}
