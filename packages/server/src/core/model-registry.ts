/**
 * The model registry: every model the server has seen, each version's state (READY / UNAVAILABLE /
 * LOADING / UNLOADING) and reason, and the lookups front ends need — resolving a model + version for
 * a request with Triton's error strings, ready and serving versions, strict readiness and the
 * repository index. It holds state only; the loader changes it.
 * @packageDocumentation
 */
import type { ModelDefinition, RepositoryEntry } from '../repository/types.js';
import type { ModelInstance } from '../runtime/types.js';
import type { Scheduler } from '../scheduler/types.js';
import { echo } from '../common/echo.js';
import { invalidArg, notFound, unavailable } from '../common/errors.js';
import type { ModelState, RepositoryIndexEntry } from './types.js';

/** A loaded model version that can serve requests. */
export interface ServingVersion {
  readonly name: string;
  readonly version: number;
  readonly definition: ModelDefinition;
  readonly scheduler: Scheduler;
}

/** One version of a model: its state, and while it serves, its scheduler and instances. */
export interface VersionRecord {
  readonly version: number;
  state: ModelState;
  reason: string;
  definition?: ModelDefinition | undefined;
  scheduler?: Scheduler | undefined;
  instances?: ModelInstance[] | undefined;
  unsupported?: boolean;
}

/** One model: its versions and what the last load of it found. */
export interface ModelRecord {
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
  /**
   * Loaded by name (startup, `load`, poll) rather than only as an ensemble's composing model;
   * `unload_dependents` unloads composing models that were not.
   */
  explicit?: boolean;
  /** For an ensemble: its composing models as of its last load (kept when it is taken down). */
  composing?: readonly string[] | undefined;
  /**
   * The config (and `file:`) override of the last successful load that had one: a later load
   * without a config keeps using it, as Triton does, until the model is unloaded.
   */
  override?:
    { readonly config?: string | object; readonly files?: ReadonlyMap<string, Uint8Array> } | undefined;
}

/** Triton's reason for a model found in more than one repository. */
export const DUPLICATE_REASON = 'model appears in two or more repositories';

/** Parses a request's version string: '' = latest; otherwise a non-negative integer. */
export function parseVersion(version: string | undefined): number | undefined {
  if (version === undefined || version === '') return undefined;
  if (!/^\d+$/.test(version) || !Number.isSafeInteger(Number(version))) {
    throw invalidArg(
      `failed to get model version from specified version string '${echo(version)}' (details: stoll), version should be an integral value greater than or equal to 0`,
    );
  }
  return Number(version);
}

/** Groups repository entries by model name (a name with two entries is a duplicate). */
export function groupEntries(entries: readonly RepositoryEntry[]): Map<string, RepositoryEntry[]> {
  const map = new Map<string, RepositoryEntry[]>();
  for (const e of entries) {
    const list = map.get(e.name);
    if (list === undefined) map.set(e.name, [e]);
    else list.push(e);
  }
  return map;
}

/** Every model record of the server, by name. */
export class ModelRegistry {
  readonly #models = new Map<string, ModelRecord>();

  /** The record of `name`, if the registry has one. */
  get(name: string): ModelRecord | undefined {
    return this.#models.get(name);
  }

  /** The record of `name`, created (wanted, no versions) if missing. */
  getOrCreate(name: string): ModelRecord {
    let record = this.#models.get(name);
    if (record === undefined) {
      record = { name, versions: new Map(), wanted: true };
      this.#models.set(name, record);
    }
    return record;
  }

  /** Forgets `name`. */
  delete(name: string): void {
    this.#models.delete(name);
  }

  /** Whether the registry has ever seen `name` (loaded, failed or unloaded). */
  has(name: string): boolean {
    return this.#models.has(name);
  }

  /** Every record, in insertion order. */
  records(): IterableIterator<ModelRecord> {
    return this.#models.values();
  }

  /** Every (name, record) pair, in insertion order. */
  entries(): IterableIterator<[string, ModelRecord]> {
    return this.#models.entries();
  }

  /**
   * The version that serves a request, or Triton's error: unknown model (INVALID_ARG), no available
   * versions / unknown version (NOT_FOUND), version not ready (UNAVAILABLE).
   */
  resolve(name: string, version?: string): ServingVersion {
    const requested = parseVersion(version);
    const record = this.#models.get(name);
    if (record === undefined) throw invalidArg(`Request for unknown model: '${echo(name)}' is not found`);
    let rec: VersionRecord | undefined;
    if (requested === undefined) {
      for (const v of record.versions.values()) {
        if (v.state === 'READY' && (rec === undefined || v.version > rec.version)) rec = v;
      }
      if (rec === undefined)
        throw notFound(`Request for unknown model: '${echo(name)}' has no available versions`);
    } else {
      rec = record.versions.get(requested);
      if (rec === undefined)
        throw notFound(`Request for unknown model: '${echo(name)}' version ${requested} is not found`);
      if (rec.state !== 'READY') {
        throw unavailable(
          `Request for unknown model: '${echo(name)}' version ${requested} is not at ready state`,
        );
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

  /**
   * The repository index: every model directory found (`byName`, from the repositories) plus every
   * known model, one row per version, sorted by name.
   */
  index(byName: ReadonlyMap<string, readonly RepositoryEntry[]>, readyOnly: boolean): RepositoryIndexEntry[] {
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
}
