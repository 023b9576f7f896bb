/**
 * Model lifecycle, as Triton's model repository manager does it: which models are loaded, each
 * version's state (READY / UNAVAILABLE / LOADING / UNLOADING) and reason, the model control modes
 * (`none`, `explicit`, `poll`), load with a config override and `file:` contents, unload, and
 * resolving a model + version for a request with Triton's error strings.
 * @packageDocumentation
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

import type {
  ModelDefinition,
  ModelResolution,
  RepositoryEntry,
  ResolveModelOptions,
} from '../repository/types.js';
import { ModelRepositoryError } from '../repository/errors.js';
import { ignoredFeatures } from '../repository/ignored-features.js';
import { invalidModelNameMessage, isValidModelName } from '../repository/model-name.js';
import type { CreateInstancesOptions } from '../runtime/backends.js';
import { BackendError } from '../runtime/errors.js';
import type { ModelInstance } from '../runtime/types.js';
import type { Scheduler, SchedulerFactory } from '../scheduler/types.js';
import type { StatisticsRegistry } from '../statistics/registry.js';
import { ServerError, internal, invalidArg, notFound, unavailable } from './errors.js';
import type { Logger } from './logging.js';
import type { ModelControlMode, ModelState, RepositoryIndexEntry } from './types.js';

/** The repository and runtime functions the manager drives (injectable for tests). */
export interface ModelServices {
  listModels(repositories: readonly string[]): Promise<RepositoryEntry[]>;
  resolve(entry: RepositoryEntry, options: ResolveModelOptions): Promise<ModelResolution>;
  createInstances(
    model: ModelDefinition,
    version: number,
    options: CreateInstancesOptions,
  ): Promise<ModelInstance[]>;
  createScheduler: SchedulerFactory;
  /** Runs `model_warmup` on new instances before the version is READY (optional). */
  warmup?: (model: ModelDefinition, instances: readonly ModelInstance[]) => Promise<unknown>;
}

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
}

/** A loaded model version that can serve requests. */
export interface ServingVersion {
  readonly name: string;
  readonly version: number;
  readonly definition: ModelDefinition;
  readonly scheduler: Scheduler;
}

interface VersionRecord {
  readonly version: number;
  state: ModelState;
  reason: string;
  definition?: ModelDefinition | undefined;
  scheduler?: Scheduler | undefined;
  instances?: ModelInstance[] | undefined;
  unsupported?: boolean;
}

interface ModelRecord {
  readonly name: string;
  versions: Map<number, VersionRecord>;
  /** Current definition (the one READY versions run). */
  definition?: ModelDefinition | undefined;
  /** Set when the model could not be resolved (bad config, duplicate, missing directory). */
  failure?: string | undefined;
  /** Whether the model should be loaded (counts for server readiness). */
  wanted: boolean;
  /** File-tree signature at the last (re)load, for poll mode. */
  signature?: string | undefined;
  /** The model needs a backend this server does not have (listed UNAVAILABLE, not a failure). */
  unsupported?: boolean;
}

/**
 * Whether a load failure is this server's capability gap (a backend or platform it cannot run, such
 * as python or tensorrt) rather than a broken model. Such models are listed UNAVAILABLE but are not
 * startup errors and do not hold back strict readiness (see README, "Differences").
 */
/** True for a malformed `file:` / `config` load override (Triton reports these as a failed poll). */
function isOverrideError(error: unknown): boolean {
  return error instanceof ModelRepositoryError && error.code === 'INVALID_LOAD_OVERRIDE';
}

export function isUnsupportedBackend(error: unknown): boolean {
  if (error instanceof BackendError) return error.code === 'BACKEND_UNAVAILABLE';
  // Schedulers refuse what this server cannot do (sequence batching, ensembles) with UNSUPPORTED.
  if (error instanceof ServerError) return error.kind === 'UNSUPPORTED';
  return error instanceof Error && / is not supported by tritonserver-ts\b/.test(error.message);
}

