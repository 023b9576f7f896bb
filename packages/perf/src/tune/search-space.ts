/**
 * The sweep: every model configuration the tuner loads, as the model's own configuration (fetched
 * from the server) with overrides: instance count × `max_batch_size` × dynamic batching (off, or
 * on with a `preferred_batch_size` / `max_queue_delay_microseconds` choice) × onnxruntime's
 * `intra_op_thread_count`. Combinations that cannot be valid are skipped with a reason (a model
 * with `max_batch_size` 0 cannot batch; a preferred batch size above the maximum is refused by
 * Triton). Names follow Model Analyzer: `<model>_config_default`, `<model>_config_<n>`.
 * @packageDocumentation
 */
import type { ModelConfig } from '@tritonserver-ts/client';

import { PerfError } from '../errors.js';
import type { DynamicBatchingChoice, SearchSpaceOptions } from './tune-options.js';

/** A model configuration as JSON (Triton's `GET v2/models/{m}/config` shape). */
export type ModelConfigJson = Record<string, unknown>;

/** The swept settings of one configuration. */
export interface VariantSettings {
  /** Instances over all instance groups. */
  readonly instanceCount: number;
  /** The instance kind (`KIND_CPU`, `KIND_GPU`, … ; `KIND_AUTO` when the config names none). */
  readonly kind: string;
  readonly maxBatchSize: number;
  readonly dynamicBatching: DynamicBatchingChoice;
  /** `intra_op_thread_count` (undefined: not set, the backend's default). */
  readonly intraOpThreadCount: number | undefined;
}

/** One configuration of the sweep. */
export interface ConfigVariant {
  /** `<model>_config_default` or `<model>_config_<n>` (Model Analyzer's variant names). */
  readonly name: string;
  /** The model's own configuration, unchanged. */
  readonly isDefault: boolean;
  readonly settings: VariantSettings;
  /** The complete configuration to load (the override of the load call). */
  readonly config: ModelConfigJson;
}

/** A combination left out of the sweep, and why. */
export interface SkippedCombination {
  readonly settings: VariantSettings;
  readonly reason: string;
}

/** The configurations to measure and the concurrencies to measure each at. */
export interface SearchSpace {
  readonly variants: readonly ConfigVariant[];
  readonly skipped: readonly SkippedCombination[];
  readonly concurrency: readonly number[];
}

function usage(message: string): PerfError {
  return new PerfError('USAGE', message);
}

function checkIntegers(name: string, values: readonly number[], min: number): void {
  for (const v of values) {
    if (!Number.isSafeInteger(v) || v < min) {
      throw usage(`${name}: ${String(v)} is not an integer >= ${String(min)}`);
    }
  }
}

