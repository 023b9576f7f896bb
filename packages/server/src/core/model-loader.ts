/**
 * The model loader: loads a model from its repository entry (with a config override and `file:`
 * contents), creating each version's instances, warmup and scheduler; reloads keep READY versions
 * serving until their replacement is ready; unloads drain and dispose. It changes the
 * {@link ModelRegistry}'s records and reports failures with Triton's messages.
 * @packageDocumentation
 */
import { join } from 'node:path';

import type {
  ModelDefinition,
  ModelResolution,
  RepositoryEntry,
  ResolveModelOptions,
} from '../repository/types.js';
import { ModelRepositoryError } from '../repository/errors.js';
import { ignoredFeatures } from '../repository/ignored-features.js';
import type { CreateInstancesOptions } from '../runtime/backends.js';
import { BackendError } from '../runtime/errors.js';
import type { ModelInstance } from '../runtime/types.js';
import { loadImplicitStates } from '../scheduler/implicit-state.js';
import type { SchedulerFactory } from '../scheduler/types.js';
import { FIRST_RESPONSE_HISTOGRAM } from '../statistics/metrics-config.js';
import type { ModelStatistics } from '../statistics/model-statistics.js';
import type { StatisticsRegistry } from '../statistics/registry.js';
import {
  checkComposingModels,
  checkEnsembleTypes,
  composingModels,
  type ComposingStatus,
} from './ensemble-graph.js';
import { echo } from '../common/echo.js';
import { ServerError, internal } from '../common/errors.js';
import type { InferenceHost } from '../common/inference-host.js';
import type { Logger } from './logging.js';
import {
  DUPLICATE_REASON,
  type ModelRecord,
  type ModelRegistry,
  type VersionRecord,
} from './model-registry.js';
import { treeSignature } from './repository-watcher.js';

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

/** A load's override: `config` (JSON text or object) and `file:` contents (which need `config`). */
export interface LoadOverride {
  readonly config?: string | object;
  readonly files?: ReadonlyMap<string, Uint8Array>;
}

/**
 * What loading an ensemble needs from the model manager: its composing models loaded first
 * (dependency-ordered loading), and the circular dependencies found on the way.
 */
export interface EnsembleLoadContext {
  /** Loads the composing models `names` (each once per operation) before the ensemble is checked. */
  loadDependencies(ensemble: string, names: readonly string[]): Promise<void>;
  /** Whether `name` has a directory in the repositories (a missing model vs one not loaded). */
  inRepository(name: string): boolean;
  /** Triton's circular-dependency message for `name`, when loading it closed a cycle. */
  circular(name: string): string | undefined;
}

/** Options of {@link ModelLoader}. */
export interface ModelLoaderOptions {
  readonly repositories: readonly string[];
  /** Options passed to every resolve (model config name, GPU fallback, auto-complete, …). */
  readonly resolveOptions: ResolveModelOptions;
  readonly instanceOptions?: CreateInstancesOptions;
  readonly services: ModelServices;
  readonly logger: Logger;
  /** Whether `--rate-limit=execution_count` is on (else `rate_limiter` sections get a warning). */
  readonly rateLimiting?: boolean;
  /** Where schedulers record each version's statistics. */
  readonly statistics?: StatisticsRegistry;
  /** The server the models run in, handed to backends (Python BLS) and schedulers (ensembles). */
  readonly inferenceHost?: InferenceHost;
}

/** True for a malformed `file:` / `config` load override (Triton reports these as a failed poll). */
function isOverrideError(error: unknown): boolean {
  return error instanceof ModelRepositoryError && error.code === 'INVALID_LOAD_OVERRIDE';
}

/**
 * Whether a load failure is this server's capability gap (a backend or platform it cannot run, such
 * as tensorrt or tensorflow) rather than a broken model. Such models are listed UNAVAILABLE but are not
 * startup errors and do not hold back strict readiness (see README, "Differences").
 */
export function isUnsupportedBackend(error: unknown): boolean {
  if (error instanceof BackendError) return error.code === 'BACKEND_UNAVAILABLE';
  // Schedulers refuse what this server cannot do (sequence batching, ensembles) with UNSUPPORTED.
  if (error instanceof ServerError) return error.kind === 'UNSUPPORTED';
  return error instanceof Error && / is not supported by tritonserver-ts\b/.test(error.message);
}

/** Loads and unloads models into a {@link ModelRegistry}. Callers run one operation at a time. */
export class ModelLoader {
  readonly #opts: ModelLoaderOptions;
  readonly #registry: ModelRegistry;

