/**
 * `--input-data`: the requests a run sends (zero, random, a JSON file or a directory of files).
 * @packageDocumentation
 */
import type { PerfOptions } from '../options/perf-options.js';
import type { InputDataset, ModelProfile } from '../types.js';

/** Builds the dataset for `model` from `options`. (Being written: issue 10.) */
export function buildInputDataset(model: ModelProfile, options: PerfOptions): Promise<InputDataset> {
  void model;
  void options;
  return Promise.reject(new Error('buildInputDataset: not implemented yet'));
}