/** Triton's reason for a model found in more than one repository. */
const DUPLICATE_REASON = 'model appears in two or more repositories';

/** Result of the startup load. */
export interface StartupResult {
  /** Models that failed to load, with the reason. */
  readonly failures: readonly { readonly name: string; readonly reason: string }[];
  /** Models listed UNAVAILABLE because their backend cannot run here (python, tensorrt, …). */
  readonly unsupported: readonly { readonly name: string; readonly reason: string }[];
}

async function treeSignature(dir: string, depth = 0): Promise<string> {
  const parts: string[] = [];
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 'missing';
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory() && depth < 3) {
      parts.push(`${e.name}/{${await treeSignature(p, depth + 1)}}`);
    } else {
      try {
        const s = await stat(p);
        parts.push(`${e.name}:${s.size}:${s.mtimeMs}`);
      } catch {
        parts.push(`${e.name}:?`);
      }
    }
  }
  return parts.join(',');
}

/** Parses a request's version string: '' = latest; otherwise a non-negative integer. */
export function parseVersion(version: string | undefined): number | undefined {
  if (version === undefined || version === '') return undefined;
  if (!/^\d+$/.test(version) || !Number.isSafeInteger(Number(version))) {
    throw invalidArg(
      `failed to get model version from specified version string '${version}' (details: stoll), version should be an integral value greater than or equal to 0`,
    );
  }
  return Number(version);
}