  constructor(options: ModelLoaderOptions, registry: ModelRegistry) {
    this.#opts = options;
    this.#registry = registry;
  }

  /**
   * Loads (or reloads) `name` from its repository entries (`undefined` = not found; with `file:`
   * contents the model is created in the first repository).
   * @throws ServerError (INTERNAL) with Triton's `failed to load '<name>', …` message.
   */
  async load(
    name: string,
    group: readonly RepositoryEntry[] | undefined,
    override: LoadOverride,
    ensembleContext?: EnsembleLoadContext,
  ): Promise<void> {
    const record = this.#registry.getOrCreate(name);
    record.wanted = true;
    // A load without a config of a model loaded with one keeps that override (Triton's reload).
    const given = override;
    const effective =
      override.config === undefined && record.override !== undefined ? record.override : override;
    const hasFiles = effective.files !== undefined && effective.files.size > 0;
    if (group !== undefined && group.length > 1) {
      record.failure = DUPLICATE_REASON;
      await this.retireAll(record, DUPLICATE_REASON);
      throw internal(`failed to load '${echo(name)}', ${DUPLICATE_REASON}`);
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
      if (record.versions.size === 0 && record.definition === undefined) this.#registry.delete(name);
      throw internal(`failed to load '${echo(name)}', failed to poll from model repository`);
    }
    const signature = await treeSignature(entry.directory);
    const resolveOptions: ResolveModelOptions = {
      ...this.#opts.resolveOptions,
      ...(effective.config !== undefined ? { configOverride: effective.config } : {}),
      ...(hasFiles && effective.files !== undefined ? { files: effective.files } : {}),
    };
    const resolution = await this.#opts.services.resolve(entry, resolveOptions);
    record.unsupported = !resolution.ok && isUnsupportedBackend(resolution.error);
    if (!resolution.ok) {
      record.signature = signature;
      if (![...record.versions.values()].some((v) => v.state === 'READY')) {
        record.failure = resolution.reason;
        // Versions left from an earlier load show this failure, not the one before it.
        for (const v of record.versions.values()) v.reason = resolution.reason;
      }
      if (isOverrideError(resolution.error)) {
        // As Triton: a bad `file:` override fails while "polling" it; the detail goes to the log only.
        this.#opts.logger.error(`failed to load '${name}': ${resolution.reason}`);
        throw internal(
          `failed to load '${echo(name)}', failed to poll from model repository`,
          resolution.error,
        );
      }
      throw internal(`failed to load '${echo(name)}', ${resolution.reason}`, resolution.error);
    }
    let definition = resolution.model;
    if (given.config !== undefined) record.override = given;
    const ignored = ignoredFeatures(definition.config, { rateLimiting: this.#opts.rateLimiting === true });
    for (const warning of ignored) this.#opts.logger.warn(warning);
    record.failure = undefined;
    record.signature = signature;
    record.composing =
      definition.config.ensemble_scheduling !== undefined ? composingModels(definition.config) : undefined;
    if (definition.config.ensemble_scheduling !== undefined) {
      definition = await this.#checkEnsemble(record, definition, ensembleContext);
    }

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
    const failed = created.filter((c) => c.state !== 'READY');
    if (failed.length > 0) {
      await this.#abandon(record, definition, created);
      const detail = failed
        .map((f) => `version ${f.version} is at UNAVAILABLE state: ${f.reason}`)
        .join('; ');
      throw internal(`failed to load '${echo(name)}', ${detail}`);
    }

    // Every version loaded: they serve from now on, and the versions they replace or that left the
    // version policy are retired (drained, then disposed) within this operation.
    const previous = record.versions;
    const previousDefinition = record.definition;
    const next = new Map<number, VersionRecord>();
    for (const rec of created) next.set(rec.version, rec);
    for (const v of previous.keys()) {
      if (!next.has(v)) next.set(v, { version: v, state: 'UNAVAILABLE', reason: 'unloaded' });
    }
    record.versions = next;
    record.definition = definition;
    record.unsupported = false;
    const retired = [...previous.values()].filter((old) => old.scheduler !== undefined);
    await Promise.all(retired.map((old) => this.#dispose(old)));
    for (const [v, rec] of next) {
      if (rec.state !== 'READY') this.#opts.statistics?.delete(name, String(v));
    }
    if (previousDefinition !== undefined && previousDefinition !== definition) {
      await previousDefinition.cleanup().catch(() => undefined);
    }
  }

  /**
   * A load in which a version failed is abandoned as a whole, as Triton's model lifecycle does: the
   * versions it created are released (a new version becomes UNAVAILABLE `unloaded`, a failed one
   * UNAVAILABLE with its reason), and every version that was READY before keeps serving — also one
   * the new version policy leaves out, and one whose reload failed.
   */
  async #abandon(
    record: ModelRecord,
    definition: ModelDefinition,
    created: readonly VersionRecord[],
  ): Promise<void> {
    await Promise.all(created.filter((c) => c.scheduler !== undefined).map((c) => this.#dispose(c)));
    for (const rec of created) {
      if (record.versions.get(rec.version)?.state === 'READY') continue;
      record.versions.set(
        rec.version,
        rec.state === 'READY' ? { version: rec.version, state: 'UNAVAILABLE', reason: 'unloaded' } : rec,
      );
      this.#opts.statistics?.delete(record.name, String(rec.version));
    }
    const failed = created.filter((c) => c.state !== 'READY');
    const serving = [...record.versions.values()].some((v) => v.state === 'READY');
    record.unsupported = !serving && failed.every((f) => f.unsupported === true);
    // Nothing serves from this definition: remove its private override files now.
    if (definition !== record.definition) await definition.cleanup().catch(() => undefined);
  }

  /** Unloads `name` (a model never seen is a no-op): every version UNAVAILABLE, reason `unloaded`. */
  async unload(name: string): Promise<void> {
    const record = this.#registry.get(name);
    if (record === undefined) return;
    record.wanted = false;
    record.failure = undefined;
    record.signature = undefined;
    record.override = undefined;
    await this.retireAll(record, 'unloaded');
  }

  /**
   * Drains and disposes every live version of `record`, marks every version UNAVAILABLE with
   * `reason`, drops its statistics and cleans up its definition.
   */
  async retireAll(record: ModelRecord, reason: string): Promise<void> {
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

  async #createVersion(definition: ModelDefinition, version: number): Promise<VersionRecord> {
    let instances: ModelInstance[] = [];
    // An ensemble has no instances: its scheduler runs the steps on the composing models.
    const ensemble = definition.config.ensemble_scheduling !== undefined;
    try {
      if (!ensemble) {
        instances = await this.#opts.services.createInstances(definition, version, {
          ...this.#opts.instanceOptions,
          ...(this.#opts.inferenceHost !== undefined ? { inferenceHost: this.#opts.inferenceHost } : {}),
        });
      }
      // `model_warmup` runs on every new instance before the version is READY; a failure fails the load.
      if (definition.config.model_warmup.length > 0)
        await this.#opts.services.warmup?.(definition, instances);
      // A sequence model's implicit states: validated (Triton's messages) and their initial data read.
      const implicitStates =
        (definition.config.sequence_batching?.state.length ?? 0) > 0
          ? await loadImplicitStates(definition.config, definition.directory)
          : undefined;
      const scheduler = this.#opts.services.createScheduler({
        modelName: definition.name,
        modelVersion: String(version),
        config: definition.config,
        instances,
        // Which ragged / batch-input features the model's backend reads (its `Backend.batchInputs`).
        batchInputs: this.#opts.instanceOptions?.backends?.batchInputs(definition.config) ?? 'none',
        ...(this.#opts.inferenceHost !== undefined ? { inferenceHost: this.#opts.inferenceHost } : {}),
        ...(this.#opts.statistics !== undefined
          ? { statistics: this.#versionStatistics(this.#opts.statistics, definition, version) }
          : {}),
        modelConfig: (model: string, v: string) => this.#servingConfig(model, v),
        ...(implicitStates === undefined ? {} : { implicitStates }),
      });
      return { version, state: 'READY', reason: '', definition, scheduler, instances };
    } catch (error) {
      await Promise.all(instances.map((i) => i.dispose().catch(() => undefined)));
      const reason = error instanceof Error ? error.message : String(error);
      return { version, state: 'UNAVAILABLE', reason, unsupported: isUnsupportedBackend(error) };
    }
  }

  /**
   * A version's statistics, with its model-dependent latency metrics set up (the first-response
   * histogram of a decoupled model, with `model_metrics` buckets when the config gives them).
   */
  #versionStatistics(
    registry: StatisticsRegistry,
    definition: ModelDefinition,
    version: number,
  ): ModelStatistics {
    const stats = registry.get(definition.name, String(version));
    const config = definition.config;
    const buckets = config.model_metrics?.metric_control.find(
      (c) => c.metric_identifier?.family === FIRST_RESPONSE_HISTOGRAM && c.histogram_options !== undefined,
    )?.histogram_options?.buckets;
    stats.configureLatencyMetrics({
      decoupled: config.model_transaction_policy?.decoupled === true,
      ...(buckets !== undefined ? { firstResponseBuckets: buckets } : {}),
    });
    return stats;
  }

  /** The config a serving version of `model` runs with ('' = latest), or `undefined`. */
  #servingConfig(model: string, version: string): ModelDefinition['config'] | undefined {
    try {
      return this.#registry.resolve(model, version).definition.config;
    } catch {
      return undefined;
    }
  }

  /** What the ensemble checks need to know about composing model `model`. */
  composingStatus(model: string, context?: EnsembleLoadContext): ComposingStatus {
    const record = this.#registry.get(model);
    if (record === undefined) {
      return context?.inRepository(model) === true ? { kind: 'not-loaded' } : { kind: 'missing' };
    }
    const ready = [...record.versions.values()]
      .filter((v) => v.state === 'READY')
      .map((v) => v.version)
      .sort((a, b) => a - b);
    if (ready.length > 0) return { kind: 'loaded', versions: ready };
    if (record.failure === DUPLICATE_REASON) return { kind: 'missing' };
    if (record.failure !== undefined) return { kind: 'invalid', message: record.failure };
    const failed = [...record.versions.values()].filter((v) => v.reason !== 'unloaded' && v.reason !== '');
    if (failed.length === 0) {
      return record.versions.size === 0 && context?.inRepository(model) !== true
        ? { kind: 'missing' }
        : { kind: 'not-loaded' };
    }
    return {
      kind: 'not-loaded',
      message: failed.map((v) => `version ${v.version} is at ${v.state} state: ${v.reason}`).join('; '),
    };
  }

  /**
   * Runs Triton's dependency-graph and typed checks of an ensemble about to be (re)loaded against
   * the composing models as they serve now.
   * @returns the message of the first failed check, or `undefined`
   */
  ensembleProblem(
    name: string,
    definition: ModelDefinition,
    context?: EnsembleLoadContext,
  ): { message: string; unsupported: boolean } | undefined {
    const circular = context?.circular(name);
    if (circular !== undefined) return { message: circular, unsupported: false };
    try {
      checkComposingModels(name, definition.config, (m) => this.composingStatus(m, context));
      checkEnsembleTypes(name, definition.config, (step) => {
        const version = step.model_version < 0 ? '' : String(step.model_version);
        return this.#registry.resolve(step.model_name, version).definition.config;
      });
      return undefined;
    } catch (error) {
      return { message: error instanceof Error ? error.message : String(error), unsupported: false };
    }
  }

  /**
   * Loads an ensemble's composing models (through the manager), then checks the ensemble; on a
   * failure the ensemble is retired and the load fails with Triton's
   * `load failed for model '<m>': <message>` (INVALID_ARG).
   */
  async #checkEnsemble(
    record: ModelRecord,
    definition: ModelDefinition,
    context: EnsembleLoadContext | undefined,
  ): Promise<ModelDefinition> {
    const name = definition.name;
    await context?.loadDependencies(name, composingModels(definition.config));
    const problem = this.ensembleProblem(name, definition, context);
    if (problem === undefined) return this.#markDecoupled(definition);
    await this.retireAll(record, problem.message);
    await definition.cleanup().catch(() => undefined);
    record.failure = problem.message;
    record.unsupported = problem.unsupported;
    throw new ServerError(
      problem.unsupported ? 'UNSUPPORTED' : 'INVALID_ARG',
      `load failed for model '${name}': ${problem.message}\n`,
    );
  }

  /**
   * As Triton fills in for ensembles: `model_transaction_policy.decoupled` is true when a decoupled
   * step feeds the ensemble (so the front ends stream it, and HTTP refuses it).
   */
  #markDecoupled(definition: ModelDefinition): ModelDefinition {
    const { decoupled } = checkEnsembleTypes(definition.name, definition.config, (step) => {
      const version = step.model_version < 0 ? '' : String(step.model_version);
      return this.#registry.resolve(step.model_name, version).definition.config;
    });
    const config = definition.config;
    if ((config.model_transaction_policy?.decoupled === true) === decoupled) return definition;
    return {
      ...definition,
      config: { ...config, model_transaction_policy: { ...config.model_transaction_policy, decoupled } },
    };
  }

  async #dispose(rec: VersionRecord): Promise<void> {
    if (rec.scheduler !== undefined) await rec.scheduler.drain().catch(() => undefined);
    await Promise.all((rec.instances ?? []).map((i) => i.dispose().catch(() => undefined)));
    rec.scheduler = undefined;
    rec.instances = undefined;
  }
}
