/**
 * `runPerf`: one perf_analyzer run — profile the model, build the data, then measure each load
 * level of the sweep (warmup, windows until stable or `-r` trials) and return the results.
 * @packageDocumentation
 */
import type { ModelConfig, TritonClient } from '@tritonserver-ts/client';
import { setTimeout as sleep } from 'node:timers/promises';

import { buildInputDataset } from './data/input-data.js';
import { PerfError } from './errors.js';
import { createLoadManager } from './load/create-load-manager.js';
import type { LoadManager } from './load/load-manager.js';
import { createPerfClient } from './load/perf-client.js';
import { IDLE_LIMIT_MS, profileLevel, type StatisticsSource } from './measure/level-profiler.js';
import type { ModelId } from './measure/server-stats.js';
import { sweepLevels } from './measure/sweep.js';
import { fetchModelProfile } from './model/model-profile.js';
import type { PerfOptions } from './options/perf-options.js';
import type { ModelProfile, PerfHooks, PerfRun } from './types.js';

/** How often the warmup checks for its last request (ms). */
const WARMUP_POLL_MS = 5;

/**
 * Runs perf_analyzer's measurement with `options`.
 *
 * Each level is measured until its last 3 windows are stable (`-s`), one of them reaches `-l`, or
 * `-r` windows ran; the sweep ends after the last level of the range, or at the first level that
 * is unstable or reached `-l` (that level is returned too, flagged — perf_analyzer leaves it out of
 * its report). The manager is stopped and the client closed whatever happens.
 *
 * ```ts
 * const run = await runPerf(perfOptions({ modelName: 'simple', url: 'localhost:8000' }));
 * console.log(run.results[0]?.client.throughput);
 * ```
 * @throws PerfError `MODEL`, `INPUT_DATA`, `SERVER` (every request of a window failed, statistics
 *   unreadable), `USAGE` (no request ended in the last windows)
 */
export async function runPerf(options: PerfOptions, hooks: PerfHooks = {}): Promise<PerfRun> {
  const startedAtMs = Date.now();
  const client = await createPerfClient(options);
  let manager: LoadManager | undefined;
  try {
    const model = await fetchModelProfile(client, options.modelName, options.modelVersion);
    const dataset = await buildInputDataset(model, options);
    const statistics = await statisticsSource(client, model);
    manager = createLoadManager({ client, model, dataset, options });
    const results: PerfRun['results'][number][] = [];
    const { signal } = hooks;
    const mode = options.load.kind;
    for (const level of sweepLevels(options.load)) {
      if (signal?.aborted === true) break;
      hooks.onProgress?.({ kind: 'level-start', mode, level });
      if (!(await warmup(manager, level, options, signal))) break;
      const running = manager;
      const result = await profileLevel(
        {
          client,
          manager,
          model,
          options,
          mode,
          statistics,
          ...(hooks.onProgress !== undefined ? { onProgress: hooks.onProgress } : {}),
          ...(hooks.onWarning !== undefined ? { onWarning: hooks.onWarning } : {}),
          ...(signal !== undefined ? { signal } : {}),
        },
        level,
        () => running.changeLevel(level, options.requestCount > 0 ? options.requestCount : undefined),
      );
      if (result === undefined) break;
      results.push(result);
      hooks.onProgress?.({ kind: 'level-done', result });
      // perf_analyzer ends the sweep at a level that is unstable or reached -l (the report
      // prints why: see report/console-report.ts levelRejection).
      if (!result.stable || result.overLatencyThreshold === true) break;
    }
    return { model, results, startedAtMs };
  } finally {
    try {
      await manager?.stop();
    } finally {
      await client.close();
    }
  }
}

/**
 * `--warmup-request-count` W: W requests at the level (concurrency capped at W, as perf_analyzer),
 * waited for and thrown away.
 * @returns false when aborted
 */
async function warmup(
  manager: LoadManager,
  level: number,
  options: PerfOptions,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const count = options.warmupRequestCount;
  if (count <= 0) return true;
  manager.takeRecords();
  const warmLevel = options.load.kind === 'concurrency' ? Math.min(level, count) : level;
  await manager.changeLevel(warmLevel, count);
  let done = 0;
  let progressAt = performance.now();
  while (done < count) {
    try {
      await sleep(WARMUP_POLL_MS, undefined, signal === undefined ? undefined : { signal });
    } catch {
      return false;
    }
    const taken = manager.takeRecords().length;
    done += taken;
    if (taken > 0) progressAt = performance.now();
    else if (manager.inFlight === 0 && performance.now() - progressAt > IDLE_LIMIT_MS) break;
  }
  return true;
}

/** Statistics of the model (and, for ensembles, of every composing model), or none without the extension. */
async function statisticsSource(
  client: TritonClient,
  model: ModelProfile,
): Promise<StatisticsSource | undefined> {
  let extensions: readonly string[];
  try {
    extensions = (await client.getServerMetadata()).extensions;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new PerfError('SERVER', `failed to get server metadata: ${message}`, { cause: error });
  }
  if (!extensions.includes('statistics')) return undefined;
  // The ensemble tree, level by level (the profile's composingModels list is flattened).
  const stepsOf = (config: ModelConfig): ModelId[] =>
    (config.ensemble_scheduling?.step ?? []).map((s) => ({
      name: s.model_name ?? '',
      version: Number(s.model_version ?? -1) === -1 ? '' : String(s.model_version),
    }));
  const composing = new Map<string, readonly ModelId[]>();
  composing.set(model.name, stepsOf(model.config));
  const queue = [...(composing.get(model.name) ?? [])];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    if (composing.has(next.name)) continue;
    const steps = stepsOf(
      await client.getModelConfig(next.name, next.version === '' ? undefined : next.version),
    );
    composing.set(next.name, steps);
    queue.push(...steps);
  }
  const ensemble = model.composingModels.length > 0;
  return {
    snapshot: () =>
      ensemble
        ? client.getInferenceStatistics()
        : client.getInferenceStatistics(model.name, model.version === '' ? undefined : model.version),
    composingOf: (name) => composing.get(name) ?? [],
  };
}