/** Owns every model of the server. Load / unload / poll operations run one at a time. */
export class ModelManager {
  readonly #opts: ModelManagerOptions;
  readonly #models = new Map<string, ModelRecord>();
  #chain: Promise<unknown> = Promise.resolve();
  #pollTimer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: ModelManagerOptions) {
    this.#opts = options;
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
            await this.#load(name, byName.get(name), {});
          } catch (error) {
            const reason = error instanceof Error ? error.message : String(error);
            (this.#models.get(name)?.unsupported === true ? unsupported : failures).push({ name, reason });
          }
        }),
      );
      if (this.#opts.controlMode === 'poll' && (this.#opts.pollIntervalMs ?? 0) > 0) this.#schedulePoll();
      const byNameOrder = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : 1);
      return { failures: failures.sort(byNameOrder), unsupported: unsupported.sort(byNameOrder) };
    });
  }

  #schedulePoll(): void {
    if (this.#stopped) return;
    this.#pollTimer = setTimeout(() => {
      this.poll()
        .catch((error: unknown) =>
          this.#opts.logger.error(`failed to poll model repository: ${String(error)}`),
        )
        .finally(() => this.#schedulePoll());
    }, this.#opts.pollIntervalMs);
    this.#pollTimer.unref();
  }

  /** One poll pass (poll mode): loads new models, reloads changed ones, unloads removed ones. */
  poll(): Promise<void> {
    return this.#serialize(async () => {
      const entries = await this.#opts.services.listModels(this.#opts.repositories);
      const byName = groupEntries(entries);
      for (const [name, group] of byName) {
        const record = this.#models.get(name);
        const sig = group.length === 1 ? await treeSignature((group[0] as RepositoryEntry).directory) : 'dup';
        if (record !== undefined && record.signature === sig && record.wanted) continue;
        try {
          await this.#load(name, group, {});
          this.#opts.logger.info(`successfully loaded '${name}'`);
        } catch (error) {
          this.#opts.logger.error(error instanceof Error ? error.message : String(error));
        }
      }
      for (const [name, record] of this.#models) {
        if (!byName.has(name) && record.wanted) await this.#unload(name);
      }
    });
  }

  /** `POST v2/repository/models/{m}/load`. */
  load(
    name: string,
    options: { config?: string | object; files?: ReadonlyMap<string, Uint8Array> } = {},
  ): Promise<void> {
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
      await this.#load(name, groupEntries(entries).get(name), options);
    });
  }

  /** `POST v2/repository/models/{m}/unload` (`unload_dependents` is accepted; models here have no dependents). */
  unload(name: string): Promise<void> {
    this.#assertControl();
    return this.#serialize(() => this.#unload(name));
  }

  #assertControl(): void {
    if (this.#opts.controlMode !== 'explicit') {
      throw unavailable('explicit model load / unload is not allowed if polling is enabled');
    }
  }

  async #load(
    name: string,
    group: readonly RepositoryEntry[] | undefined,
    override: { config?: string | object; files?: ReadonlyMap<string, Uint8Array> },
  ): Promise<void> {
    const record = this.#record(name);
    record.wanted = true;
    const hasFiles = override.files !== undefined && override.files.size > 0;
    if (group !== undefined && group.length > 1) {
      record.failure = DUPLICATE_REASON;
      await this.#retireAll(record, DUPLICATE_REASON);
      throw internal(`failed to load '${name}', ${DUPLICATE_REASON}`);
    }
    const entry: RepositoryEntry | undefined =
      group?.[0] ??
      (hasFiles
        ? {
            name,
            directory: join(this.#opts.repositories[0] ?? '.', name),
            repository: this.#opts.repositories[0] ?? '.',
          }
        : undefined);
    if (entry === undefined) {
      if (record.versions.size === 0 && record.definition === undefined) this.#models.delete(name);
      throw internal(`failed to load '${name}', failed to poll from model repository`);
    }
    const signature = await treeSignature(entry.directory);
    const resolveOptions: ResolveModelOptions = {
      ...this.#opts.resolveOptions,
      ...(override.config !== undefined ? { configOverride: override.config } : {}),
      ...(hasFiles && override.files !== undefined ? { files: override.files } : {}),
    };
    const resolution = await this.#opts.services.resolve(entry, resolveOptions);
    record.unsupported = !resolution.ok && isUnsupportedBackend(resolution.error);
    if (!resolution.ok) {
      record.signature = signature;
      if (![...record.versions.values()].some((v) => v.state === 'READY')) record.failure = resolution.reason;
      if (isOverrideError(resolution.error)) {
        // As Triton: a bad `file:` override fails while "polling" it; the detail goes to the log only.
        this.#opts.logger.error(`failed to load '${name}': ${resolution.reason}`);
        throw internal(`failed to load '${name}', failed to poll from model repository`, resolution.error);
      }
      throw internal(`failed to load '${name}', ${resolution.reason}`, resolution.error);
    }
    const definition = resolution.model;
    for (const warning of ignoredFeatures(definition.config)) this.#opts.logger.warn(warning);
    record.failure = undefined;
    record.signature = signature;

    // Mark new versions LOADING (versions already READY keep serving until their replacement is ready).
    for (const v of definition.versions) {
      const current = record.versions.get(v.version);
      if (current === undefined || current.state !== 'READY') {
        record.versions.set(v.version, { version: v.version, state: 'LOADING', reason: '' });
      }
    }
    const created = await Promise.all(
      definition.versions.map((v) => this.#createVersion(definition, v.version)),
    );

    const previous = record.versions;
    const previousDefinition = record.definition;
    const next = new Map<number, VersionRecord>();
    for (const rec of created) next.set(rec.version, rec);
    for (const [v, old] of previous) {
      if (!next.has(v)) next.set(v, { version: v, state: 'UNAVAILABLE', reason: 'unloaded' });
      else if (old.state === 'READY' && next.get(v)?.state !== 'READY') {
        // The reload of this version failed: keep serving the old one, as Triton does.
        next.set(v, old);
        continue;
      }
    }
    record.versions = next;
    record.definition = definition;
    // Retire the replaced versions in the background of this operation (drain, then dispose).
    const retired = [...previous.values()].filter(
      (old) => next.get(old.version) !== old && old.scheduler !== undefined,
    );
    await Promise.all(retired.map((old) => this.#dispose(old)));
    for (const [v, rec] of next) {
      if (rec.state !== 'READY') this.#opts.statistics?.delete(name, String(v));
    }
    if (previousDefinition !== undefined && previousDefinition !== definition) {
      await previousDefinition.cleanup().catch(() => undefined);
    }

    const failed = created.filter((c) => c.state !== 'READY');
    record.unsupported = failed.length > 0 && failed.every((f) => f.unsupported === true);
    if (failed.length === created.length && ![...next.values()].some((v) => v.state === 'READY')) {
      // Nothing serves from this definition: remove its private override files now.
      await definition.cleanup().catch(() => undefined);
    }
    if (failed.length > 0) {
      const detail = failed
        .map((f) => `version ${f.version} is at UNAVAILABLE state: ${f.reason}`)
        .join('; ');
      throw internal(`failed to load '${name}', ${detail}`);
    }
  }

  async #createVersion(definition: ModelDefinition, version: number): Promise<VersionRecord> {
    let instances: ModelInstance[] = [];
    try {
      instances = await this.#opts.services.createInstances(
        definition,
        version,
        this.#opts.instanceOptions ?? {},
      );
      // `model_warmup` runs on every new instance before the version is READY; a failure fails the load.
      if (definition.config.model_warmup.length > 0)
        await this.#opts.services.warmup?.(definition, instances);
      const scheduler = this.#opts.services.createScheduler({
        modelName: definition.name,
        modelVersion: String(version),
        config: definition.config,
        instances,
        ...(this.#opts.statistics !== undefined
          ? { statistics: this.#opts.statistics.get(definition.name, String(version)) }
          : {}),
      });
      return { version, state: 'READY', reason: '', definition, scheduler, instances };
    } catch (error) {
      await Promise.all(instances.map((i) => i.dispose().catch(() => undefined)));
      const reason = error instanceof Error ? error.message : String(error);
      return { version, state: 'UNAVAILABLE', reason, unsupported: isUnsupportedBackend(error) };
    }
  }

  async #dispose(rec: VersionRecord): Promise<void> {
    if (rec.scheduler !== undefined) await rec.scheduler.drain().catch(() => undefined);
    await Promise.all((rec.instances ?? []).map((i) => i.dispose().catch(() => undefined)));
    rec.scheduler = undefined;
    rec.instances = undefined;
  }

  async #retireAll(record: ModelRecord, reason: string): Promise<void> {
    const live = [...record.versions.values()].filter((v) => v.scheduler !== undefined);
    for (const v of live) v.state = 'UNLOADING';
    await Promise.all(live.map((v) => this.#dispose(v)));
    for (const v of record.versions.values()) {
      v.state = 'UNAVAILABLE';
      v.reason = reason;
    }
    this.#opts.statistics?.delete(record.name);
    if (record.definition !== undefined) {
      await record.definition.cleanup().catch(() => undefined);
      record.definition = undefined;
    }
  }

  async #unload(name: string): Promise<void> {
    const record = this.#models.get(name);
    if (record === undefined) return;
    record.wanted = false;
    record.failure = undefined;
    record.signature = undefined;
    await this.#retireAll(record, 'unloaded');
  }

  #record(name: string): ModelRecord {
    let record = this.#models.get(name);
    if (record === undefined) {
      record = { name, versions: new Map(), wanted: true };
      this.#models.set(name, record);
    }
    return record;
  }

  /**
   * The version that serves a request, or Triton's error: unknown model (INVALID_ARG), no available
   * versions / unknown version (NOT_FOUND), version not ready (UNAVAILABLE).
   */
  resolve(name: string, version?: string): ServingVersion {
    const requested = parseVersion(version);
    const record = this.#models.get(name);
    if (record === undefined) throw invalidArg(`Request for unknown model: '${name}' is not found`);
    let rec: VersionRecord | undefined;
    if (requested === undefined) {
      for (const v of record.versions.values()) {
        if (v.state === 'READY' && (rec === undefined || v.version > rec.version)) rec = v;
      }
      if (rec === undefined) throw notFound(`Request for unknown model: '${name}' has no available versions`);
    } else {
      rec = record.versions.get(requested);
      if (rec === undefined)
        throw notFound(`Request for unknown model: '${name}' version ${requested} is not found`);
      if (rec.state !== 'READY') {
        throw unavailable(`Request for unknown model: '${name}' version ${requested} is not at ready state`);
      }
    }
    return {
      name,
      version: rec.version,
      definition: rec.definition as ModelDefinition,
      scheduler: rec.scheduler as Scheduler,
    };
  }

  /** Ready versions of a model, ascending (for metadata). */
  readyVersions(name: string): number[] {
    const record = this.#models.get(name);
    if (record === undefined) return [];
    return [...record.versions.values()]
      .filter((v) => v.state === 'READY')
      .map((v) => v.version)
      .sort((a, b) => a - b);
  }

  /** Every serving version of every model (statistics). */
  servingVersions(): ServingVersion[] {
    const out: ServingVersion[] = [];
    for (const record of [...this.#models.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      for (const v of [...record.versions.values()].sort((a, b) => a.version - b.version)) {
        if (v.state === 'READY' && v.definition !== undefined && v.scheduler !== undefined) {
          out.push({
            name: record.name,
            version: v.version,
            definition: v.definition,
            scheduler: v.scheduler,
          });
        }
      }
    }
    return out;
  }

  /** Whether the manager has ever seen `name` (loaded, failed or unloaded). */
  has(name: string): boolean {
    return this.#models.has(name);
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
    for (const record of this.#models.values()) {
      if (!record.wanted || record.unsupported === true) continue;
      if (record.failure !== undefined) return false;
      if (record.versions.size === 0) return false;
      for (const v of record.versions.values()) {
        if (v.state !== 'READY' && v.reason !== 'unloaded') return false;
      }
    }
    return true;
  }

  /** `POST v2/repository/index`: every model directory of the repositories, plus known models. */
  async index(readyOnly = false): Promise<RepositoryIndexEntry[]> {
    const entries = await this.#opts.services.listModels(this.#opts.repositories).catch(() => []);
    const byName = groupEntries(entries);
    const names = new Set([...byName.keys(), ...this.#models.keys()]);
    const out: RepositoryIndexEntry[] = [];
    for (const name of [...names].sort()) {
      const record = this.#models.get(name);
      if ((byName.get(name)?.length ?? 0) > 1) {
        if (!readyOnly) out.push({ name, state: 'UNAVAILABLE', reason: DUPLICATE_REASON });
        continue;
      }
      if (record === undefined || (record.versions.size === 0 && record.failure === undefined)) {
        if (!readyOnly) out.push({ name });
        continue;
      }
      if (record.failure !== undefined && record.versions.size === 0) {
        if (!readyOnly) out.push({ name, state: 'UNAVAILABLE', reason: record.failure });
        continue;
      }
      for (const v of [...record.versions.values()].sort((a, b) => a.version - b.version)) {
        if (readyOnly && v.state !== 'READY') continue;
        // Triton writes `reason` only when there is one (e.g. READY rows have none).
        out.push({
          name,
          version: String(v.version),
          state: v.state,
          ...(v.reason !== '' ? { reason: v.reason } : {}),
        });
      }
    }
    return out;
  }

  /** Stops polling, drains every scheduler and disposes every instance. */
  stop(): Promise<void> {
    this.#stopped = true;
    if (this.#pollTimer !== undefined) clearTimeout(this.#pollTimer);
    return this.#serialize(async () => {
      await Promise.all([...this.#models.values()].map((r) => this.#retireAll(r, 'unloaded')));
    });
  }
}

function groupEntries(entries: readonly RepositoryEntry[]): Map<string, RepositoryEntry[]> {
  const map = new Map<string, RepositoryEntry[]>();
  for (const e of entries) {
    const list = map.get(e.name);
    if (list === undefined) map.set(e.name, [e]);
    else list.push(e);
  }
  return map;
}
