/**
 * Triton-exact inference statistics (the statistics extension) per model version, and the neutral
 * report every wire renders (`report.ts`).
 * @packageDocumentation
 */
export * from './custom-metrics.js';
export * from './histogram.js';
export * from './metrics-config.js';
export * from './model-statistics.js';
export * from './quantile-summary.js';
export * from './registry.js';
export * from './report.js';
