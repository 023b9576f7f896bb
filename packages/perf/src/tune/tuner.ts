/**
 * `tune(options)`: Model Analyzer's brute search against a running server. For each configuration
 * of the sweep: load it (repository load API with a config override), then measure it with the
 * perf engine at each concurrency (short windows), and finally put the model's own configuration
 * back, also after an error or an abort. The best measurement is the highest throughput under the
 * constraints (see `select.ts`).
 * @packageDocumentation
 */
import type { ModelConfig, TritonClient } from '@tritonserver-ts/client';

import { isPerfError, PerfError } from '../errors.js';
import { createPerfClient } from '../load/perf-client.js';
import { perfOptions } from '../options/perf-options.js';
import { runPerf } from '../perf.js';
import type { PerfHooks, PerfProgress, PerfRun } from '../types.js';
import type { ConfigClient } from './apply-config.js';
import { applyConfig, restoreConfig } from './apply-config.js';
import type { ConfigVariant, SearchSpace } from './search-space.js';
import { enumerateSearchSpace } from './search-space.js';
import type { ConfigStanding, TuneMeasurement } from './select.js';
import { measurementFrom, rankConfigs, selectBest } from './select.js';
import type { TuneOptions } from './tune-options.js';

/** What happened to one configuration. */
export interface ConfigOutcome {
  readonly variant: ConfigVariant;
  readonly measurements: readonly TuneMeasurement[];
  /** Why it was not (fully) measured: the load failed, or a measurement failed. */
  readonly error: string | undefined;
  /** Concurrencies left out after a measurement went over the latency budget (early exit). */
  readonly skippedConcurrency: readonly number[];
}

/** The result of a tuning run. */
export interface TuneResult {
  readonly options: TuneOptions;
  readonly modelName: string;
  /** The configuration the model had before the run (and has again after it). */
  readonly originalConfig: ModelConfig;
  readonly space: SearchSpace;
  readonly configs: readonly ConfigOutcome[];
  /** Every measurement, in the order taken. */
  readonly measurements: readonly TuneMeasurement[];
  /** Configurations ranked (the winner's first). */
  readonly ranking: readonly ConfigStanding[];
  /** The winning measurement (undefined: nothing satisfied the constraints). */
  readonly best: TuneMeasurement | undefined;
  /** The winning configuration (what `best/config.pbtxt` holds). */
  readonly bestVariant: ConfigVariant | undefined;
  /** Wall-clock start (ms since the epoch) and the whole run's duration. */
  readonly startedAtMs: number;
  readonly durationMs: number;
  /** The run was aborted through the signal; the measurements so far are reported. */
  readonly aborted: boolean;
  /** Putting the original configuration back failed (the server may still serve another one). */
  readonly restoreError: string | undefined;
}

/** Progress of a tuning run. */
export type TuneProgress =
  | { readonly kind: 'space'; readonly space: SearchSpace }
  | {
      readonly kind: 'config-start';
      readonly variant: ConfigVariant;
      /** 1-based. */
      readonly index: number;
      readonly total: number;
    }
  | { readonly kind: 'config-error'; readonly variant: ConfigVariant; readonly error: string }
  | { readonly kind: 'measurement'; readonly measurement: TuneMeasurement }
  | { readonly kind: 'perf'; readonly variant: ConfigVariant; readonly event: PerfProgress }
  /** A perf warning (e.g. perf_analyzer's "Failed to obtain stable measurement …"). */
  | { readonly kind: 'warning'; readonly variant: ConfigVariant; readonly message: string }
  | { readonly kind: 'restored' };

/** Optional hooks of {@link tune}. */
export interface TuneHooks {
  readonly onProgress?: (event: TuneProgress) => void;
  /** Aborts the run: the current measurement stops, the original configuration is put back. */
  readonly signal?: AbortSignal;
  /** The client for the load and config calls (default: one for the options' url and protocol, closed at the end). */
  readonly client?: ConfigClient;
  /** The perf engine (default {@link runPerf}). */
  readonly runPerf?: typeof runPerf;
}

/** Error codes that would fail every configuration the same way: the run stops. */
const FATAL_CODES = new Set(['USAGE', 'INPUT_DATA', 'SHARED_MEMORY']);

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs the sweep of `options` and returns every measurement and the winner. The model must be
 * loaded and the server must allow explicit model control.
 * @throws PerfError `MODEL` when the model's configuration cannot be read; `USAGE` for a bad space;
 * `TUNE` for an ensemble; a perf error that would fail every configuration (`USAGE`, `INPUT_DATA`)
 */