/** Sorted, without duplicates. */
function distinct(values: readonly number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

/** Validates the space's values. @throws PerfError `USAGE` */
export function validateSearchSpace(space: SearchSpaceOptions): void {
  if (space.concurrency.length === 0) throw usage('the concurrency list is empty');
  checkIntegers('concurrency', space.concurrency, 1);
  checkIntegers('instance count', space.instanceCounts, 1);
  checkIntegers('max batch size', space.maxBatchSizes, 1);
  checkIntegers('intra op thread count', space.intraOpThreadCounts, 1);
  if (!space.searchDisabled) {
    if (space.instanceCounts.length === 0) throw usage('the instance count list is empty');
    if (space.dynamicBatching.length === 0) throw usage('the dynamic batching list is empty');
  }
  for (const choice of space.dynamicBatching) {
    if (!choice.enabled) continue;
    checkIntegers('preferred batch size', choice.preferredBatchSize, 1);
    checkIntegers('max queue delay (µs)', [choice.maxQueueDelayMicroseconds], 0);
  }
  if (!Number.isSafeInteger(space.maxConfigs) || space.maxConfigs < 1) {
    throw usage(`max configs: ${String(space.maxConfigs)} is not an integer >= 1`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function numberOf(value: unknown, fallback: number): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return Number(value);
  return fallback;
}

/** True for a model the onnxruntime backend serves (the only one that reads `intra_op_thread_count`). */
export function isOnnxRuntimeModel(config: ModelConfig): boolean {
  return config.backend === 'onnxruntime' || config.platform === 'onnxruntime_onnx';
}

/** The settings a configuration has (what the sweep would call it). */
export function settingsOf(config: ModelConfig): VariantSettings {
  const groups = config.instance_group ?? [];
  const instanceCount = groups.length === 0 ? 1 : groups.reduce((sum, g) => sum + numberOf(g?.count, 1), 0);
  const kind = groups[0]?.kind ?? 'KIND_AUTO';
  const db = config.dynamic_batching;
  const threads = config.parameters?.['intra_op_thread_count']?.string_value;
  return {
    instanceCount,
    kind,
    maxBatchSize: numberOf(config.max_batch_size, 0),
    dynamicBatching:
      db === undefined
        ? { enabled: false }
        : {
            enabled: true,
            preferredBatchSize: (db.preferred_batch_size ?? []).map((v) => numberOf(v, 0)),
            maxQueueDelayMicroseconds: numberOf(db.max_queue_delay_microseconds, 0),
          },
    intraOpThreadCount:
      threads !== undefined && /^\s*\d+\s*$/.test(threads) ? Number(threads.trim()) : undefined,
  };
}

/** Builds the configuration of `settings` from `base` (a deep copy; `base` is not changed). */
export function applySettings(base: ModelConfig, settings: VariantSettings): ModelConfigJson {
  const config = structuredClone(base) as ModelConfigJson;
  const first = Array.isArray(base.instance_group) ? base.instance_group[0] : undefined;
  const group: Record<string, unknown> = isObject(first) ? { ...first } : {};
  group['count'] = settings.instanceCount;
  if (settings.kind !== 'KIND_AUTO' || group['kind'] !== undefined) group['kind'] = settings.kind;
  config['instance_group'] = [group];
  config['max_batch_size'] = settings.maxBatchSize;
  const db = settings.dynamicBatching;
  if (db.enabled) {
    const previous = isObject(config['dynamic_batching']) ? config['dynamic_batching'] : {};
    config['dynamic_batching'] = {
      ...previous,
      preferred_batch_size: [...db.preferredBatchSize],
      max_queue_delay_microseconds: db.maxQueueDelayMicroseconds,
    };
  } else {
    delete config['dynamic_batching'];
  }
  if (settings.intraOpThreadCount !== undefined) {
    const parameters = isObject(config['parameters']) ? { ...config['parameters'] } : {};
    parameters['intra_op_thread_count'] = { string_value: String(settings.intraOpThreadCount) };
    config['parameters'] = parameters;
  }
  return config;
}

/** A key that is equal for equal settings. */
export function settingsKey(s: VariantSettings): string {
  const db = s.dynamicBatching;
  const dbKey = db.enabled
    ? `on:${db.preferredBatchSize.join('/')}:${String(db.maxQueueDelayMicroseconds)}`
    : 'off';
  return `${String(s.instanceCount)}|${s.kind}|${String(s.maxBatchSize)}|${dbKey}|${String(s.intraOpThreadCount ?? '-')}`;
}

/**
 * `s` as Triton normalizes it when loading: dynamic batching without preferred batch sizes gets
 * `preferred_batch_size: [max_batch_size]`.
 */
export function normalizedSettings(s: VariantSettings): VariantSettings {
  const db = s.dynamicBatching;
  if (!db.enabled || db.preferredBatchSize.length > 0 || s.maxBatchSize <= 0) return s;
  return { ...s, dynamicBatching: { ...db, preferredBatchSize: [s.maxBatchSize] } };
}

/**
 * True when a served configuration's settings are `expected` once normalized as Triton does (see
 * {@link normalizedSettings}); the kind is only compared when the sweep set one (a server picks the
 * kind of a config that names none).
 */
export function sameSettings(expected: VariantSettings, served: VariantSettings): boolean {
  const kind = expected.kind === 'KIND_AUTO' ? served.kind : expected.kind;
  return settingsKey(normalizedSettings({ ...expected, kind })) === settingsKey(normalizedSettings(served));
}

/**
 * Every configuration of the sweep for a model whose configuration is `base`: the default first,
 * then the combinations in order (instance count, max batch size, dynamic batching, threads).
 * @throws PerfError `USAGE` for a bad space or one larger than `maxConfigs`; `TUNE` for a model the
 * tuner cannot vary (an ensemble)
 */
export function enumerateSearchSpace(base: ModelConfig, space: SearchSpaceOptions): SearchSpace {
  validateSearchSpace(space);
  if (base.ensemble_scheduling !== undefined || base.platform === 'ensemble') {
    throw new PerfError(
      'TUNE',
      `model '${base.name}' is an ensemble: its composing models are what can be tuned (Model Analyzer searches ensembles in its quick mode, which model-analyzer-ts does not have)`,
    );
  }
  const defaults = settingsOf(base);
  const variants: ConfigVariant[] = [
    {
      name: `${base.name}_config_default`,
      isDefault: true,
      settings: defaults,
      config: structuredClone(base),
    },
  ];
  const skipped: SkippedCombination[] = [];
  const concurrency = distinct(space.concurrency);
  if (space.searchDisabled) return { variants, skipped, concurrency };

  const canBatch = defaults.maxBatchSize > 0;
  const sequence = base.sequence_batching !== undefined;
  const batchSizes = canBatch ? distinct(space.maxBatchSizes) : [0];
  const threads: (number | undefined)[] =
    isOnnxRuntimeModel(base) && space.intraOpThreadCounts.length > 0
      ? distinct(space.intraOpThreadCounts)
      : [defaults.intraOpThreadCount];
  const seen = new Set<string>([settingsKey(normalizedSettings(defaults))]);
  for (const instanceCount of distinct(space.instanceCounts)) {
    for (const maxBatchSize of batchSizes) {
      for (const choice of space.dynamicBatching) {
        for (const intraOpThreadCount of threads) {
          const dynamicBatching: DynamicBatchingChoice = sequence ? defaults.dynamicBatching : choice;
          const settings: VariantSettings = {
            instanceCount,
            kind: defaults.kind,
            maxBatchSize,
            dynamicBatching,
            intraOpThreadCount,
          };
          const key = settingsKey(normalizedSettings(settings));
          if (seen.has(key)) continue;
          seen.add(key);
          const reason = invalidReason(settings, canBatch);
          if (reason !== undefined) {
            skipped.push({ settings, reason });
            continue;
          }
          variants.push({
            name: `${base.name}_config_${String(variants.length - 1)}`,
            isDefault: false,
            settings,
            config: applySettings(base, settings),
          });
        }
      }
    }
  }
  if (variants.length > space.maxConfigs) {
    throw usage(
      `the sweep has ${String(variants.length)} configurations, more than the limit of ${String(space.maxConfigs)}: narrow the instance counts, batch sizes or dynamic batching choices, or raise the limit`,
    );
  }
  return { variants, skipped, concurrency };
}

function invalidReason(s: VariantSettings, canBatch: boolean): string | undefined {
  const db = s.dynamicBatching;
  if (!db.enabled) return undefined;
  if (!canBatch) return 'max_batch_size 0: the model cannot batch, so dynamic batching does not apply';
  const over = db.preferredBatchSize.filter((p) => p > s.maxBatchSize);
  if (over.length > 0) {
    return `preferred batch size ${over.join(', ')} is larger than max_batch_size ${String(s.maxBatchSize)}`;
  }
  return undefined;
}

/** Short human description: "2 CPU instances, max batch 4, dynamic batching (preferred [4], delay 100 µs)". */
export function describeSettings(s: VariantSettings): string {
  const kind = s.kind === 'KIND_AUTO' ? '' : `${s.kind.replace(/^KIND_/, '')} `;
  const parts = [`${String(s.instanceCount)} ${kind}instance${s.instanceCount === 1 ? '' : 's'}`];
  parts.push(s.maxBatchSize === 0 ? 'no batching (max_batch_size 0)' : `max batch ${String(s.maxBatchSize)}`);
  const db = s.dynamicBatching;
  if (db.enabled) {
    const extra: string[] = [];
    if (db.preferredBatchSize.length > 0) extra.push(`preferred [${db.preferredBatchSize.join(', ')}]`);
    if (db.maxQueueDelayMicroseconds > 0) extra.push(`delay ${String(db.maxQueueDelayMicroseconds)} µs`);
    parts.push(`dynamic batching${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`);
  } else if (s.maxBatchSize > 0) {
    parts.push('dynamic batching off');
  }
  if (s.intraOpThreadCount !== undefined) {
    parts.push(`${String(s.intraOpThreadCount)} intra-op thread${s.intraOpThreadCount === 1 ? '' : 's'}`);
  }
  return parts.join(', ');
}

/** Model Analyzer's "Instance Group" column: `2:CPU`. */
export function instanceGroupLabel(s: VariantSettings): string {
  return `${String(s.instanceCount)}:${s.kind.replace(/^KIND_/, '')}`;
}

/** The resources a configuration holds, for ties: instances × intra-op threads. */
export function resourceUnits(s: VariantSettings): number {
  return s.instanceCount * (s.intraOpThreadCount ?? 1);
}
