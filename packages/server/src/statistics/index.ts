/**
 * Triton-exact inference statistics (the statistics extension) per model version, and the neutral
 * report every wire renders (`report.ts`).
 * @packageDocumentation
 */
export * from './model-statistics.js';
export * from './registry.js';
export * from './report.js';
