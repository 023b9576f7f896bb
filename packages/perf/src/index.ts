/**
 * `@tritonserver-ts/perf`: perf_analyzer and a model-analyzer-style tuner for Triton and the
 * embedded server, as a library; the bins are `perf-analyzer-ts` and `model-analyzer-ts`.
 * @packageDocumentation
 */
export * from './options/perf-options.js';
export type * from './types.js';
export type { LoadContext, LoadManager } from './load/load-manager.js';