export async function tune(options: TuneOptions, hooks: TuneHooks = {}): Promise<TuneResult> {
  const startedAtMs = Date.now();
  const started = process.hrtime.bigint();
  const emit = (event: TuneProgress): void => hooks.onProgress?.(event);
  const perf = hooks.runPerf ?? runPerf;
  const isAborted = (): boolean => hooks.signal?.aborted === true;
  let owned: TritonClient | undefined;
  const client: ConfigClient =
    hooks.client ??
    (owned = await createPerfClient(
      perfOptions({
        ...options.perf,
        modelName: options.modelName,
        url: options.url,
        protocol: options.protocol,
      }),
    ));
  try {
    let originalConfig: ModelConfig;
    try {
      originalConfig = await client.getModelConfig(options.modelName, options.modelVersion);
    } catch (error) {
      throw new PerfError(
        'MODEL',
        `cannot read the configuration of model '${options.modelName}': ${message(error)}`,
        { cause: error },
      );
    }
    const space = enumerateSearchSpace(originalConfig, options.space);
    emit({ kind: 'space', space });

    const configs: ConfigOutcome[] = [];
    const measurements: TuneMeasurement[] = [];
    let changed = false;
    let aborted = false;
    let restoreError: string | undefined;
    try {
      for (const [i, variant] of space.variants.entries()) {
        if (isAborted()) {
          aborted = true;
          break;
        }
        emit({ kind: 'config-start', variant, index: i + 1, total: space.variants.length });
        const outcome = await measureVariant(variant, i === 0);
        configs.push(outcome);
        measurements.push(...outcome.measurements);
        if (outcome.error !== undefined) emit({ kind: 'config-error', variant, error: outcome.error });
        if (isAborted()) aborted = true;
      }
    } finally {
      if (changed) {
        try {
          await restoreConfig(
            client,
            options.modelName,
            options.modelVersion,
            originalConfig,
            options.readyTimeoutMs,
          );
          emit({ kind: 'restored' });
        } catch (error) {
          restoreError = message(error);
        }
      }
    }

    const best = selectBest(measurements, options.tieTolerancePercent, options.requireStable);
    return {
      options,
      modelName: options.modelName,
      originalConfig,
      space,
      configs,
      measurements,
      ranking: rankConfigs(measurements, options.tieTolerancePercent, options.requireStable),
      best,
      bestVariant: best === undefined ? undefined : space.variants.find((v) => v.name === best.variant),
      startedAtMs,
      durationMs: Number(process.hrtime.bigint() - started) / 1e6,
      aborted,
      restoreError,
    };

    async function measureVariant(variant: ConfigVariant, first: boolean): Promise<ConfigOutcome> {
      const taken: TuneMeasurement[] = [];
      // The default configuration is what the server serves at the start: measured as it is.
      if (!(variant.isDefault && first)) {
        changed = true;
        try {
          await applyConfig(client, options.modelName, options.modelVersion, variant.config, {
            expected: variant.settings,
            readyTimeoutMs: options.readyTimeoutMs,
          });
        } catch (error) {
          return { variant, measurements: taken, error: message(error), skippedConcurrency: [] };
        }
      }
      const concurrency = space.concurrency;
      for (const [j, level] of concurrency.entries()) {
        if (isAborted()) break;
        let run: PerfRun;
        try {
          run = await perf(
            perfOptions({
              ...options.perf,
              modelName: options.modelName,
              modelVersion: options.modelVersion,
              url: options.url,
              protocol: options.protocol,
              load: { kind: 'concurrency', range: { start: level, end: level, step: 1 } },
            }),
            perfHooks(variant),
          );
        } catch (error) {
          if (isPerfError(error) && FATAL_CODES.has(error.code)) throw error;
          return { variant, measurements: taken, error: message(error), skippedConcurrency: [] };
        }
        const result = run.results[0];
        if (result === undefined) break; // aborted before the level finished
        const m = measurementFrom(
          variant.name,
          variant.settings,
          options.perf.batchSize ?? 1,
          result,
          options,
        );
        taken.push(m);
        emit({ kind: 'measurement', measurement: m });
        const budget = options.latencyBudgetMs;
        if (options.earlyExit && budget !== undefined && m.latencyMs[options.latencyMetric] > budget) {
          return {
            variant,
            measurements: taken,
            error: undefined,
            skippedConcurrency: concurrency.slice(j + 1),
          };
        }
      }
      return { variant, measurements: taken, error: undefined, skippedConcurrency: [] };
    }

    function perfHooks(variant: ConfigVariant): PerfHooks {
      return {
        onProgress: (event) => emit({ kind: 'perf', variant, event }),
        onWarning: (warning) => emit({ kind: 'warning', variant, message: warning }),
        ...(hooks.signal === undefined ? {} : { signal: hooks.signal }),
      };
    }
  } finally {
    await owned?.close().catch(() => undefined);
  }
}
