/**
 * `runPerf`: one perf_analyzer run (profile the model, build the data, then measure each load level).
 * @packageDocumentation
 */
import type { PerfOptions } from './options/perf-options.js';
import type { PerfHooks, PerfRun } from './types.js';

/** Runs perf_analyzer's measurement with `options`. (Being written: issue 10.) */
export function runPerf(options: PerfOptions, hooks: PerfHooks = {}): Promise<PerfRun> {
  void options;
  void hooks;
  return Promise.reject(new Error('runPerf: not implemented yet'));
}
