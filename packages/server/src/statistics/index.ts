/**
 * Triton-exact inference statistics (the statistics extension) per model version.
 * @packageDocumentation
 */
export * from './model-statistics.js';
export * from './registry.js';
export * from './json.js';
